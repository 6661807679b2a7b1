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
from tortoise.transactions import in_transaction

from models.db import placeholders
from resolvers.events import replicas
from resolvers.events.notices import event_time, snapshot_of
from resolvers.webhooks import sender
from resolvers.webhooks.wanted import CHAIN_BROKEN, Hooks, hooks_column, hooks_of

COLUMNS = ("id", "tenant", "webhook_id", "event", "at", "body", "attempts", "due_at")
NAMES = ", ".join(f'"{column}"' for column in COLUMNS)


def insert(rows: int) -> str:
    """One INSERT of `rows` deliveries."""
    width = len(COLUMNS)
    values = ", ".join("(" + ", ".join(f"${r * width + c}" for c in range(1, width + 1)) + ")" for r in range(rows))
    return f'INSERT INTO "webhook_delivery" ({NAMES}) VALUES {values}'


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


def delivery_id(hook: uuid.UUID, once_as: str | None) -> str:
    return str(uuid.uuid4() if once_as is None else uuid.uuid5(hook, once_as))


async def tell_broken(tenant: str, root_id: uuid.UUID, task_id: uuid.UUID, check: Any) -> None:
    """CHAIN_BROKEN, for a check that found a fault in a tree: told once per tree, line and reason, however
    often the tree is checked."""
    with replicas.on_primary():
        await _owe_broken(tenant, root_id, task_id, check)


async def _owe_broken(tenant: str, root_id: uuid.UUID, task_id: uuid.UUID, check: Any) -> None:
    async with in_transaction() as conn:
        hooks = await read_hooks(conn, tenant)
        if not hooks.want(CHAIN_BROKEN):
            return
        reason = getattr(check.reason, "value", check.reason)
        data = {"tenant": tenant, "root": str(root_id), "task": str(task_id), "brokenAt": check.broken_at,
                "reason": reason, "problem": check.problem}
        owed = Owed(CHAIN_BROKEN, datetime.now(timezone.utc), data)
        await owe(conn, tenant, hooks, [owed], once_as=f"{CHAIN_BROKEN}/{root_id}/{check.broken_at}/{reason}")


async def read_hooks(conn: Any, tenant: str) -> Hooks:
    """The tenant's webhooks, read on their own: for the writes that send no statement the read could ride on
    (the sweeps, erasure, a check)."""
    sql = f'SELECT {hooks_column(conn.capabilities.dialect, 1)} AS "hooks"'
    rows = await conn.execute_query_dict(placeholders(conn, sql), [tenant])
    return hooks_of(rows[0]["hooks"] if rows else None)


async def owe(conn: Any, tenant: str, hooks: Hooks, owed: Iterable[Owed], once_as: str | None = None) -> int:
    """Writes a delivery for each webhook wanting each event, in one statement; returns how many. Given
    `once_as`, each delivery's id is derived from it and its webhook, and one written before is left as it was."""
    now = datetime.now(timezone.utc)
    rows = [(delivery_id(hook, once_as), tenant, str(hook), item.event, item.at, item.body(), 0, now)
            for item in owed for hook in hooks.of(item.event)]
    if rows:
        sql = insert(len(rows)) + (" ON CONFLICT DO NOTHING" if once_as is not None else "")
        await conn.execute_query(placeholders(conn, sql), [value for row in rows for value in row])
        sender.wake()
    return len(rows)
