"""Spans taken from OTLP exports: stored durably on arrival, then placed in the record through the kit's
write path as soon as their agent parent is known, or under a stand-in task once they have waited long enough.

One trace is one work tree. A span waits in `otlp_span` with its body until the pass that places it deletes it,
in the same transaction that records it and keeps its identity in `otlp_placed_span`; so an acknowledged span
is always in one of the two. Under the trace's lock a span already waiting or placed is not taken again, so a
span sent twice, or a whole export replayed, appends nothing. A line's `at` is the span's own time; its `seq`
is the order placed. Where spans go is decided in `place`, what a pass writes in `planning` (both pure); what
is read and stored of spans, in `store`; the pass's plan is stored by the write path (`resolvers/write/plan.py`).
"""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from tortoise.transactions import in_transaction

from models import AgentTask, settings
from models.record import fast_json
from models.record.vocabulary import TaskStatus
from resolvers.events.notices import publish_tasks
from resolvers.otlp import store as waiting_spans
from resolvers.otlp.kept import KEPT
from resolvers.otlp.mapping import AGENT, LLM, OTHER, TOOL, Mapped, map_request
from resolvers.otlp.place import (
    STAND_IN, STAND_IN_SPAN, KnownSpan, Spans, Target, UnderTask, passes, targets, unknown_above,
)
from resolvers.otlp.planning import STAND_IN_AGENT, Known, Planned, plan_pass, stand_in_after
from resolvers.otlp.under import around, tasks_under
from resolvers.write.made_task import MadeTask
from resolvers.write.pipeline import Pipeline
from resolvers.write.plan import store_plan

log = logging.getLogger("agentlog.otlp")

Task = AgentTask | MadeTask


def micros(at: datetime) -> int:
    return int(at.timestamp() * 1_000_000)


@dataclass(frozen=True, slots=True)
class Later:
    """The passes an export left of one trace, to run after its answer."""

    tenant: str
    trace_id: str
    run: Callable[[], Awaitable[int]]


class Again:
    """Traces whose spans are stored but could not all be placed (the database went away in the middle): the
    sweep tries them on its next round rather than once they have waited `AGENTLOG_OTLP_WAIT_S`. Held by this
    process and bounded; a trace past the bound, or left by a process that stopped, is placed by the sweep of
    spans that have waited, or by the sweep of every waiting span a start runs."""

    LIMIT = 10_000

    def __init__(self) -> None:
        self._traces: dict[tuple[str, str], None] = {}

    def add(self, tenant: str, trace_id: str) -> None:
        if len(self._traces) < self.LIMIT:
            self._traces[(tenant, trace_id)] = None

    def take(self) -> list[tuple[str, str]]:
        taken = list(self._traces)
        self._traces.clear()
        return taken


AGAIN = Again()


@dataclass(frozen=True, slots=True)
class Taken:
    """What one export came to: spans taken (stored, or already stored before) and spans rejected, with why;
    the task events of its placing, for the caller to tell once the export is answered; and the passes left for
    after the answer (`place_later`)."""

    taken: int
    rejected: int
    message: str | None = None
    events: tuple[tuple[str, Task], ...] = ()
    later: tuple[Later, ...] = ()


def waiting_row(tenant: str, span: Mapped, received_us: int) -> tuple:
    """The row of a span that must wait: its body kept whole until it is placed."""
    return (tenant, span.trace_id, span.span_id, span.parent_span_id, span.kind, body_text(span), received_us)


def body_text(span: Mapped) -> str:
    """The span's body as JSON text (mapping leaves in it no number JSON cannot hold)."""
    return fast_json.dumps(span.body()).decode()


