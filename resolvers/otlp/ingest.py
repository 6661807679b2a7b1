"""Spans taken from OTLP exports: stored durably on arrival, then placed in the record through the kit's
write path as soon as their agent parent is known, or under a stand-in task once they have waited long enough.

One trace is one work tree. A span waits in `otlp_span` with its body until the pass that places it deletes it,
in the same transaction that records it and keeps its identity in `otlp_placed_span`; so an acknowledged span
is always in one of the two. Under the trace's lock a span already waiting or placed is not taken again, so a
span sent twice, or a whole export replayed, appends nothing. A line's `at` is the span's own time; its `seq`
is the order placed. Where spans go is decided in `place`; what is read and stored, in `store`.
"""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from tortoise.transactions import in_transaction

from models import AgentTask, settings
from models.record import fast_json
from models.record.chain import compact_json
from models.db import placeholders
from models.record.vocabulary import LineKind, TaskStatus
from resolvers.write import made_task, prices
from resolvers.otlp import store as waiting_spans
from resolvers.write import sentences
from resolvers.events.notices import ENDED_EVENTS, publish_tasks, snapshot_of
from resolvers.webhooks import outbox
from resolvers.webhooks.wanted import NO_HOOKS, STAND_IN as STAND_IN_EVENT, Hooks
from resolvers.write.made_task import MadeTask
from resolvers.otlp.kept import KEPT
from resolvers.otlp.mapping import (
    AGENT, FROM_ITS_CALLS, LLM, OTHER, TOOL, Mapped, drafts_of, map_request, told_by_its_calls,
)
from resolvers.otlp.under import around, tasks_under
from resolvers.otlp.place import (
    ROOT, STAND_IN, STAND_IN_SPAN, KnownSpan, Spans, Target, UnderSpan, UnderStandIn, UnderTask, depth, passes,
    targets, tool_span_above, unknown_above,
)
from resolvers.write.pipeline import Pipeline
from resolvers.write.withheld import withheld_reason
from resolvers.write.append import Step, append_many, insert_rows, new_step
from resolvers.write.draft import CALL_COLUMNS, LineDraft, meter_row

log = logging.getLogger("agentlog.otlp")

STAND_IN_AGENT = "unknown"
LATE_SKILL = "late work"
BREATHE_EVERY = 8
Task = AgentTask | MadeTask
RANKS = {LineKind.STARTED: 0, LineKind.MODEL_CALL: 1, LineKind.TOOL_CALL: 1, LineKind.TOOL_RESULT: 2,
         LineKind.ENDED: 3, LineKind.REVIEWED: 4}
AFTER_WORK = (LineKind.ENDED, LineKind.REVIEWED)
EVALUATED_BY = {"id": "kit", "name": None}
REVIEW_COLUMNS = ("id", "tenant", "root_id", "task_id", "seq", "verdict", "score", "note", "by_id", "by_name",
                  "evaluator", "at")

ENDS = 'UPDATE "agent_task" SET "status"=$1, "ended_at"=$2 WHERE "tenant"=$3 AND "id"=$4'
CLOSES = ('UPDATE "agent_task" SET "status"=$1, "ended_at"=$2, "outcome"=$3, "result"=$4 '
          'WHERE "tenant"=$5 AND "id"=$6')


def micros(at: datetime) -> int:
    return int(at.timestamp() * 1_000_000)


def time_of(ns: int) -> datetime:
    return datetime.fromtimestamp(ns / 1e9, timezone.utc)


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


@dataclass(slots=True)
class PlannedLine:
    """A line a pass will append: its task, its time, its draft, and where it sorts in
    its tree (by time, then STARTED before work before ENDED, then as planned; an ENDED line sorts no earlier
    than its task's last other line, whatever the span's clock said)."""

    task: Task
    at: datetime
    rank: int
    order: int
    draft: LineDraft
    withheld: str | None
    sorts_at: datetime | None = None
    review: dict[str, Any] | None = None

    def sort_key(self) -> tuple:
        return (self.task.root_id, self.sorts_at or self.at, self.rank, self.order)


