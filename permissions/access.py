"""What one caller may read, worked out once per request from the token, the tenant's policies and the rows."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Iterable
from functools import lru_cache

from models import AgentHelp, AgentTask, RegisteredAgent
from models.policies import CAPABILITIES, capability_roles
from permissions.principal import Principal
from permissions.table import CAPABILITY_READERS, HELP_OUTSIDE_WORK, READS, Group, Reader, groups_of

NOTHING: frozenset[Group] = frozenset()


def ancestor_ids(path: str) -> list[uuid.UUID]:
    return list(_ancestors(path))


@lru_cache(maxsize=16384)
def _ancestors(path: str) -> tuple[uuid.UUID, ...]:
    return tuple(uuid.UUID(part) for part in path.split("/"))


class Access:
    def __init__(self, principal: Principal | None) -> None:
        self.principal = principal
        self._standing: Awaitable[frozenset[Reader]] | None = None
        self._requester_of: dict[uuid.UUID, str | None] = {}
        self._agents: Awaitable[dict[str, RegisteredAgent]] | None = None

    @property
    def tenant(self) -> str | None:
        return self.principal.tenant if self.principal else None

    async def writer_groups(self) -> frozenset[Group]:
        """What a kit reads on a row it has just written: its standing, as the row is of its own tenant."""
        return groups_of(await self.standing())

    async def standing(self) -> frozenset[Reader]:
        """The readers the caller is whatever the task: its capabilities, or the kit."""
        if self._standing is None:
            self._standing = asyncio.ensure_future(self._load_standing())
        return await self._standing

    async def _load_standing(self) -> frozenset[Reader]:
        p = self.principal
        if p is None:
            return frozenset()
        if p.kit:
            return frozenset({Reader.KIT})
        roles = await capability_roles(p.tenant)
        if roles is None:
            return frozenset()
        return frozenset(CAPABILITY_READERS[cap] for cap in CAPABILITIES if p.roles & set(roles[cap]))

    async def holds(self, reader: Reader) -> bool:
        return reader in await self.standing()

    def is_person(self) -> bool:
        return self.principal is not None and not self.principal.kit

    def remember(self, rows: Iterable[AgentTask]) -> None:
        for row in rows:
            self._requester_of[row.id] = row.requester_id

    async def task_groups(self, rows: list[AgentTask]) -> dict[uuid.UUID, frozenset[Group]]:
        """The field groups the caller reads on each task; an empty set means the task does not exist for them."""
        if self.principal is None:
            return {row.id: NOTHING for row in rows}
        standing = await self.standing()
        base = groups_of(standing)
        if not self.is_person() or READS[Reader.REQUESTER] <= base:
            return {row.id: base if row.tenant == self.tenant else NOTHING for row in rows}
        self.remember(rows)
        await self._learn_requesters(rows)
        sub = self.principal.sub
        out: dict[uuid.UUID, frozenset[Group]] = {}
        for row in rows:
            if row.tenant != self.tenant:
                out[row.id] = NOTHING
            elif any(self._requester_of.get(a) == sub for a in ancestor_ids(row.path)):
                out[row.id] = base | READS[Reader.REQUESTER]
            else:
                out[row.id] = base
        return out

    async def _learn_requesters(self, rows: list[AgentTask]) -> None:
        missing = {a for row in rows for a in ancestor_ids(row.path) if a not in self._requester_of}
        if not missing:
            return
        found = await AgentTask.filter(tenant=self.tenant, id__in=list(missing)).values_list("id", "requester_id")
        for task_id, requester_id in found:
            self._requester_of[uuid.UUID(str(task_id))] = requester_id
        for task_id in missing:
            self._requester_of.setdefault(task_id, None)

    async def groups(self, row: AgentTask) -> frozenset[Group]:
        return (await self.task_groups([row]))[row.id]

    async def help_groups(self, help: AgentHelp, task_groups: frozenset[Group] | None) -> frozenset[Group]:
        """Help inside work reads as its task; help outside work by the person asked and a few capabilities."""
        if self.principal is None or help.tenant != self.tenant:
            return NOTHING
        if help.task_id is not None:
            return task_groups or NOTHING
        readers = set(await self.standing())
        if self.is_person() and help.asked_of_id is not None and help.asked_of_id == self.principal.sub:
            readers.add(Reader.PERSON_ASKED)
        return groups_of(readers, HELP_OUTSIDE_WORK)

    async def reads_transcripts_of(self, agent_names: Iterable[str]) -> bool:
        """True when the caller, a person, holds one of the transcriptReaders roles of every one of these agents."""
        p = self.principal
        if p is None or not self.is_person():
            return False
        if self._agents is None:
            self._agents = asyncio.ensure_future(self._load_agents(p.tenant))
        agents = await self._agents
        for name in set(agent_names):
            agent = agents.get(name)
            if agent is None or not (p.roles & set(agent.transcript_readers or [])):
                return False
        return True

    async def _load_agents(self, tenant: str) -> dict[str, RegisteredAgent]:
        return {agent.name: agent for agent in await RegisteredAgent.filter(tenant=tenant)}
