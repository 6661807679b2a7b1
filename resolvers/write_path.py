"""The one write path: lock the tree, check, hash, append, move the head, in one transaction.

Every kit mutation goes through `kit_write`, which also honours idempotency keys.
Erasure is the only other writer.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from typing import Any

from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from models import AgentTask, IdempotencyKey, TraceEvent
from models.chain import Line, compact_json, seal
from permissions.principal import Principal
from resolvers import checks
from resolvers.errors import Conflict, Forbidden, NotFound, Unauthenticated


def now() -> datetime:
    return datetime.now(timezone.utc)


def require_kit(principal: Principal | None) -> Principal:
    if principal is None:
        raise Unauthenticated("A bearer token is required.")
    if not principal.kit:
        raise Forbidden("Only a kit token may write the record.")
    return principal


def fingerprint(operation: str, data: dict[str, Any]) -> str:
    body = {"operation": operation, "input": data}
    return hashlib.sha256(compact_json(body).encode("utf-8")).hexdigest()


Body = Callable[[Principal, Any], Awaitable[Any]]
Reload = Callable[[str, str], Awaitable[Any]]


async def kit_write(
    principal: Principal | None,
    operation: str,
    data: dict[str, Any],
    body: Body,
    result_id: Callable[[Any], str],
    reload: Reload,
) -> Any:
    """Runs `body(kit, conn)` in one transaction; a retried idempotency key returns the first answer."""
    kit = require_kit(principal)
    key = checks.name("idempotencyKey", data.pop("idempotency_key", None))
    print_ = fingerprint(operation, data)
    if key is not None:
        first = await _replay(kit.tenant, key, print_, reload)
        if first is not None:
            return first
    try:
        async with in_transaction() as conn:
            result = await body(kit, conn)
            if key is not None:
                await IdempotencyKey.create(
                    tenant=kit.tenant, key=key, fingerprint=print_, result_id=result_id(result), using_db=conn
                )
    except IntegrityError:
        if key is None:
            raise
        first = await _replay(kit.tenant, key, print_, reload)
        if first is None:
            raise
        return first
    return result


async def _replay(tenant: str, key: str, print_: str, reload: Reload) -> Any:
    found = await IdempotencyKey.filter(tenant=tenant, key=key).first()
    if found is None:
        return None
    if found.fingerprint != print_:
        raise Conflict("idempotencyKey: this key was already used with a different input.")
    return await reload(tenant, found.result_id)


async def task_of(tenant: str, field: str, task_id: str, conn: Any) -> AgentTask:
    """The task in the caller's tenant; another tenant's task is as unknown as one that never existed."""
    tid = checks.uuid_of(field, task_id)
    task = await AgentTask.filter(id=tid, tenant=tenant).using_db(conn).first()
    if task is None:
        raise NotFound(f"{field}: no task {tid}.")
    return task


async def lock_tree(root_id: uuid.UUID, conn: Any) -> AgentTask:
    """Locks the tree's root row until the transaction ends; appends to one tree queue here."""
    return await AgentTask.filter(id=root_id).using_db(conn).select_for_update().get()


async def running_task(tenant: str, field: str, task_id: str, conn: Any) -> tuple[AgentTask, AgentTask]:
    """The task, re-read under its tree's lock, and the locked root. An ended task takes no more lines."""
    task = await task_of(tenant, field, task_id, conn)
    root = await lock_tree(task.root_id, conn)
    if task.id != root.id:
        task = await AgentTask.filter(id=task.id).using_db(conn).get()
    else:
        task = root
    if task.status != "RUNNING":
        raise Conflict(f"{field}: task {task.id} has ended ({task.status}); it takes no more lines.")
    return task, root


def line_of(event: TraceEvent) -> Line:
    return Line(
        seq=event.seq,
        kind=event.kind,
        task=str(event.task_id),
        at=event.at,
        summary=event.summary,
        payload=event.payload,
        summary_salt=event.summary_salt,
        payload_salt=event.payload_salt,
        summary_hash=event.summary_hash,
        payload_hash=event.payload_hash,
        prev_hash=event.prev_hash,
        hash=event.hash,
        model=event.model,
        route_rule=event.route_rule,
        attempts=event.attempts,
        cost_micros=event.cost_micros,
        input_tokens=event.input_tokens,
        output_tokens=event.output_tokens,
        tool=event.tool,
        tool_call_id=event.tool_call_id,
        is_error=event.is_error,
        duration_ms=event.duration_ms,
        erased=event.erased_at is not None,
        content_erased=event.content_erased_at is not None,
    )


async def append(root: AgentTask, event: TraceEvent, conn: Any) -> TraceEvent:
    """Seals the line after the tree's head, stores it and moves the head, inside the caller's transaction."""
    event.tenant = root.tenant
    event.root_id = root.id
    event.seq = root.chain_length + 1
    line = seal(line_of_new(event), root.chain_head)
    event.summary_salt, event.payload_salt = line.summary_salt, line.payload_salt
    event.summary_hash, event.payload_hash = line.summary_hash, line.payload_hash
    event.prev_hash, event.hash = line.prev_hash, line.hash
    await event.save(using_db=conn)
    root.chain_length, root.chain_head = event.seq, event.hash
    await AgentTask.filter(id=root.id).using_db(conn).update(chain_length=root.chain_length, chain_head=root.chain_head)
    return event


def line_of_new(event: TraceEvent) -> Line:
    event.summary_hash = event.payload_hash = event.prev_hash = event.hash = ""
    event.summary_salt = event.payload_salt = None
    return line_of(event)
