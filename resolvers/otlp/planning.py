"""Planning one placing pass: what is known of a trace in, what the pass writes out, no database.

`plan_pass` takes the spans the pass places, where each goes (`place.targets`), their bodies, and what was read
of the trace under its lock (the tasks they go under and their roots, children and last turns, the agents'
logging, the tenant's webhooks, the trace's stand-in), and makes the write path's `Plan`: the tasks to make
(agents, late work, the stand-in), those to end, every line drafted and in the order it is appended, the reviews
and the webhooks owed; beside it, the task events to tell once it has committed.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from models.record.chain import compact_json
from models.record.vocabulary import LineKind, TaskStatus
from resolvers.events.notices import ENDED_EVENTS, snapshot_of
from resolvers.otlp.mapping import FROM_ITS_CALLS, LLM, TOOL, Mapped, drafts_of, told_by_its_calls
from resolvers.otlp.place import ROOT, Spans, Target, UnderSpan, UnderStandIn, UnderTask, depth, tool_span_above
from resolvers.webhooks import outbox
from resolvers.webhooks.wanted import NO_HOOKS, STAND_IN as STAND_IN_EVENT, Hooks
from resolvers.write import made_task, sentences
from resolvers.write.draft import LineDraft
from resolvers.write.made_task import MadeTask
from resolvers.write.plan import EVALUATED_BY, Plan, PlannedLine, PlannedReview
from resolvers.write.withheld import withheld_reason

STAND_IN_AGENT = "unknown"
LATE_SKILL = "late work"
RANKS = {LineKind.STARTED: 0, LineKind.MODEL_CALL: 1, LineKind.TOOL_CALL: 1, LineKind.TOOL_RESULT: 2,
         LineKind.ENDED: 3, LineKind.REVIEWED: 4}
AFTER_WORK = (LineKind.ENDED, LineKind.REVIEWED)
Task = Any
Event = tuple[str, Task]


def time_of(ns: int) -> datetime:
    return datetime.fromtimestamp(ns / 1e9, timezone.utc)


@dataclass(slots=True)
class Known:
    """What a pass knows before it plans. `found`: where each span it places goes (one under a task since
    forgotten goes under the stand-in); `bodies`: those spans' bodies; `mapped`: the spans known as mapped, whose
    drafts are used as they are; `ids`: the task each agent span becomes. Of the trace, as read under its lock:
    the tasks stored before that its spans go under (with the stand-in and the tasks start markers opened), their
    trees' roots, each task's children and last turn, each agent's logging, the tenant's webhooks; the stand-in
    while it runs; and whether nothing of the trace waits once this pass is placed (`nothing_left`). `opening`:
    agent spans a start marker opens, their tasks left running; `closing`: the tasks start markers opened whose
    spans came now, by span id."""

    tenant: str
    trace_id: str
    now: datetime
    spans: Spans
    found: dict[str, Target]
    bodies: dict[str, dict[str, Any]]
    ids: dict[str, uuid.UUID]
    mapped: dict[str, Mapped] = field(default_factory=dict)
    tasks: dict[uuid.UUID, Task] = field(default_factory=dict)
    roots: dict[uuid.UUID, Task] = field(default_factory=dict)
    children: dict[uuid.UUID, int] = field(default_factory=dict)
    turns: dict[uuid.UUID, int] = field(default_factory=dict)
    logging: dict[str, str | None] = field(default_factory=dict)
    hooks: Hooks = NO_HOOKS
    stand_in: Task | None = None
    nothing_left: bool = False
    opening: frozenset[str] = frozenset()
    closing: dict[str, tuple[uuid.UUID, Mapped]] = field(default_factory=dict)


@dataclass(slots=True)
class Planned:
    """A pass planned: what it writes (`plan`), the task events to tell once it has committed, the trace's
    stand-in after it (None: none runs), whether it made or ended that stand-in, and the spans it hung there."""

    plan: Plan
    events: list[Event]
    stand_in: Task | None
    stand_in_made: bool
    stand_in_ends: bool
    under_stand_in: list[str]


def under_stand_in(found: dict[str, Target]) -> list[str]:
    return [sid for sid, target in found.items() if isinstance(target, UnderStandIn)]


def stand_in_after(known: Known) -> bool:
    """Whether the trace has a stand-in once this pass is placed: one running, or one this pass makes."""
    return known.stand_in is not None or bool(under_stand_in(known.found))


def plan_pass(known: Known) -> Planned:
    """The pass, planned: its tasks made (late work first, then its agents, parents before children), the tasks
    start markers opened closed, its tools' and model calls' lines, the stand-in made or ended; every line
    sorted by tree and time, STARTED before work before ENDED (an ENDED line no earlier than its task's last
    other line, whatever the span's clock said), and each agent's model calls numbered after its last turn."""
    return _Planning(known).planned()


class _Planning:
    """The state of one plan being made; `planned` runs its steps in their one order."""

    def __init__(self, known: Known) -> None:
        self.known = known
        self.plan = Plan(known.tenant, roots=dict(known.roots))
        self.tasks: dict[uuid.UUID, Task] = dict(known.tasks)
        self.children = dict(known.children)
        self.made: dict[str, MadeTask] = {}
        self.late: dict[uuid.UUID, MadeTask] = {}
        self.reasons: dict[str, str | None] = {}
        self.lines: list[PlannedLine] = []
        self.ended: list[Task] = []
        self.stand_in = known.stand_in
        self.stand_in_made = False

    def planned(self) -> Planned:
        known, found = self.known, self.known.found
        under = under_stand_in(found)
        if under and self.stand_in is None:
            self.stand_in = self.make_stand_in(time_of(min(known.bodies[sid]["start"] for sid in under)))
            self.stand_in_made = True
        stand_in_ends = self.stand_in is not None and known.nothing_left
        self.make_late()
        for sid in sorted(known.ids, key=lambda s: depth(s, found)):
            self.make_agent(sid)
        self.close()
        if stand_in_ends:
            self.stand_in.status, self.stand_in.ended_at = TaskStatus.DONE, known.now
            if not self.stand_in_made:
                self.plan.ended.append(self.stand_in)
            self.ended.append(self.stand_in)
        calls = []
        for sid in found:
            kind = known.spans[sid].kind
            if kind == TOOL:
                self.tool_lines(sid)
            elif kind == LLM:
                calls.append(self.model_call(sid))
        for task, draft, at in calls:
            self.line(task, draft, at)
        lines = in_order(self.lines)
        if stand_in_ends:
            lines.append(self.stand_in_ended(lines))
        self.plan.lines = numbered(lines, known.turns)
        events = self.events()
        if known.hooks:
            self.plan.owed = self.owed(events, under)
        return Planned(self.plan, events, self.stand_in, self.stand_in_made, stand_in_ends, under)

    def parent_of(self, target: Target) -> Task | None:
        if target is ROOT:
            return None
        if isinstance(target, UnderStandIn):
            return self.stand_in
        if isinstance(target, UnderTask):
            return self.tasks[target.task_id]
        return self.made[target.span_id]

    def make_agent(self, sid: str) -> None:
        known = self.known
        body = known.bodies[sid]
        f = body["fields"]
        if f.get(FROM_ITS_CALLS):
            f = told_by_its_calls(f, self.own_calls(sid))
        end = None if sid in known.opening else time_of(body["end"])
        self.made[sid] = self.make_task(self.parent_of(known.found[sid]), f, time_of(body["start"]), end,
                                        body["failed"], body["statusMessage"], f.get("actor") or f["agent"],
                                        known.ids[sid])

    def own_calls(self, sid: str) -> list[dict[str, Any]]:
        """The bodies of the model calls placed under this agent span in this pass, those made inside its tools
        left out: an agent span comes in the pass of its own model calls."""
        known, under = self.known, UnderSpan(sid)
        return [known.bodies[call] for call, target in known.found.items()
                if target == under and known.spans[call].kind == LLM and self.tool_above(call) is None]

    def make_late(self) -> None:
        """Lines this pass would add to a task that has ended go to a task of their own under it, one per ended
        task and pass, made by the same agent and ended at once: no record goes on after its ENDED line, and
        the late work stays with the agent it belonged to."""
        known = self.known
        late: dict[uuid.UUID, list[str]] = {}
        for sid, target in known.found.items():
            if (isinstance(target, UnderTask) and known.spans[sid].kind in (LLM, TOOL)
                    and self.tasks[target.task_id].status != TaskStatus.RUNNING):
                late.setdefault(target.task_id, []).append(sid)
        for task_id, sids in late.items():
            ended = self.tasks[task_id]
            fields = {"agent": ended.agent, "skill": LATE_SKILL, "session": ended.session}
            start = time_of(min(known.bodies[sid]["start"] for sid in sids))
            end = time_of(max(known.bodies[sid]["end"] for sid in sids))
            self.late[task_id] = self.make_task(ended, fields, start, end, False, None, ended.actor_id)

    def task_of(self, sid: str) -> Task:
        """The task a model call or tool span's lines go to: its agent's, or that agent's late work."""
        target = self.known.found[sid]
        if isinstance(target, UnderTask) and target.task_id in self.late:
            return self.late[target.task_id]
        return self.parent_of(target)

    def make_stand_in(self, at: datetime) -> MadeTask:
        """The trace's stand-in: running while anything of its trace waits, ended by the pass that leaves
        nothing waiting."""
        fields = {"agent": STAND_IN_AGENT, "skill": STAND_IN_AGENT}
        return self.make_task(None, fields, at, None, False, None, STAND_IN_AGENT)

    def drafts(self, sid: str, kind: str, fields: dict[str, Any] | None = None) -> tuple[LineDraft, ...]:
        """A span's drafts: as mapped, or drafted again from its stored body (or from `fields` given)."""
        mapped = self.known.mapped.get(sid)
        if fields is None and mapped is not None:
            return mapped.drafts
        return drafts_of(kind, fields if fields is not None else self.known.bodies[sid]["fields"])

    def tool_lines(self, sid: str) -> None:
        body = self.known.bodies[sid]
        task = self.task_of(sid)
        call, result = self.drafts(sid, TOOL)
        self.line(task, call, time_of(body["start"]))
        self.line(task, result, time_of(body["end"]))

    def model_call(self, sid: str) -> tuple[Task, LineDraft, datetime]:
        """The model call's task, draft and time; a call made inside a tool span is that tool's."""
        body = self.known.bodies[sid]
        tool = self.tool_above(sid)
        fields = None if tool is None else {**body["fields"], "by_tool": tool}
        return self.task_of(sid), self.drafts(sid, LLM, fields)[0], time_of(body["end"])

    def tool_above(self, sid: str) -> str | None:
        """The tool of the nearest mapped span above, when that span is a tool span: placed in this pass, or
        placed earlier and kept its tool's name."""
        known = self.known
        parent = tool_span_above(known.spans, sid)
        if parent is None:
            return None
        return known.bodies[parent]["fields"]["tool"] if parent in known.bodies else known.spans[parent].tool

    def close(self) -> None:
        """The tasks start markers opened whose spans came in this pass end as their spans say, the ENDED line
        after the lines this pass adds to them."""
        for task_id, span in self.known.closing.values():
            task = self.tasks.get(task_id)
            if task is None or task.status != TaskStatus.RUNNING:
                continue
            result = span.fields.get("result")
            task.status = TaskStatus.FAILED if span.failed else TaskStatus.DONE
            task.ended_at, task.outcome = time_of(span.end_ns), span.status_message if span.failed else None
            task.result = None if result is None or self.withheld(task.agent) else compact_json(result)
            self.plan.closed.append(task)
            self.line(task, LineDraft(LineKind.ENDED, sentences.ended(task.status), task.result), task.ended_at)
            self.ended.append(task)

    def withheld(self, agent: str) -> str | None:
        """Decided once per agent in a pass."""
        if agent not in self.reasons:
            self.reasons[agent] = withheld_reason(self.known.logging.get(agent))
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
            self.known.tenant, fields["agent"], fields["skill"], {"id": actor, "name": None}, start,
            self.withheld(fields["agent"]), parent, self.children.get(parent.id, 0) if parent else 0,
            task_id=task_id, requester=requester, cause="SPAWN" if parent else "REQUEST", given=fields.get("given"),
            result=None if result is None else compact_json(result), status=status, ended_at=end,
            outcome=message if failed else None, session=fields.get("session"),
        )
        if parent is not None:
            self.children[parent.id] = task.sequence
        else:
            self.plan.roots[task.id] = task
        self.tasks[task.id] = task
        self.plan.made.append(task)
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
        self.lines[-1].review = PlannedReview(evaluation["evaluator"], evaluation["score"], evaluation["label"], at)

    def line(self, task: Task, draft: LineDraft, at: datetime) -> None:
        self.lines.append(PlannedLine(task, at, draft, self.withheld(task.agent)))

    def stand_in_ended(self, lines: list[PlannedLine]) -> PlannedLine:
        """The stand-in's ENDED line, after every other line of its tree in this pass."""
        stand_in = self.stand_in
        at = max([self.known.now] + [p.at for p in lines if p.task.root_id == stand_in.root_id])
        draft = LineDraft(LineKind.ENDED, sentences.ended(TaskStatus.DONE), None)
        return PlannedLine(stand_in, at, draft, self.withheld(stand_in.agent))

    def events(self) -> list[Event]:
        """The task events of the pass, in order: the tasks it started, then those it ended."""
        made = self.plan.made
        events = [("AgentTaskStarted", task) for task in made]
        events += [(ENDED_EVENTS[task.status], task) for task in made if task.status != TaskStatus.RUNNING]
        events += [(ENDED_EVENTS[task.status], task) for task in self.ended if task not in made]
        return events

    def owed(self, events: list[Event], under: list[str]) -> list[outbox.Owed]:
        """What the pass owes the tenant's webhooks: its task events, and STAND_IN when it hung spans under the
        trace's stand-in."""
        known = self.known
        owed = [outbox.task_event(event, task) for event, task in events]
        if under and self.stand_in is not None:
            owed.append(outbox.Owed(STAND_IN_EVENT, known.now, {
                "tenant": known.tenant, "traceId": known.trace_id, "spans": len(under),
                "task": snapshot_of(self.stand_in),
            }))
        return owed


