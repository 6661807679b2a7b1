"""Task events published to subscribers. Delivery is wired by the server; writers never wait on it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from models import AgentTask

Publisher = Callable[[str, AgentTask], Awaitable[None]]
_publishers: list[Publisher] = []


def add_publisher(publisher: Publisher) -> None:
    _publishers.append(publisher)


def remove_publisher(publisher: Publisher) -> None:
    if publisher in _publishers:
        _publishers.remove(publisher)


async def publish_task(event: str, task: AgentTask) -> None:
    for publisher in list(_publishers):
        await publisher(event, task)
