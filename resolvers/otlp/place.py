"""Deciding where spans go, from what is known of their trace, and in which passes: plain values in, plain values
out, no database.

A span hangs under its nearest agent ancestor. It is placed once that agent is placed, or is placed in the same
pass; a span with no agent above becomes a root (an agent) or goes under the trace's stand-in; a span whose
ancestry breaks off at a span not taken waits, until it has waited long enough, then goes under the stand-in.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from resolvers.otlp.mapping import AGENT, OTHER, TOOL

STAND_IN_SPAN = "0" * 16


@dataclass(slots=True)
class KnownSpan:
    """A span of the trace as placing knows it: where it hangs; while it waits, when it was received; once
    placed, the task an agent span became and a tool span's tool."""

    span_id: str
    parent_span_id: str | None
    kind: str
    received_us: int | None = None
    placed: bool = False
    task_id: str | None = None
    tool: str | None = None


@dataclass(frozen=True, slots=True)
class UnderTask:
    """Under a task stored before this pass."""

    task_id: uuid.UUID


@dataclass(frozen=True, slots=True)
class UnderSpan:
    """Under the task an agent span placed in this same pass becomes."""

    span_id: str


@dataclass(frozen=True, slots=True)
class AsRoot:
    """An agent span with no agent above: the root of a tree of its own."""


@dataclass(frozen=True, slots=True)
class UnderStandIn:
    """Under the trace's stand-in task, which holds what has no agent to hang under."""


ROOT, STAND_IN = AsRoot(), UnderStandIn()
Target = UnderTask | UnderSpan | AsRoot | UnderStandIn
Spans = dict[str, KnownSpan]


def targets(spans: Spans, due_us: int) -> dict[str, Target]:
    """Where each unplaced span of `spans` goes now; spans that must still wait are left out. A span received
    at or before `due_us` has waited long enough. `spans` must hold every known ancestor of each unplaced span up
    to its nearest agent (see `unknown_above`); a parent it does not hold was never taken."""
    memo: dict[str, Target | None] = {}

    def home(span: KnownSpan) -> str | None | bool:
        """The nearest agent ancestor's span id; None when there is none; False when the ancestry breaks off."""
        parent, steps = span.parent_span_id, 0
        while parent is not None and steps <= len(spans):
            up = spans.get(parent)
            if up is None:
                return False
            if up.kind == AGENT:
                return parent
            parent, steps = up.parent_span_id, steps + 1
        return None

    def target(span_id: str) -> Target | None:
        if span_id in memo:
            return memo[span_id]
        memo[span_id] = None
        span = spans[span_id]
        above = home(span)
        found: Target | None
        if above is False:
            found = STAND_IN if span.received_us is not None and span.received_us <= due_us else None
        elif above is None:
            found = ROOT if span.kind == AGENT else STAND_IN
        elif spans[above].placed:
            found = UnderTask(uuid.UUID(str(spans[above].task_id))) if spans[above].task_id else STAND_IN
        else:
            found = None if target(above) is None else UnderSpan(above)
        memo[span_id] = found
        return found

    placed = {}
    for span_id, span in spans.items():
        if not span.placed:
            found = target(span_id)
            if found is not None:
                placed[span_id] = found
    return placed


def unknown_above(spans: Spans, looked_up: set[str]) -> set[str]:
    """The span ids placing still needs to look up: each parent not yet known or looked up of a span that
    is not an agent (an agent's own parent is its own task's concern), and of unplaced agents."""
    wanted = set()
    for span in spans.values():
        parent = span.parent_span_id
        if parent is None or parent in spans or parent in looked_up:
            continue
        if span.kind != AGENT or not span.placed:
            wanted.add(parent)
    return wanted


def depth(span_id: str, found: dict[str, Target]) -> int:
    """How many agent spans placed in the same pass are above this one: tasks are made parents first."""
    steps, target = 0, found[span_id]
    while isinstance(target, UnderSpan):
        steps, target = steps + 1, found[target.span_id]
    return steps


def tool_span_above(spans: Spans, span_id: str) -> str | None:
    """The nearest span above that is not folded away, when it is a tool span."""
    parent = spans[span_id].parent_span_id
    while parent is not None and parent in spans and spans[parent].kind == OTHER:
        parent = spans[parent].parent_span_id
    return parent if parent is not None and parent in spans and spans[parent].kind == TOOL else None


def passes(spans: Spans, found: dict[str, Target], size: int) -> list[list[str]]:
    """The spans of `found` cut into passes of about `size` spans, parents first: an agent span goes with its own
    model calls and tools (its task's ENDED line comes after them), in the pass of its parent agent or a later
    one; the spans going under a task stored before, or under the stand-in, go together, in the first passes."""
    units: dict[str | Target, list[str]] = {}
    for span_id, target in found.items():
        home = span_id if spans[span_id].kind == AGENT else target.span_id if isinstance(target, UnderSpan) else target
        units.setdefault(home, []).append(span_id)
    cut: list[list[str]] = []
    current: list[str] = []
    for home in sorted(units, key=lambda home: depth(home, found) if isinstance(home, str) else -1):
        if current and len(current) + len(units[home]) > size:
            cut.append(current)
            current = []
        current += units[home]
    if current:
        cut.append(current)
    return cut