async def what_is_known(conn: Any, tenant: str, trace_id: str, fresh: dict[str, Mapped], received_us: int,
                        since_us: int) -> tuple[Spans, dict[str, Mapped], list[KnownSpan], dict[str, str]]:
    """What placing needs of the trace, read by span id: the export's spans (`fresh`; without them, the spans
    waiting since `since_us` or longer), each one's ancestors up to its agent, and the trace's stand-in. Returns
    them, the export's spans not taken before, and, read in the same statement, the level just below the export's
    spans (`with_waiting_below`) and the tasks start markers opened in the trace, marked seen now that spans of it
    came (`waiting_spans.seen`), by the span id whose end they wait for."""
    spans: Spans = {}
    below: list[KnownSpan] = []
    opened: dict[str, str] = {}
    if fresh:
        wanted = set(fresh) | {s.parent_span_id for s in fresh.values() if s.parent_span_id} | {STAND_IN_SPAN}
        found, below, opened = await waiting_spans.known_and_below(conn, tenant, trace_id, sorted(wanted),
                                                                   sorted(fresh), received_us)
    else:
        spans = {s.span_id: s for s in await waiting_spans.due(conn, tenant, trace_id, since_us)}
        wanted = {s.parent_span_id for s in spans.values() if s.parent_span_id} - set(spans) | {STAND_IN_SPAN}
        found = await waiting_spans.known(conn, tenant, trace_id, sorted(wanted))
    for span in found:
        spans[span.span_id] = span
    new = {sid: span for sid, span in fresh.items() if sid not in spans}
    for sid, span in new.items():
        spans[sid] = KnownSpan(sid, span.parent_span_id, span.kind, None if span.marker else received_us,
                               span.kind == OTHER)
    await with_ancestors(conn, tenant, trace_id, spans, wanted)
    return spans, new, below, opened


async def as_they_are(conn: Any, tenant: str, trace_id: str, span_ids: list[str],
                      kept: dict[str, Mapped]) -> tuple[Spans, dict[str, str]]:
    """A later pass's spans read again under the trace's lock (one placed meanwhile by another pass is placed),
    with each one's ancestors up to its agent, and the trace's stand-in; and, unless this process keeps them
    all, the stored bodies of those waiting, in the same read."""
    wanted = {*span_ids, STAND_IN_SPAN}
    if all(sid in kept for sid in span_ids):
        found, stored = await waiting_spans.known(conn, tenant, trace_id, sorted(wanted)), {}
    else:
        found, stored = await waiting_spans.known_with_bodies(conn, tenant, trace_id, sorted(wanted))
    spans = {s.span_id: s for s in found}
    await with_ancestors(conn, tenant, trace_id, spans, wanted)
    return spans, stored


async def with_ancestors(conn: Any, tenant: str, trace_id: str, spans: Spans, looked_up: set[str]) -> None:
    """Adds to `spans` the ancestors placing needs that are not looked up yet, a level a statement."""
    while wanted := unknown_above(spans, looked_up):
        for span in await waiting_spans.known(conn, tenant, trace_id, sorted(wanted)):
            spans[span.span_id] = span
        looked_up |= wanted


async def with_waiting_below(conn: Any, tenant: str, trace_id: str, spans: Spans, found: dict[str, Target],
                             new: dict[str, Mapped], due_us: int, read: list[KnownSpan],
                             read_of: set[str]) -> dict[str, Target]:
    """Where spans go, once the spans waiting below those placed now (and below the export's folded spans)
    are known too. `read` is the level below the spans of `read_of`, as read already: only the level below the
    others is read now."""
    above = set(found) | {sid for sid, span in new.items() if span.kind == OTHER}
    first = [span for span in read if span.parent_span_id in above]
    if unread := sorted(above - read_of):
        first += await waiting_spans.level_below(conn, tenant, trace_id, unread)
    below = [s for s in await waiting_spans.waiting_below(conn, tenant, trace_id, sorted(above), first)
             if s.span_id not in spans]
    if not below:
        return found
    for span in below:
        spans[span.span_id] = span
    return targets(spans, due_us)


