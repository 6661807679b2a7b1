"""Task events: what a write tells the subscribers, and how a subscriber finds the task it is about.

Writers call `publish_task` after their transaction commits. Publishing never waits on a subscriber and never
fails a write: a publisher that fails is logged.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import orjson

from models import AgentTask
from models.record.vocabulary import TaskStatus
from permissions.access import ancestor_ids

log = logging.getLogger("agentlog.events")

EVENTS = (
    "AgentTaskStarted", "AgentTaskFinished", "AgentTaskFailed", "AgentTaskStopped", "AgentWorkErased",
    "AgentTaskStopAsked", "AgentTaskBudgetCrossed",
)
ENDED_EVENTS = {
    TaskStatus.DONE: "AgentTaskFinished", TaskStatus.FAILED: "AgentTaskFailed", TaskStatus.STOPPED: "AgentTaskStopped",
}
"""The event told when a task ends, by how it ended."""
SNAPSHOT_FIELDS = (
    "id", "root_id", "parent_id", "path", "depth", "sequence", "agent", "skill", "cause", "status",
    "started_at", "ended_at", "requester_id", "actor_id", "session",
)
TIMES = ("started_at", "ended_at")
IDS = ("id", "root_id", "parent_id")


@dataclass(frozen=True, slots=True)
class TaskNotice:
    """One event about one task, small enough to travel as a PostgreSQL notification.

    `task` holds the task's figures as they stood, so an event about work that was since forgotten can still be
    told to those who could read it.
    """

    event: str
    tenant: str
    at: datetime
    task: dict[str, Any]
    share: int | None = None
    """For AgentTaskBudgetCrossed: the share of the task's limit passed, in percent."""

    @property
    def task_id(self) -> uuid.UUID:
        return self.task["id"]

    def is_under(self, top: uuid.UUID) -> bool:
        return top in ancestor_ids(self.task["path"])

    def to_json(self) -> bytes:
        return notice_json(self.event, self.tenant, self.at, _figures_json(self.task), self.share)

    def to_text(self) -> str:
        return self.to_json().decode()

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> TaskNotice:
        task = dict(raw["task"])
        for key in IDS:
            task[key] = uuid.UUID(task[key]) if task.get(key) else None
        for key in TIMES:
            task[key] = datetime.fromisoformat(task[key]) if task.get(key) else None
        return cls(event=raw["event"], tenant=raw["tenant"], at=datetime.fromisoformat(raw["at"]), task=task,
                   share=raw.get("share"))

    def snapshot_row(self) -> AgentTask:
        """The task as it stood when the event happened, unsaved."""
        return AgentTask(tenant=self.tenant, **self.task)


def event_time(event: str, task: AgentTask) -> datetime:
    if event == "AgentTaskStarted" and task.started_at is not None:
        return task.started_at
    if event in EVENTS[1:4] and task.ended_at is not None:
        return task.ended_at
    return datetime.now(timezone.utc)


def notice_of(event: str, task: AgentTask, share: int | None = None) -> TaskNotice:
    return TaskNotice(event=event, tenant=task.tenant, at=event_time(event, task), task=snapshot_of(task), share=share)


def snapshot_of(task: AgentTask) -> dict[str, Any]:
    return {name: getattr(task, name) for name in SNAPSHOT_FIELDS}


def notice_json(event: str, tenant: str, at: datetime, figures: bytes, share: int | None = None) -> bytes:
    """A notice as JSON, given its task's figures as JSON; ids and times as their text, as `str` and `isoformat`
    write them (a driver's own id type, which orjson does not know, through `str`)."""
    head = orjson.dumps({"event": event, "tenant": tenant, "at": at, **({"share": share} if share else {})},
                        default=str)
    return head[:-1] + b',"task":' + figures + b"}"


def _figures_json(figures: dict[str, Any]) -> bytes:
    return orjson.dumps(figures, default=str)


def notices_json(events: list[tuple[str, AgentTask]]) -> list[bytes]:
    """Events published together, each as its notice's JSON; each task's figures are taken and written once,
    for all its events."""
    figures_of: dict[int, bytes] = {}
    notices = []
    for event, task in events:
        figures = figures_of.get(id(task))
        if figures is None:
            figures = figures_of[id(task)] = _figures_json(snapshot_of(task))
        notices.append(notice_json(event, task.tenant, event_time(event, task), figures))
    return notices


async def task_of_notice(notice: TaskNotice) -> AgentTask:
    """The task as it is now, or as it stood at the event when it no longer exists."""
    row = await AgentTask.filter(id=notice.task_id, tenant=notice.tenant).first()
    return row if row is not None else notice.snapshot_row()


Publisher = Callable[[str, AgentTask], Awaitable[None]]
ManyPublisher = Callable[[list[tuple[str, AgentTask]]], Awaitable[None]]
_publishers: list[Publisher] = []
_many: dict[Publisher, ManyPublisher] = {}


def add_publisher(publisher: Publisher, many: ManyPublisher | None = None) -> None:
    """`many`, when given, publishes a list of events at once, in order (one round trip instead of one each)."""
    _publishers.append(publisher)
    if many is not None:
        _many[publisher] = many


def remove_publisher(publisher: Publisher) -> None:
    if publisher in _publishers:
        _publishers.remove(publisher)
    _many.pop(publisher, None)


async def publish_task(event: str, task: AgentTask, share: int | None = None) -> None:
    """`share` travels with AgentTaskBudgetCrossed only, to publishers that take it as a keyword."""
    if event not in EVENTS:
        raise ValueError(f"{event!r} is not a task event; the events are {', '.join(EVENTS)}.")
    for publisher in list(_publishers):
        try:
            await (publisher(event, task) if share is None else publisher(event, task, share=share))
        except Exception:
            log.exception("could not publish %s for task %s", event, task.id)


async def publish_tasks(events: list[tuple[str, AgentTask]]) -> None:
    """Many events, in order, as `publish_task` publishes each."""
    for event, _ in events:
        if event not in EVENTS:
            raise ValueError(f"{event!r} is not a task event; the events are {', '.join(EVENTS)}.")
    for publisher in list(_publishers):
        try:
            many = _many.get(publisher)
            if many is not None:
                await many(events)
            else:
                for event, task in events:
                    await publisher(event, task)
        except Exception:
            log.exception("could not publish %d events", len(events))