def in_order(lines: list[PlannedLine]) -> list[PlannedLine]:
    """Lines sorted by tree, then time, then STARTED before work before ENDED and REVIEWED, then as planned; an
    ENDED or REVIEWED line sorts no earlier than its task's last other line."""
    last: dict[uuid.UUID, datetime] = {}
    for planned in lines:
        if planned.draft.kind not in AFTER_WORK:
            task_id = planned.task.id
            last[task_id] = max(planned.at, last.get(task_id, planned.at))

    def key(item: tuple[int, PlannedLine]) -> tuple:
        order, planned = item
        at, kind = planned.at, planned.draft.kind
        if kind in AFTER_WORK:
            at = max(at, last.get(planned.task.id, at))
        return (planned.task.root_id, at, RANKS[kind], order)

    return [planned for _, planned in sorted(enumerate(lines), key=key)]


def numbered(lines: list[PlannedLine], last_turns: dict[uuid.UUID, int]) -> list[PlannedLine]:
    """Each agent's model calls numbered, in order, after its task's last turn; a call made inside a tool has
    none."""
    turns = dict(last_turns)
    for planned in lines:
        draft = planned.draft
        if draft.call is not None and draft.by_tool is None:
            task_id = planned.task.id
            planned.turn = turns[task_id] = turns.get(task_id, 0) + 1
    return lines