def waiting_row(tenant: str, span: Mapped, received_us: int) -> tuple:
    """The row of a span that must wait: its body kept whole until it is placed."""
    return (tenant, span.trace_id, span.span_id, span.parent_span_id, span.kind, body_text(span), received_us)


def body_text(span: Mapped) -> str:
    """The span's body as JSON text (mapping leaves in it no number JSON cannot hold)."""
    return fast_json.dumps(span.body()).decode()


async def what_is_known(conn: Any, tenant: str, trace_id: str, fresh: dict[str, Mapped], received_us: int,
                        since_us: int) -> tuple[Spans, dict[str, Mapped]]:
    """What placing needs of the trace, read by span id: the export's spans (`fresh`; without them, the spans
    waiting since `since_us` or longer), each one's ancestors up to its agent, and the trace's stand-in. Returns
    them, and the export's spans not taken before."""
    spans: Spans = {}
    if fresh:
        wanted = set(fresh) | {s.parent_span_id for s in fresh.values() if s.parent_span_id} | {STAND_IN_SPAN}
    else:
        spans = {s.span_id: s for s in await waiting_spans.due(conn, tenant, trace_id, since_us)}
        wanted = {s.parent_span_id for s in spans.values() if s.parent_span_id} - set(spans) | {STAND_IN_SPAN}
    for span in await waiting_spans.known(conn, tenant, trace_id, sorted(wanted)):
        spans[span.span_id] = span
    new = {sid: span for sid, span in fresh.items() if sid not in spans}
    for sid, span in new.items():
        spans[sid] = KnownSpan(sid, span.parent_span_id, span.kind, None if span.marker else received_us,
                               span.kind == OTHER)
    await with_ancestors(conn, tenant, trace_id, spans, wanted)
    return spans, new


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
                             new: dict[str, Mapped], due_us: int) -> dict[str, Target]:
    """Where spans go, once the spans waiting below those placed now (and below the export's folded spans)
    are known too."""
    above = sorted(set(found) | {sid for sid, span in new.items() if span.kind == OTHER})
    below = [s for s in await waiting_spans.waiting_below(conn, tenant, trace_id, above) if s.span_id not in spans]
    if not below:
        return found
    for span in below:
        spans[span.span_id] = span
    return targets(spans, due_us)


