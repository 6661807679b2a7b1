"""Who reads what: one table, reader x field group. The access decision (permissions/access.py) is its only reader
in the server; every guard, field description and access test comes from it."""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

from permissions.groups import Group


class Reader(str, Enum):
    REQUESTER = "requester"
    SUPERVISES = "supervisesAgents"
    AUDITS = "auditsAgents"
    TEACHES = "teachesAgents"
    READS_ALL = "readsAllAgentWork"
    ERASES = "erasesAgentRecords"
    KIT = "kit"
    PERSON_ASKED = "personAsked"


F, W, S, C = Group.FIGURES, Group.WORDS, Group.SENTENCES, Group.CONTENT

Table = dict[Reader, frozenset[Group]]

TABLE_GROUPS: tuple[Group, ...] = (F, W, S, C)

READS: Table = {
    Reader.REQUESTER: frozenset({F, W, S, C}),
    Reader.SUPERVISES: frozenset({F, W, S}),
    Reader.AUDITS: frozenset({F, W, S, C}),
    Reader.TEACHES: frozenset({F, W, S, C}),
    Reader.READS_ALL: frozenset({F}),
    Reader.ERASES: frozenset({F, W, S}),
    Reader.KIT: frozenset({F}),
}

HELP_OUTSIDE_WORK: Table = {
    Reader.PERSON_ASKED: frozenset({F, W, C}),
    Reader.AUDITS: frozenset({F, W, C}),
    Reader.TEACHES: frozenset({F, W, C}),
    Reader.SUPERVISES: frozenset({F, W}),
    Reader.ERASES: frozenset({F, W}),
    Reader.KIT: frozenset({F}),
}

CAPABILITY_READERS: dict[str, Reader] = {
    "supervises_agents": Reader.SUPERVISES,
    "audits_agents": Reader.AUDITS,
    "teaches_agents": Reader.TEACHES,
    "reads_all_agent_work": Reader.READS_ALL,
    "erases_agent_records": Reader.ERASES,
}

ERASERS = frozenset({Reader.ERASES})
ERASURE_LOG_READERS = frozenset({Reader.AUDITS, Reader.ERASES})
LEDGER_READERS = frozenset({Reader.AUDITS})
RUNNING_TRACE_READERS = frozenset({Reader.SUPERVISES, Reader.AUDITS, Reader.READS_ALL, Reader.KIT})
WEBHOOK_READERS = frozenset({Reader.AUDITS, Reader.KIT})

EVERY_READER_READS: frozenset[Group] = frozenset.intersection(
    *(groups for table in (READS, HELP_OUTSIDE_WORK) for groups in table.values())
)

TRANSCRIPT_RULE = (
    "a caller who may read the task and holds one of the transcriptReaders roles of every agent whose task is "
    "in its subtree; an agent that names no role is read by nobody"
)


def groups_of(readers: Iterable[Reader], table: Table = READS) -> frozenset[Group]:
    allowed: frozenset[Group] = frozenset()
    for reader in readers:
        allowed |= table.get(reader, frozenset())
    return allowed


def who_reads(group: Group, table: Table = READS) -> list[str]:
    return [reader.value for reader, groups in table.items() if group in groups]


def describe(group: Group) -> str:
    if group is Group.TRANSCRIPT:
        return f"Field group: transcript. Readable by: {TRANSCRIPT_RULE}."
    return f"Field group: {group.value}. Readable by: {', '.join(who_reads(group))}."


def describe_outside_work(group: Group) -> str:
    readers = who_reads(group, HELP_OUTSIDE_WORK)
    return f"Asked outside any work, readable by: {', '.join(readers) or 'nobody'}."
