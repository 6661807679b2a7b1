"""The queries' logic: which rows a caller sees, filtered by tenant where the query is built."""

from __future__ import annotations

import uuid

from models import AgentHelp, AgentTask, RegisteredAgent
from permissions.access import Access


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


async def agents(access: Access) -> list[RegisteredAgent]:
    if access.principal is None:
        return []
    return await RegisteredAgent.filter(tenant=access.principal.tenant).order_by("name")