@dataclass(slots=True)
class Pass:
    """One pass over one trace, inside one transaction: its spans and where they go, the task each agent span
    becomes; the spans that waited for it, the export's folded spans, the agent spans start markers open, and
    the tasks start markers opened whose spans came now."""

    tenant: str
    trace_id: str
    now: datetime
    spans: Spans
    found: dict[str, Target]
    waited: list[str] = field(default_factory=list)
    folded: list[KnownSpan] = field(default_factory=list)
    opening: frozenset[str] = frozenset()
    closing: dict[str, tuple[uuid.UUID, Mapped]] = field(default_factory=dict)
    ids: dict[str, uuid.UUID] = field(init=False)

    def __post_init__(self) -> None:
        self.ids = {sid: uuid.uuid4() for sid in self.found if self.spans[sid].kind == AGENT}


async def what_the_pass_knows(db: Pipeline, conn: Any, one: Pass, mapped: dict[str, Mapped], waiting: list[tuple],
                              stored: dict[str, str]) -> Known:
    """What the pass needs from the database: the bodies of spans stored earlier, neither `mapped` nor `stored`
    as read already, the tasks they hang under, the agents' logging, and the trace's stand-in; a span whose task
    was forgotten goes to the stand-in. The export's spans that must wait are sent as soon as the reads they
    must follow are."""
    tenant, trace_id, found = one.tenant, one.trace_id, dict(one.found)
    bodies_read = db.send(waiting_spans.bodies(conn, tenant, trace_id,
                                               [sid for sid in found if sid not in mapped and sid not in stored]))
    entry = one.spans.get(STAND_IN_SPAN)
    stand_in_id = uuid.UUID(entry.task_id) if entry is not None and entry.task_id else None
    existing = {t.task_id for t in found.values() if isinstance(t, UnderTask)} | (
        {stand_in_id} if stand_in_id else set()) | {task_id for task_id, _ in one.closing.values()}
    tasks_read = db.send(tasks_under(conn, tenant, existing))
    db.send(waiting_spans.wait(conn, waiting))
    texts = {**stored, **{row["span_id"]: row["body"] for row in await bodies_read}}
    bodies = {sid: mapped[sid].body() if sid in mapped else fast_json.loads(texts[sid].encode())
              for sid in found if sid in mapped or sid in texts}
    under = await tasks_read
    for sid, target in found.items():
        if isinstance(target, UnderTask) and target.task_id not in under.tasks:
            found[sid] = STAND_IN
    agents = {b["fields"]["agent"] for sid, b in bodies.items() if one.spans[sid].kind == AGENT}
    agents |= {t.agent for t in under.tasks.values()} | {STAND_IN_AGENT}
    near = await db.send(around(conn, tenant, sorted(under.tasks), sorted(agents)))
    stand_in = under.tasks.get(stand_in_id) if stand_in_id else None
    known = Known(
        tenant=tenant, trace_id=trace_id, now=one.now, spans=one.spans, found=found, bodies=bodies, ids=one.ids,
        mapped=mapped, tasks=under.tasks, roots=under.roots, children=near.children, turns=near.turns,
        logging=near.logging, hooks=near.hooks,
        stand_in=stand_in if stand_in is not None and stand_in.status == TaskStatus.RUNNING else None,
        opening=one.opening, closing=one.closing,
    )
    if stand_in_after(known) and not waiting:
        left = await db.send(waiting_spans.waiting_count(conn, tenant, trace_id))
        known.nothing_left = left == len(one.waited)
    return known


async def record_placed(conn: Any, one: Pass, known: Known, planned: Planned) -> None:
    """The trace's stand-in as the pass leaves it; the pass's spans placed: those placed now and the export's
    folded spans; the spans that waited for this pass wait no more."""
    tenant, trace_id, spans = one.tenant, one.trace_id, one.spans
    if planned.stand_in_made or planned.stand_in_ends:
        await waiting_spans.stand_in(conn, tenant, trace_id,
                                     None if planned.stand_in_ends else str(planned.stand_in.id))
    entries = [KnownSpan(sid, spans[sid].parent_span_id, spans[sid].kind, None, True,
                         str(one.ids[sid]) if sid in one.ids else None,
                         known.bodies[sid]["fields"]["tool"] if spans[sid].kind == TOOL else None)
               for sid in one.found]
    await waiting_spans.placed_now(conn, tenant, trace_id, entries + one.folded, one.waited,
                                   [(sid, str(one.ids[sid])) for sid in sorted(one.opening)], micros(one.now),
                                   sorted(one.closing))


