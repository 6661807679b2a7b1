"""The one access decision: what a caller may read on a task, a line, help, a transcript and a list, and why anything
is withheld; worked out once per request from the token, the tenant's policies and the rows.

Every guard, view, fast path, list, search, transcript and export asks this module, and only this module reads the
access table (permissions/table.py); tests/test_one_access_decision.py walks the imports to keep it so.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass
from enum import Enum
from functools import cache, lru_cache

from models import AgentHelp, AgentTask, RegisteredAgent
from models.ledger import ledger_id
from models.rows.policies import CAPABILITIES, capability_roles, hold_roles
from permissions.groups import Group
from permissions.principal import Principal
from permissions.table import (
    CAPABILITY_READERS,
    ERASERS,
    ERASURE_LOG_READERS,
    EVERY_READER_READS,
    HELP_OUTSIDE_WORK,
    LEDGER_READERS,
    READS,
    RUNNING_TRACE_READERS,
    TABLE_GROUPS,
    WEBHOOK_READERS,
    Reader,
    groups_of,
)
from permissions.table import describe, describe_outside_work  # noqa: F401  fields' descriptions, for graph/api/guard.py

NOTHING: frozenset[Group] = frozenset()
EVERYTHING: frozenset[Group] = frozenset(TABLE_GROUPS)
GUARDED_GROUPS: tuple[Group, ...] = tuple(group for group in Group if group not in EVERY_READER_READS)
"""The groups some reader may not read: a resolver of one of these runs only behind its group's permission."""
TEXT = frozenset({Group.WORDS, Group.SENTENCES})
ERASERS_NAMED = ", ".join(sorted(reader.value for reader in ERASERS))
ERASURE_LOG_READERS_NAMED = ", ".join(sorted(reader.value for reader in ERASURE_LOG_READERS))
LEDGER_READERS_NAMED = ", ".join(sorted(reader.value for reader in LEDGER_READERS))


def may_read(groups: frozenset[Group], group: Group | None) -> bool:
    """Whether a field of `group` is read by a caller who reads `groups` on its object; a field of no group is."""
    return group is None or group in groups


class Shown(str, Enum):
    """Why a line's content is or is not shown to the caller; the first that applies wins."""

    ERASED = "ERASED"
    WITHHELD = "WITHHELD"
    DENIED = "DENIED"
    SHOWN = "SHOWN"


def content_shown(erased: bool, never_stored: bool, groups: frozenset[Group]) -> Shown:
    if erased:
        return Shown.ERASED
    if never_stored:
        return Shown.WITHHELD
    if not reads_content(groups):
        return Shown.DENIED
    return Shown.SHOWN


@cache
def reads_content(groups: frozenset[Group]) -> bool:
    """Whether the groups hold content, remembered per set of groups: a set keeps its hash, where looking a
    member up hashes the member in Python, and a tree's lines ask this of the same few sets."""
    return Group.CONTENT in groups


