"""Who reads what: one table, reader x field group. Every guard and the access tests come from it."""

from __future__ import annotations

from enum import Enum


class Group(str, Enum):
    FIGURES = "figures"
    WORDS = "words"
    SENTENCES = "sentences"
    CONTENT = "content"


class Reader(str, Enum):
    REQUESTER = "requester"
    SUPERVISES = "supervisesAgents"
    AUDITS = "auditsAgents"
    TEACHES = "teachesAgents"
    READS_ALL = "readsAllAgentWork"
    ERASES = "erasesAgentRecords"
    KIT = "kit"


F, W, S, C = Group.FIGURES, Group.WORDS, Group.SENTENCES, Group.CONTENT

READS: dict[Reader, frozenset[Group]] = {
    Reader.REQUESTER: frozenset({F, W, S, C}),
    Reader.SUPERVISES: frozenset({F, W, S}),
    Reader.AUDITS: frozenset({F, W, S, C}),
    Reader.TEACHES: frozenset({F, W, S, C}),
    Reader.READS_ALL: frozenset({F}),
    Reader.ERASES: frozenset({F, W, S}),
    Reader.KIT: frozenset({F}),
}

CAPABILITY_READERS: dict[str, Reader] = {
    "supervises_agents": Reader.SUPERVISES,
    "audits_agents": Reader.AUDITS,
    "teaches_agents": Reader.TEACHES,
    "reads_all_agent_work": Reader.READS_ALL,
    "erases_agent_records": Reader.ERASES,
}

HELP_OUTSIDE_WORK: dict[Reader, frozenset[Group]] = {
    Reader.AUDITS: frozenset({F, W, C}),
    Reader.TEACHES: frozenset({F, W, C}),
    Reader.SUPERVISES: frozenset({F, W}),
    Reader.ERASES: frozenset({F, W}),
}
ASKED_PERSON_READS = frozenset({F, W, C})

ERASERS = frozenset({Reader.ERASES})
ERASURE_LOG_READERS = frozenset({Reader.AUDITS, Reader.ERASES})


def groups_of(readers: frozenset[Reader] | set[Reader], table: dict[Reader, frozenset[Group]] = READS) -> frozenset[Group]:
    allowed: frozenset[Group] = frozenset()
    for reader in readers:
        allowed |= table.get(reader, frozenset())
    return allowed


def who_reads(group: Group) -> list[str]:
    return [reader.value for reader, groups in READS.items() if group in groups]


def describe(group: Group) -> str:
    return f"Field group: {group.value}. Readable by: {', '.join(who_reads(group))}."