class Placing:
    """One pass over one trace, inside one transaction: the tasks made, the lines per tree, the spans placed."""

    def __init__(self, tenant: str, trace_id: str, conn: Any, spans: Spans, found: dict[str, Target],
                 now: datetime) -> None:
        self.tenant, self.trace_id, self.conn, self.now = tenant, trace_id, conn, now
        self.spans, self.found = spans, found
        self.ids = {sid: uuid.uuid4() for sid in found if spans[sid].kind == AGENT}
        self.bodies: dict[str, dict[str, Any]] = {}
        self.made: dict[str, MadeTask] = {}
        self.stand_in: Task | None = None
        self.stand_in_made = False
        self.stand_in_ends = False
        self.late: dict[uuid.UUID, MadeTask] = {}
        self.tasks: dict[uuid.UUID, Task] = {}
        self.new_tasks: list[MadeTask] = []
        self.ended: list[Task] = []
        self.roots: dict[uuid.UUID, Task] = {}
        self.children: dict[uuid.UUID, int] = {}
        self.turns: dict[uuid.UUID, int] = {}
        self.logging: dict[str, str | None] = {}
        self.reasons: dict[str, str | None] = {}
        self.planned: list[PlannedLine] = []
        self.folded: list[KnownSpan] = []
        self.waited: list[str] = []
        self.opening: set[str] = set()
        self.closing: dict[str, tuple[uuid.UUID, Mapped]] = {}
        self.hooks: Hooks = NO_HOOKS
        self.under_stand_in: list[str] = []

    async def read(self, db: Pipeline, known: dict[str, Mapped], waiting: list[tuple],
                   stored: dict[str, str]) -> None:
        """What the pass needs from the database: the bodies of spans stored earlier, neither `known` as mapped
        nor `stored` as read already, the tasks they hang under, the agents' logging, and the trace's stand-in; a
        span whose task was forgotten goes to the stand-in. The export's spans that must wait, and the spans
        placed, are sent as soon as the reads they must follow are."""
        found = self.found
        bodies = db.send(waiting_spans.bodies(self.conn, self.tenant, self.trace_id,
                                          [sid for sid in found if sid not in known and sid not in stored]))
        entry = self.spans.get(STAND_IN_SPAN)
        stand_in_id = uuid.UUID(entry.task_id) if entry is not None and entry.task_id else None
        existing = {t.task_id for t in found.values() if isinstance(t, UnderTask)} | (
            {stand_in_id} if stand_in_id else set()) | {task_id for task_id, _ in self.closing.values()}
        tasks_read = db.send(self.existing(existing))
        db.send(waiting_spans.wait(self.conn, waiting))
        texts = {**stored, **{row["span_id"]: row["body"] for row in await bodies}}
        self.bodies = {sid: known[sid].body() if sid in known else fast_json.loads(texts[sid].encode())
                       for sid in found if sid in known or sid in texts}
        await tasks_read
        for sid, target in found.items():
            if isinstance(target, UnderTask) and target.task_id not in self.tasks:
                found[sid] = STAND_IN
        agents = {b["fields"]["agent"] for sid, b in self.bodies.items() if self.spans[sid].kind == AGENT}
        await db.send(self.around(agents | {t.agent for t in self.tasks.values()} | {STAND_IN_AGENT}))
        self.stand_in = self.tasks.get(stand_in_id) if stand_in_id else None
        if self.stand_in is not None and self.stand_in.status != TaskStatus.RUNNING:
            self.stand_in = None
        under_stand_in = self.under_stand_in = [sid for sid, target in found.items() if target is STAND_IN]
        if under_stand_in and self.stand_in is None:
            at = time_of(min(self.bodies[sid]["start"] for sid in under_stand_in))
            self.stand_in = self.make_stand_in(at)
            self.stand_in_made = True
        if self.stand_in is not None and not waiting:
            left = await db.send(waiting_spans.waiting_count(self.conn, self.tenant, self.trace_id))
            self.stand_in_ends = left == len(self.waited)
        if self.stand_in_made or self.stand_in_ends:
            db.send(waiting_spans.stand_in(self.conn, self.tenant, self.trace_id,
                                        None if self.stand_in_ends else str(self.stand_in.id)))
        db.send(self._record_placed())

    def parent_of(self, target: Target) -> Task | None:
        if target is ROOT:
            return None
        if isinstance(target, UnderStandIn):
            return self.stand_in
        if isinstance(target, UnderTask):
            return self.tasks[target.task_id]
        return self.made[target.span_id]

    def make_agent(self, sid: str) -> None:
        body = self.bodies[sid]
        f = body["fields"]
        if f.get(FROM_ITS_CALLS):
            f = told_by_its_calls(f, self.own_calls(sid))
        end = None if sid in self.opening else time_of(body["end"])
        self.made[sid] = self.make_task(self.parent_of(self.found[sid]), f, time_of(body["start"]), end,
                                        body["failed"], body["statusMessage"], f.get("actor") or f["agent"],
                                        self.ids[sid])

    def own_calls(self, sid: str) -> list[dict[str, Any]]:
        """The bodies of the model calls placed under this agent span in this pass, those made inside its tools
        left out: an agent span comes in the pass of its own model calls."""
        under = UnderSpan(sid)
        return [self.bodies[call] for call, target in self.found.items()
                if target == under and self.spans[call].kind == LLM and self.tool_above(call) is None]

    def make_late(self) -> None:
        """Lines this pass would add to a task that has ended go to a task of their own under it, one per ended
        task and pass, made by the same agent and ended at once: no record goes on after its ENDED line, and
        the late work stays with the agent it belonged to."""
        late: dict[uuid.UUID, list[str]] = {}
        for sid, target in self.found.items():
            if (isinstance(target, UnderTask) and self.spans[sid].kind in (LLM, TOOL)
                    and self.tasks[target.task_id].status != TaskStatus.RUNNING):
                late.setdefault(target.task_id, []).append(sid)
        for task_id, sids in late.items():
            ended = self.tasks[task_id]
            fields = {"agent": ended.agent, "skill": LATE_SKILL, "session": ended.session}
            start = time_of(min(self.bodies[sid]["start"] for sid in sids))
            end = time_of(max(self.bodies[sid]["end"] for sid in sids))
            self.late[task_id] = self.make_task(ended, fields, start, end, False, None, ended.actor_id)

    def task_of(self, sid: str) -> Task:
        """The task a model call or tool span's lines go to: its agent's, or that agent's late work."""
        target = self.found[sid]
        if isinstance(target, UnderTask) and target.task_id in self.late:
            return self.late[target.task_id]
        return self.parent_of(target)

    def make_stand_in(self, at: datetime) -> MadeTask:
        """The trace's stand-in: running while anything of its trace waits, ended by the pass that leaves
        nothing waiting."""
        fields = {"agent": STAND_IN_AGENT, "skill": STAND_IN_AGENT}
        return self.make_task(None, fields, at, None, False, None, STAND_IN_AGENT)

    def tool_lines(self, sid: str, mapped: Mapped | None) -> None:
        body = self.bodies[sid]
        task = self.task_of(sid)
        call, result = mapped.drafts if mapped is not None else drafts_of(TOOL, body["fields"])
        self.line(task, call, time_of(body["start"]))
        self.line(task, result, time_of(body["end"]))

    def model_call(self, sid: str, mapped: Mapped | None) -> tuple[Any, datetime, Task]:
        """The model call's draft, its time and its task; a call made inside a tool span is that tool's."""
        body = self.bodies[sid]
        tool = self.tool_above(sid)
        if tool is not None:
            draft = drafts_of(LLM, {**body["fields"], "by_tool": tool})[0]
        else:
            draft = mapped.drafts[0] if mapped is not None else drafts_of(LLM, body["fields"])[0]
        return draft, time_of(body["end"]), self.task_of(sid)

    def tool_above(self, sid: str) -> str | None:
        """The tool of the nearest mapped span above, when that span is a tool span: placed in this pass, or
        placed earlier and kept its tool's name."""
        parent = tool_span_above(self.spans, sid)
        if parent is None:
            return None
        return self.bodies[parent]["fields"]["tool"] if parent in self.bodies else self.spans[parent].tool

    def close(self, db: Pipeline) -> None:
        """The tasks start markers opened whose spans came in this pass end as their spans say, the ENDED line
        after the lines this pass adds to them."""
        closes = []
        for task_id, span in self.closing.values():
            task = self.tasks.get(task_id)
            if task is None or task.status != TaskStatus.RUNNING:
                continue
            result = span.fields.get("result")
            task.status = TaskStatus.FAILED if span.failed else TaskStatus.DONE
            task.ended_at, task.outcome = time_of(span.end_ns), span.status_message if span.failed else None
            task.result = None if result is None or self.withheld(task.agent) else compact_json(result)
            closes.append([task.status, task.ended_at, task.outcome, task.result, self.tenant, str(task.id)])
            self.line(task, LineDraft(LineKind.ENDED, sentences.ended(task.status), task.result), task.ended_at)
            self.ended.append(task)
        if closes:
            db.send(self.conn.execute_many(placeholders(self.conn, CLOSES), closes))

    def store_tasks(self, db: Pipeline) -> None:
        """Sends the tasks made, and the end of the stand-in when this pass ends it."""
        if self.stand_in_ends:
            self.stand_in.status, self.stand_in.ended_at = TaskStatus.DONE, self.now
            if not self.stand_in_made:
                db.send(self.conn.execute_query(placeholders(self.conn, ENDS),
                                                [TaskStatus.DONE, self.now, self.tenant, str(self.stand_in.id)]))
            self.ended.append(self.stand_in)
        if self.new_tasks:
            rows = [made_task.stored_row(task) for task in self.new_tasks]
            db.send(insert_rows(self.conn, "agent_task", made_task.COLUMNS, rows))

    async def existing(self, task_ids: set[uuid.UUID]) -> None:
        found = await tasks_under(self.conn, self.tenant, task_ids)
        self.tasks.update(found.tasks)
        self.roots.update(found.roots)

    async def around(self, agents: set[str]) -> None:
        found = await around(self.conn, self.tenant, sorted(self.tasks), sorted(agents))
        self.children.update(found.children)
        self.turns, self.logging, self.hooks = found.turns, found.logging, found.hooks

    def withheld(self, agent: str) -> str | None:
        """Decided once per agent in a pass."""
        if agent not in self.reasons:
            self.reasons[agent] = withheld_reason(self.logging.get(agent))
        return self.reasons[agent]

    def make_task(self, parent: Task | None, fields: dict[str, Any], start: datetime,
                  end: datetime | None, failed: bool, message: str | None, actor: str,
                  task_id: uuid.UUID | None = None) -> MadeTask:
        """A task made from an agent span (or a stand-in, which has no end yet), with its STARTED line and,
        when it has ended, its ENDED line."""
        status = TaskStatus.RUNNING if end is None else TaskStatus.FAILED if failed else TaskStatus.DONE
        result = fields.get("result")
        requester = {"id": fields["requester"], "name": None} if fields.get("requester") else None
        task, started = made_task.new_task(
            self.tenant, fields["agent"], fields["skill"], {"id": actor, "name": None}, start,
            self.withheld(fields["agent"]), parent, self.children.get(parent.id, 0) if parent else 0,
            task_id=task_id, requester=requester, cause="SPAWN" if parent else "REQUEST", given=fields.get("given"),
            result=None if result is None else compact_json(result), status=status, ended_at=end,
            outcome=message if failed else None, session=fields.get("session"),
        )
        if parent is not None:
            self.children[parent.id] = task.sequence
        else:
            self.roots[task.id] = task
        self.tasks[task.id] = task
        self.new_tasks.append(task)
        self.line(task, started, start)
        if end is not None:
            self.line(task, LineDraft(LineKind.ENDED, sentences.ended(status), task.result), end)
            for evaluation in fields.get("evaluations") or ():
                self.reviewed(task, end, evaluation)
        return task

    def reviewed(self, task: Task, at: datetime, evaluation: dict[str, Any]) -> None:
        """An evaluator's result on the agent's work: a review by the kit, NOTED with its score and label, whose
        REVIEWED line follows the task's ENDED line."""
        summary = sentences.reviewed("NOTED", EVALUATED_BY, evaluation["score"], evaluation["label"],
                                     evaluation["evaluator"])
        self.line(task, LineDraft(LineKind.REVIEWED, summary, None), at)
        self.planned[-1].review = {**evaluation, "at": at}

    def line(self, task: Task, draft: LineDraft, at: datetime) -> None:
        self.planned.append(PlannedLine(task, at, RANKS[draft.kind], len(self.planned), draft,
                                        self.withheld(task.agent)))

    def end_stand_in(self) -> None:
        """The stand-in's ENDED line, after every other line of its tree in this pass."""
        stand_in = self.stand_in
        at = max([self.now] + [p.at for p in self.planned if p.task.root_id == stand_in.root_id])
        self.line(stand_in, LineDraft(LineKind.ENDED, sentences.ended(TaskStatus.DONE), None), at)

    def ended_last(self) -> None:
        """Each ENDED line sorts after its task's other lines of the pass, though a span may end after its
        agent's span by the exporter's clock."""
        last: dict[uuid.UUID, datetime] = {}
        for planned in self.planned:
            if planned.draft.kind not in AFTER_WORK:
                last[planned.task.id] = max(planned.at, last.get(planned.task.id, planned.at))
        for planned in self.planned:
            if planned.draft.kind in AFTER_WORK and last.get(planned.task.id, planned.at) > planned.at:
                planned.sorts_at = last[planned.task.id]

    async def seal(self, db: Pipeline) -> None:
        """Sends the meter rows, then appends each tree's lines in order, through the pipeline."""
        self.ended_last()
        self.planned.sort(key=PlannedLine.sort_key)
        if self.stand_in_ends:
            self.end_stand_in()
        turns = self.turns
        calls: list[tuple] = []
        by_root: dict[uuid.UUID, list[Step]] = {}
        reviews: list[tuple[Step, PlannedLine]] = []
        ids = {task.id: str(task.id) for task in self.tasks.values()}
        for n, planned in enumerate(self.planned, 1):
            if n % (BREATHE_EVERY * 8) == 0:
                await db.breathe()
            task, draft = planned.task, planned.draft
            task_id, call_id = ids[task.id], None
            if draft.call is not None:
                call_id = uuid.uuid4()
                turn = None
                if draft.by_tool is None:
                    turn = turns[task.id] = turns.get(task.id, 0) + 1
                calls.append(meter_row(draft, call_id, task, task_id, turn, planned.at).row())
            step = new_step(draft, task_id, planned.at, planned.withheld, call_id)
            by_root.setdefault(task.root_id, []).append(step)
            if planned.review is not None:
                reviews.append((step, planned))
        if calls:
            db.send(insert_rows(self.conn, "llm_call", CALL_COLUMNS, calls))
        for root_id, steps in by_root.items():
            await append_many(self.roots[root_id], steps, self.conn, db)
        if reviews:
            db.send(insert_rows(self.conn, "review", REVIEW_COLUMNS, [self.review_row(*r) for r in reviews]))

    def review_row(self, step: Step, planned: PlannedLine) -> tuple:
        """The review of an evaluator's result, at the seq its REVIEWED line was sealed with."""
        task, review = planned.task, planned.review
        return (str(uuid.uuid4()), self.tenant, str(task.root_id), str(task.id), step.line.seq, "NOTED",
                review["score"], review["label"], EVALUATED_BY["id"], EVALUATED_BY["name"], review["evaluator"],
                review["at"])

    async def _record_placed(self) -> None:
        """The pass's spans placed: those placed now and the export's folded spans; the spans that waited for
        this pass wait no more."""
        entries = [KnownSpan(sid, self.spans[sid].parent_span_id, self.spans[sid].kind, None, True,
                             str(self.ids[sid]) if sid in self.ids else None,
                             self.bodies[sid]["fields"]["tool"] if self.spans[sid].kind == TOOL else None)
                   for sid in self.found]
        await waiting_spans.placed(self.conn, self.tenant, self.trace_id, entries + self.folded)
        await waiting_spans.no_longer_waiting(self.conn, self.tenant, self.trace_id, self.waited)
        await waiting_spans.opened(self.conn, self.tenant, self.trace_id,
                                   [(sid, str(self.ids[sid])) for sid in sorted(self.opening)], micros(self.now))
        await waiting_spans.closed(self.conn, self.tenant, self.trace_id, sorted(self.closing))


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
    placing = None
    async with in_transaction() as conn:
        await waiting_spans.lock_trace(conn, tenant, trace_id)
        opened = await waiting_spans.seen(conn, tenant, trace_id, received) if fresh else {}
        since_us = received if every_waiting else due_us
        spans, new = await what_is_known(conn, tenant, trace_id, fresh, received, since_us)
        closing = {sid: (uuid.UUID(opened[sid]), span) for sid, span in fresh.items()
                   if sid in opened and not span.marker}
        found = targets(spans, due_us)
        if found or any(span.kind == OTHER for span in new.values()):
            found = await with_waiting_below(conn, tenant, trace_id, spans, found, new, due_us)
        cut = passes(spans, found, settings.otlp_pass_spans())
        first = {sid: found[sid] for sid in cut[0]} if cut else {}
        waiting = {sid: waiting_row(tenant, span, received) for sid, span in new.items()
                   if sid not in first and span.kind != OTHER and not span.marker}
        folded = [KnownSpan(sid, span.parent_span_id, OTHER, None, True) for sid, span in new.items()
                  if span.kind == OTHER]
        if first or closing:
            placing = Placing(tenant, trace_id, conn, spans, first, now)
            placing.waited = [sid for sid in first if sid not in new]
            placing.folded = folded
            placing.opening = {sid for sid in first if sid in new and new[sid].marker}
            placing.closing = closing
            known = {**KEPT.of(tenant, trace_id, placing.waited), **fresh}
            await _place(conn, placing, list(waiting.values()), known, {})
        else:
            await waiting_spans.wait(conn, list(waiting.values()))
            await waiting_spans.placed(conn, tenant, trace_id, folded)
    KEPT.keep(tenant, trace_id, [(new[sid], len(row[-2])) for sid, row in waiting.items()])
    if placing is None:
        return 0
    await _placed(placing, told)
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
        placing = Placing(tenant, trace_id, conn, spans, found, now)
        placing.waited = list(found)
        await _place(conn, placing, [], KEPT.of(tenant, trace_id, placing.waited), stored)
    await _placed(placing, None)
    return len(found)