@dataclass(frozen=True)
class ListScope:
    """Which of the tenant's tasks a list or a search reads for the caller.

    `asker` bounds the list to the trees under the tasks that person asked for (None: the whole tenant). `words` is
    where the caller reads words and sentences, so where a search may match: "all", "asked" (the trees under the
    tasks they asked for) or None (nowhere). `ledger`: whether the list holds the tenant's ledger.
    """

    tenant: str
    sub: str
    asker: str | None
    words: str | None
    ledger: bool = False


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
            known = self._standing_known()
            if known is not None:
                return known
            self._standing = asyncio.ensure_future(self._load_standing())
        return await self._standing

    def _standing_known(self) -> frozenset[Reader] | None:
        """The standing of a caller who needs no read of the tenant's policies (nobody, or a kit); else None."""
        p = self.principal
        if p is None:
            return frozenset()
        return frozenset({Reader.KIT}) if p.kit else None

    async def _load_standing(self) -> frozenset[Reader]:
        p = self.principal
        assert p is not None
        roles = await capability_roles(p.tenant)
        if roles is None:
            return frozenset()
        return frozenset(CAPABILITY_READERS[cap] for cap in CAPABILITIES if p.roles & set(roles[cap]))

    async def erases(self) -> bool:
        """Whether the caller, a person, may erase: checked before any id is looked up."""
        return self.is_person() and bool(ERASERS & await self.standing())

    async def holds(self) -> bool:
        """Whether the caller, a person, holds a role `holdsRecords` names: checked before any id is looked up."""
        p = self.principal
        return self.is_person() and bool(p.roles & set(await hold_roles(p.tenant)))

    async def reads_erasure_log(self) -> bool:
        return bool(ERASURE_LOG_READERS & await self.standing())

    async def reads_running_traces(self) -> bool:
        """Spans still waiting to be placed, never their content (SPEC 9.1)."""
        return bool(RUNNING_TRACE_READERS & await self.standing())

    async def reads_webhooks(self) -> bool:
        """The tenant's webhooks and their delivery logs (SPEC 9.2)."""
        return bool(WEBHOOK_READERS & await self.standing())

    async def list_scope(self) -> ListScope | None:
        """Which tasks a list reads for the caller, and where a search may match; None: none at all."""
        p = self.principal
        if p is None:
            return None
        standing = await self.standing()
        if standing:
            ledger = bool(LEDGER_READERS & standing)
            if TEXT <= groups_of(standing):
                return ListScope(p.tenant, p.sub, None, "all", ledger)
            asked = self.is_person() and TEXT <= READS[Reader.REQUESTER]
            return ListScope(p.tenant, p.sub, None, "asked" if asked else None, ledger)
        if p.kit:
            return None
        return ListScope(p.tenant, p.sub, p.sub, "asked")

    async def may_filter_on(self, group: Group) -> bool:
        """Whether a list may be filtered on a field of `group`: only where the caller reads it on every task the
        list holds, so a filter tells them nothing they may not read."""
        if not self.is_person():
            return group in EVERY_READER_READS
        standing = await self.standing()
        return not standing or group in groups_of(standing)

    async def stops(self, row: AgentTask) -> bool:
        """Whether the caller, a person, may ask the task to stop: a supervisor of the tenant's agents, or who
        asked for the task or for work above it."""
        if not self.is_person() or row.tenant != self.tenant:
            return False
        if Reader.SUPERVISES in await self.standing():
            return True
        self.remember([row])
        await self._learn_requesters([row])
        return any(self._requester_of.get(a) == self.principal.sub for a in ancestor_ids(row.path))

    def is_person(self) -> bool:
        return self.principal is not None and not self.principal.kit

    def remember(self, rows: Iterable[AgentTask]) -> None:
        for row in rows:
            self._requester_of[row.id] = row.requester_id

    async def same_groups(self) -> frozenset[Group] | None:
        """The field groups the caller reads on every task of their tenant, when these do not depend on the task
        (nobody, a kit, or a person who reads as much as any task's requester); None when they do."""
        if self.principal is None:
            return NOTHING
        base = groups_of(await self.standing())
        if not self.is_person() or READS[Reader.REQUESTER] <= base:
            return base
        return None

    async def task_groups(self, rows: list[AgentTask]) -> dict[uuid.UUID, frozenset[Group]]:
        """The field groups the caller reads on each task; an empty set means the task does not exist for them.
        The tenant's ledger is read by its readers alone (LEDGER_READERS), whatever else the caller reads."""
        found = await self._task_groups(rows)
        if self.tenant is not None:
            ledger = ledger_id(self.tenant)
            for row in rows:
                if row.id == ledger:
                    found[row.id] = await self.ledger_groups()
        return found

    async def ledger_groups(self) -> frozenset[Group]:
        return groups_of(LEDGER_READERS & await self.standing())

    async def _task_groups(self, rows: list[AgentTask]) -> dict[uuid.UUID, frozenset[Group]]:
        same = await self.same_groups()
        if same is not None:
            return {row.id: same if row.tenant == self.tenant else NOTHING for row in rows}
        base = groups_of(await self.standing())
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