async def place_trace(tenant: str, trace_id: str, now: datetime, wait_s: float,
                      fresh: dict[str, Mapped] | None = None, told: list[tuple[str, Task]] | None = None,
                      every_waiting: bool = False, later: list[Later] | None = None) -> int:
    """Stores the spans of the export being taken (`fresh`) and places every span of the trace that can be placed
    now; without `fresh`, tries the spans that have waited `wait_s` (or, with `every_waiting`, every span
    waiting). Returns how many were placed. A fresh span placed at once is never written to wait; one that must
    wait, or that a later pass places, is stored with its body. Fresh spans, and waiting spans this process keeps
    (`kept`), are used as mapped; the others as stored. The first pass's task events are told once it has
    committed, or, given `told`, added to it for the caller to tell.

    More than `AGENTLOG_OTLP_PASS_SPANS` spans are placed in passes (`place.passes`), each its own
    transaction: the first holds the export's own spans, placed or waiting; given `later`, the other passes
    are added to it, for the caller to run once the export is answered, else they are run here."""
    fresh = fresh or {}
    received = micros(now)
    due_us = received - int(wait_s * 1_000_000)
    one, planned = None, None
    async with in_transaction() as conn:
        await waiting_spans.lock_trace(conn, tenant, trace_id)
        since_us = received if every_waiting else due_us
        spans, new, below, opened = await what_is_known(conn, tenant, trace_id, fresh, received, since_us)
        closing = {sid: (uuid.UUID(opened[sid]), span) for sid, span in fresh.items()
                   if sid in opened and not span.marker}
        found = targets(spans, due_us)
        if found or any(span.kind == OTHER for span in new.values()):
            found = await with_waiting_below(conn, tenant, trace_id, spans, found, new, due_us, below, set(fresh))
        cut = passes(spans, found, settings.otlp_pass_spans())
        first = {sid: found[sid] for sid in cut[0]} if cut else {}
        waiting = {sid: waiting_row(tenant, span, received) for sid, span in new.items()
                   if sid not in first and span.kind != OTHER and not span.marker}
        folded = [KnownSpan(sid, span.parent_span_id, OTHER, None, True) for sid, span in new.items()
                  if span.kind == OTHER]
        if first or closing:
            waited = [sid for sid in first if sid not in new]
            one = Pass(tenant, trace_id, now, spans, first, waited, folded,
                       frozenset(sid for sid in first if sid in new and new[sid].marker), closing)
            mapped = {**KEPT.of(tenant, trace_id, waited), **fresh}
            planned = await _place(conn, one, list(waiting.values()), mapped, {})
        else:
            await waiting_spans.wait(conn, list(waiting.values()))
            await waiting_spans.placed(conn, tenant, trace_id, folded)
    KEPT.keep(tenant, trace_id, [(new[sid], len(row[-2])) for sid, row in waiting.items()])
    if one is None:
        return 0
    await _placed(one, planned, told)
    if len(cut) <= 1:
        return len(first)
    rest = functools.partial(place_passes, tenant, trace_id, now, wait_s, cut[1:])
    if later is not None:
        later.append(Later(tenant, trace_id, rest))
        return len(first)
    return len(first) + await rest()


async def place_passes(tenant: str, trace_id: str, now: datetime, wait_s: float, cut: list[list[str]]) -> int:
    """The passes after the first, one transaction each, in order; each tells its task events once committed."""
    placed = 0
    for span_ids in cut:
        placed += await place_pass(tenant, trace_id, now, wait_s, span_ids)
    return placed


async def place_pass(tenant: str, trace_id: str, now: datetime, wait_s: float, span_ids: list[str]) -> int:
    """One later pass: its spans read again under the trace's lock, and those still waiting placed, so a pass
    racing another (a second server, the sweep) places nothing twice."""
    due_us = micros(now) - int(wait_s * 1_000_000)
    async with in_transaction() as conn:
        await waiting_spans.lock_trace(conn, tenant, trace_id)
        spans, stored = await as_they_are(conn, tenant, trace_id, span_ids, KEPT.of(tenant, trace_id, span_ids))
        found = targets(spans, due_us)
        if not found:
            return 0
        one = Pass(tenant, trace_id, now, spans, found, list(found))
        planned = await _place(conn, one, [], KEPT.of(tenant, trace_id, one.waited), stored)
    await _placed(one, planned, None)
    return len(found)