async def _placed(placing: Placing, told: list[tuple[str, Task]] | None) -> None:
    """Once a pass has committed: its spans are kept no more, and its task events are told, or added to `told`."""
    KEPT.drop(placing.tenant, placing.trace_id, placing.found)
    events = task_events(placing)
    if told is None:
        await publish_tasks(events)
    else:
        told += events


def task_events(placing: Placing) -> list[tuple[str, Task]]:
    """The task events of a pass, in order: the tasks it started, then those it ended."""
    events = [("AgentTaskStarted", task) for task in placing.new_tasks]
    events += [(ENDED_EVENTS[task.status], task) for task in placing.new_tasks if task.status != TaskStatus.RUNNING]
    events += [(ENDED_EVENTS[task.status], task) for task in placing.ended if task not in placing.new_tasks]
    return events


async def owe_webhooks(conn: Any, placing: Placing) -> None:
    """What the pass owes the tenant's webhooks, written in its transaction: its task events, and STAND_IN when
    it hung spans under the trace's stand-in."""
    if not placing.hooks:
        return
    owed = [outbox.task_event(event, task) for event, task in task_events(placing)]
    if placing.under_stand_in and placing.stand_in is not None:
        owed.append(outbox.Owed(STAND_IN_EVENT, placing.now, {
            "tenant": placing.tenant, "traceId": placing.trace_id, "spans": len(placing.under_stand_in),
            "task": snapshot_of(placing.stand_in),
        }))
    await outbox.owe(conn, placing.tenant, placing.hooks, owed)


