"""The queries' logic: which rows a caller sees, filtered by tenant where the query is built."""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass
from datetime import datetime

from tortoise.expressions import Q

from models import AgentHelp, AgentTask
from permissions.access import Access
from permissions.table import Group, groups_of
from resolvers import checks
from models.errors import BadInput, Forbidden
from resolvers.tree import outermost, under_any

MAX_PAGE = 500


@dataclass
class TaskFilter:
    agent: str | None = None
    skill: str | None = None
    status: str | None = None
    requester: str | None = None
    session: str | None = None
    roots_only: bool = False
    started_after: datetime | None = None
    started_before: datetime | None = None


def parse_id(value: str) -> uuid.UUID | None:
    """A malformed id is simply not found on reads."""
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


async def task_row(access: Access, task_id: str) -> AgentTask | None:
    tid = parse_id(task_id)
    if tid is None or access.principal is None:
        return None
    row = await AgentTask.filter(id=tid, tenant=access.principal.tenant).first()
    if row is None or not await access.groups(row):
        return None
    return row


async def help_row(access: Access, help_id: str) -> AgentHelp | None:
    hid = parse_id(help_id)
    if hid is None or access.principal is None:
        return None
    return await AgentHelp.filter(id=hid, tenant=access.principal.tenant).first()


def encode_cursor(row: AgentTask) -> str:
    raw = json.dumps([row.started_at.isoformat(), str(row.id)])
    return base64.urlsafe_b64encode(raw.encode()).decode()


def decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    try:
        at, tid = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        return datetime.fromisoformat(at), uuid.UUID(tid)
    except (ValueError, TypeError) as exc:
        raise BadInput("after: this is not a cursor this server gave out.") from exc


async def _visible(access: Access) -> Q | None:
    """The condition for the tasks a caller sees, or None when they see none."""
    p = access.principal
    if p is None:
        return None
    if await access.standing():
        return Q(tenant=p.tenant)
    if p.kit:
        return None
    asked = await AgentTask.filter(tenant=p.tenant, requester_id=p.sub).values_list("path", flat=True)
    if not asked:
        return None
    return Q(_asked_or_under(asked), tenant=p.tenant)


def _asked_or_under(paths: list[str]) -> Q:
    """Exactly the tasks at these paths and under them: whole trees by root, the rest by path prefix."""
    kept = outermost(paths)
    roots = [uuid.UUID(path) for path in kept if "/" not in path]
    below = [path for path in kept if "/" in path]
    if not below:
        return Q(root_id__in=roots)
    return Q(Q(root_id__in=roots), under_any("path", below), join_type="OR") if roots else under_any("path", below)


async def list_tasks(access: Access, flt: TaskFilter, first: int, after: str | None) -> tuple[list[AgentTask], bool]:
    if first < 1 or first > MAX_PAGE:
        raise BadInput(f"first: ask for 1 to {MAX_PAGE} tasks, not {first}.")
    if flt.requester is not None:
        standing = await access.standing()
        if not access.is_person() or (standing and Group.WORDS not in groups_of(standing)):
            raise Forbidden("filter.requester: you may not read who asked for tasks, so you may not filter by it.")
    visible = await _visible(access)
    if visible is None:
        return [], False
    query = AgentTask.filter(visible)
    for field in ("agent", "skill", "status", "session"):
        value = getattr(flt, field)
        if value is not None:
            query = query.filter(**{field: checks.name(f"filter.{field}", value)})
    if flt.requester is not None:
        query = query.filter(requester_id=flt.requester)
    if flt.roots_only:
        query = query.filter(parent_id__isnull=True)
    if flt.started_after is not None:
        query = query.filter(started_at__gt=flt.started_after)
    if flt.started_before is not None:
        query = query.filter(started_at__lt=flt.started_before)
    if after is not None:
        at, tid = decode_cursor(after)
        query = query.filter(Q(started_at__lt=at) | Q(id__lt=tid), started_at__lte=at)
    rows = await query.order_by("-started_at", "-id").limit(first + 1)
    return rows[:first], len(rows) > first
