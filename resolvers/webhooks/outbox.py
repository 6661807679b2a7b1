"""The outbox: each event a webhook wants is written as a delivery row on the transaction's own connection, so it
commits with the line or change that caused it, or not at all; the sender (`sender.py`) delivers what committed.

A write whose tenant has no webhook wanting its events sends nothing here."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import orjson

from models.db import placeholders
from resolvers.events.notices import event_time, snapshot_of
from resolvers.webhooks import sender
from resolvers.webhooks.wanted import Hooks

COLUMNS = ("id", "tenant", "webhook_id", "event", "at", "body", "attempts", "due_at")
INSERT = (f'INSERT INTO "webhook_delivery" ({", ".join(f"{chr(34)}{c}{chr(34)}" for c in COLUMNS)}) '
          f'VALUES ({", ".join(f"${n}" for n in range(1, len(COLUMNS) + 1))})')


@dataclass(frozen=True, slots=True)
class Owed:
    """One event as its webhooks will be told it: its name, when it happened, and what it says."""

    event: str
    at: datetime
    data: dict[str, Any]

    def body(self) -> str:
        """The JSON body Standard Webhooks sends: `{type, timestamp, data}`."""
        return orjson.dumps({"type": self.event, "timestamp": self.at, "data": self.data}, default=str).decode()


def task_event(event: str, task: Any, share: int | None = None, at: datetime | None = None) -> Owed:
    """A task event as its subscribers hear it: the task's figures as they stood, and the share crossed for
    AgentTaskBudgetCrossed."""
    data: dict[str, Any] = {"tenant": task.tenant, "task": snapshot_of(task)}
    if share is not None:
        data["share"] = share
    return Owed(event, at or event_time(event, task), data)


async def owe(conn: Any, tenant: str, hooks: Hooks, owed: Iterable[Owed]) -> int:
    """Writes a delivery for each webhook wanting each event, in one statement; returns how many."""
    now = datetime.now(timezone.utc)
    rows = [(str(uuid.uuid4()), tenant, str(hook), item.event, item.at, item.body(), 0, now)
            for item in owed for hook in hooks.of(item.event)]
    if rows:
        await conn.execute_many(placeholders(conn, INSERT), rows)
        sender.wake()
    return len(rows)