async def _place(conn: Any, placing: Placing, waiting: list[tuple], known: dict[str, Mapped],
                 stored: dict[str, str]) -> None:
    """The pass itself, given the rows of the export's spans that must still wait, the spans known as mapped and
    the bodies already read: once what it reads is read, its writes go out through a pipeline while the tasks
    and lines are made and sealed, so the database stores one part while Python makes the next."""
    tenant, spans, found = placing.tenant, placing.spans, placing.found
    async with Pipeline() as db:
        await placing.read(db, known, waiting, stored)
        placing.make_late()
        agents = sorted(placing.ids, key=lambda s: depth(s, found))
        for n, sid in enumerate(agents, 1):
            placing.make_agent(sid)
            if n % BREATHE_EVERY == 0:
                await db.breathe()
        placing.close(db)
        placing.store_tasks(db)
        priced = []
        for n, sid in enumerate(found, 1):
            if spans[sid].kind == TOOL:
                placing.tool_lines(sid, known.get(sid))
            elif spans[sid].kind == LLM:
                priced.append(placing.model_call(sid, known.get(sid)))
            if n % BREATHE_EVERY == 0:
                await db.breathe()
        if any(draft.cost_micros is None for draft, _, _ in priced):
            await db.drain()
            await prices.price_drafts(tenant, [(draft, at) for draft, at, _ in priced], conn)
        for draft, at, task in priced:
            placing.line(task, draft, at)
        await placing.seal(db)
    await owe_webhooks(conn, placing)


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