async def _placed(one: Pass, planned: Planned, told: list[tuple[str, Task]] | None) -> None:
    """Once a pass has committed: its spans are kept no more, and its task events are told, or added to `told`."""
    KEPT.drop(one.tenant, one.trace_id, one.found)
    if told is None:
        await publish_tasks(planned.events)
    else:
        told += planned.events


async def _place(conn: Any, one: Pass, waiting: list[tuple], mapped: dict[str, Mapped],
                 stored: dict[str, str]) -> Planned:
    """The pass itself, given the rows of the export's spans that must still wait, the spans known as mapped and
    the bodies already read: what it knows is read, its plan made, and the plan stored through the write path,
    its statements sent through a pipeline so the database stores one part while Python makes the next."""
    async with Pipeline() as db:
        known = await what_the_pass_knows(db, conn, one, mapped, waiting, stored)
        planned = plan_pass(known)
        db.send(record_placed(conn, one, known, planned))
        await store_plan(conn, db, planned.plan, known.hooks)
    return planned


async def store(tenant: str, trace_id: str, spans: dict[str, Mapped], now: datetime) -> None:
    """The spans, durable and waiting, when they could not be placed as they came; a span already taken is left
    as it is."""
    received = micros(now)
    async with in_transaction() as conn:
        await waiting_spans.lock_trace(conn, tenant, trace_id)
        taken = {s.span_id for s in await waiting_spans.known(conn, tenant, trace_id, sorted(spans))}
        new = [span for span_id, span in spans.items() if span_id not in taken]
        await waiting_spans.wait(conn, [waiting_row(tenant, span, received) for span in new
                                        if span.kind != OTHER and not span.marker])
        await waiting_spans.placed(conn, tenant, trace_id, [KnownSpan(s.span_id, s.parent_span_id, OTHER, None, True)
                                                         for s in new if s.kind == OTHER])


async def take_export(tenant: str, request: Any, now: datetime | None = None) -> Taken:
    """Maps the export's spans, then per trace stores them and places what can be placed, durably before the
    export is acknowledged. Should placing fail, the spans are stored to wait for the sweep; should storing fail
    too, the export is refused. The count of spans taken and rejected is the export's answer; the task events
    of what was placed are the caller's to tell, and the passes left of a large trace its to run (`place_later`),
    after answering."""
    mapped, rejected, message = map_request(request)
    when = now or datetime.now(timezone.utc)
    traces: dict[str, dict[str, Mapped]] = {}
    for span in mapped:
        if span.marker and span.kind in (LLM, TOOL):
            continue
        spans = traces.setdefault(span.trace_id, {})
        if span.span_id not in spans or spans[span.span_id].marker:
            spans[span.span_id] = span
    told: list[tuple[str, Task]] = []
    later: list[Later] = []
    for trace_id in sorted(traces):
        try:
            await place_trace(tenant, trace_id, when, settings.otlp_wait_s(), traces[trace_id], told, later=later)
        except Exception:
            await store(tenant, trace_id, traces[trace_id], when)
            AGAIN.add(tenant, trace_id)
            log.exception("could not place trace %s yet; its spans are stored and tried again", trace_id)
    return Taken(len(mapped), rejected, message, tuple(told), tuple(later))


async def place_later(later: tuple[Later, ...]) -> None:
    """The passes an export left for after its answer. Should one fail, its spans stay waiting, durably, and the
    sweep's next round tries them again."""
    for rest in later:
        try:
            await rest.run()
        except Exception:
            AGAIN.add(rest.tenant, rest.trace_id)
            log.exception("could not place the rest of trace %s yet; its spans wait, stored, and are tried again",
                          rest.trace_id)
