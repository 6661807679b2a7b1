"""What a placing pass writes, planned from what is known of its trace, without a database: the tasks it makes and
ends, its lines in the order they are appended, their meter turns, the reviews, the webhooks owed and the events
told."""

import uuid
from datetime import datetime, timezone

from models.record.vocabulary import LineKind, TaskStatus, WithheldReason
from resolvers.otlp.mapping import Mapped, map_span
from resolvers.otlp.place import STAND_IN_SPAN, KnownSpan, targets
from resolvers.otlp.planning import LATE_SKILL, STAND_IN_AGENT, Known, plan_pass, stand_in_after
from resolvers.webhooks.wanted import STAND_IN, Hooks
from resolvers.write.made_task import new_task
from tests.otlp_spans import agent, chat, new_trace_id, tool

NOW = datetime(2026, 12, 7, 9, 0, tzinfo=timezone.utc)
START_NS = 1_796_634_000_000_000_000
RESOURCE = {"service.name": "workshop"}
MIA = {"id": "mia", "name": "Mia"}


def timed(made, start_ms: int, length_ms: int = 5):
    """The span, started `start_ms` after START_NS and lasting `length_ms`."""
    made.start_time_unix_nano = START_NS + start_ms * 1_000_000
    made.end_time_unix_nano = made.start_time_unix_nano + length_ms * 1_000_000
    return made


def mapped(*spans) -> dict[str, Mapped]:
    return {m.span_id: m for m in (map_span(RESOURCE, s) for s in spans)}


def known_of(spans: dict[str, Mapped], stored: dict[str, KnownSpan] | None = None, **read) -> Known:
    """The pass that places every span of `spans`, as a fresh export's first pass knows them."""
    every = {**(stored or {}), **{sid: KnownSpan(sid, m.parent_span_id, m.kind, 0) for sid, m in spans.items()}}
    found = targets(every, 0)
    ids = {sid: uuid.uuid4() for sid in found if spans[sid].kind == "agent"}
    return Known(tenant="shop", trace_id=next(iter(spans.values())).trace_id, now=NOW, spans=every, found=found,
                 bodies={sid: m.body() for sid, m in spans.items()}, ids=ids, mapped=spans, **read)


def stored_task(agent_name: str = "Estimator", status: TaskStatus = TaskStatus.RUNNING):
    task, _ = new_task("shop", agent_name, "estimate", MIA, NOW, None, None)
    task.status = status
    return task


def kinds(plan) -> list[tuple[str, str]]:
    return [(line.task.agent, line.draft.kind) for line in plan.lines]


def test_an_agent_with_a_model_call_and_a_tool_is_one_task_its_lines_in_time_order():
    t = new_trace_id()
    root = timed(agent(t), 0, 1000)
    call = timed(chat(t, root.span_id), 1)
    parts = timed(tool(t, root.span_id), 20)
    planned = plan_pass(known_of(mapped(root, call, parts)))
    plan = planned.plan

    [task] = plan.made
    assert (task.agent, task.status, task.parent_id, plan.roots) == ("Estimator", TaskStatus.DONE, None, {task.id: task})
    assert kinds(plan) == [("Estimator", LineKind.STARTED), ("Estimator", LineKind.MODEL_CALL),
                           ("Estimator", LineKind.TOOL_CALL), ("Estimator", LineKind.TOOL_RESULT),
                           ("Estimator", LineKind.ENDED)]
    call_line = plan.lines[1]
    assert (call_line.turn, call_line.draft.model, call_line.draft.input_tokens) == (1, "Everyday", 120)
    assert [line.turn for line in plan.lines if line is not call_line] == [None] * 4
    assert planned.events == [("AgentTaskStarted", task), ("AgentTaskFinished", task)]
    assert (plan.closed, plan.ended, plan.owed, planned.stand_in) == ([], [], [], None)


def test_an_agents_ended_line_follows_its_work_whatever_the_exporters_clock_said():
    t = new_trace_id()
    root = timed(agent(t), 0, 1)
    call = timed(chat(t, root.span_id), 5)
    plan = plan_pass(known_of(mapped(root, call))).plan

    assert [line.draft.kind for line in plan.lines] == [LineKind.STARTED, LineKind.MODEL_CALL, LineKind.ENDED]


def test_model_calls_under_a_running_task_stored_before_are_numbered_after_its_last_turn():
    t = new_trace_id()
    stored = stored_task()
    root = agent(t)
    first = timed(chat(t, root.span_id), 0)
    inside = timed(tool(t, root.span_id), 10, 10)
    by_tool = timed(chat(t, inside.span_id, model="Small"), 11)
    second = timed(chat(t, root.span_id), 30)
    spans = mapped(first, inside, by_tool, second)
    placed_root = {root.span_id.hex(): KnownSpan(root.span_id.hex(), None, "agent", None, True, str(stored.id))}
    plan = plan_pass(known_of(spans, placed_root, tasks={stored.id: stored}, roots={stored.id: stored},
                              turns={stored.id: 3})).plan

    assert plan.made == [] and {line.task.id for line in plan.lines} == {stored.id}
    assert [(line.draft.kind, line.draft.by_tool, line.turn) for line in plan.lines] == [
        (LineKind.MODEL_CALL, None, 4), (LineKind.TOOL_CALL, None, None), (LineKind.MODEL_CALL, "PartsFor", None),
        (LineKind.TOOL_RESULT, None, None), (LineKind.MODEL_CALL, None, 5)]


def test_work_that_comes_after_its_task_ended_is_late_work_under_it_by_the_same_agent():
    t = new_trace_id()
    ended = stored_task(status=TaskStatus.DONE)
    root = agent(t)
    late = chat(t, root.span_id)
    placed_root = {root.span_id.hex(): KnownSpan(root.span_id.hex(), None, "agent", None, True, str(ended.id))}
    planned = plan_pass(known_of(mapped(late), placed_root, tasks={ended.id: ended}, roots={ended.id: ended},
                                 children={ended.id: 2}))

    [work] = planned.plan.made
    assert (work.agent, work.skill, work.parent_id, work.sequence, work.status) == (
        "Estimator", LATE_SKILL, ended.id, 3, TaskStatus.DONE)
    assert kinds(planned.plan) == [("Estimator", LineKind.STARTED), ("Estimator", LineKind.MODEL_CALL),
                                   ("Estimator", LineKind.ENDED)]
    assert planned.events == [("AgentTaskStarted", work), ("AgentTaskFinished", work)]


def test_work_with_no_agent_above_goes_under_a_stand_in_ended_when_nothing_of_its_trace_waits():
    t = new_trace_id()
    call = timed(chat(t, b""), -1000)
    hooks = Hooks({STAND_IN: (uuid.uuid4(),), "AgentTaskStarted": (uuid.uuid4(),)})
    known = known_of(mapped(call), {STAND_IN_SPAN: KnownSpan(STAND_IN_SPAN, None, "other", None, True)},
                     hooks=hooks, nothing_left=True)
    assert stand_in_after(known)
    planned = plan_pass(known)

    [stand_in] = planned.plan.made
    assert (stand_in.agent, stand_in.status, stand_in.ended_at) == (STAND_IN_AGENT, TaskStatus.DONE, NOW)
    assert (planned.stand_in, planned.stand_in_made, planned.stand_in_ends) == (stand_in, True, True)
    assert planned.under_stand_in == [call.span_id.hex()]
    assert kinds(planned.plan) == [(STAND_IN_AGENT, LineKind.STARTED), (STAND_IN_AGENT, LineKind.MODEL_CALL),
                                   (STAND_IN_AGENT, LineKind.ENDED)]
    assert planned.plan.lines[-1].at == NOW and planned.plan.ended == []
    assert [owed.event for owed in planned.plan.owed] == ["AgentTaskStarted", "AgentTaskFinished", STAND_IN]
    assert planned.plan.owed[-1].data["spans"] == 1


def test_a_stand_in_stored_before_is_ended_by_the_pass_that_leaves_nothing_waiting():
    t = new_trace_id()
    stand_in = stored_task(STAND_IN_AGENT)
    call = chat(t, b"")
    entry = {STAND_IN_SPAN: KnownSpan(STAND_IN_SPAN, None, "other", None, True, str(stand_in.id))}
    planned = plan_pass(known_of(mapped(call), entry, tasks={stand_in.id: stand_in},
                                 roots={stand_in.id: stand_in}, stand_in=stand_in, nothing_left=True))

    assert planned.plan.made == [] and planned.plan.ended == [stand_in]
    assert (stand_in.status, planned.stand_in_made, planned.stand_in_ends) == (TaskStatus.DONE, False, True)
    assert planned.events == [("AgentTaskFinished", stand_in)]
    assert planned.plan.owed == []


def test_an_agent_whose_logging_keeps_metadata_only_plans_no_content_and_an_evaluation_plans_a_review():
    t = new_trace_id()
    root = agent(t, **{"gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": "Quote"}]}]})
    call = chat(t, root.span_id)
    spans = mapped(root, call)
    spans[root.span_id.hex()].fields["evaluations"] = [{"evaluator": "tone", "score": 0.9, "label": "kind"}]
    plan = plan_pass(known_of(spans, logging={"Estimator": WithheldReason.METADATA_ONLY})).plan

    assert {line.withheld for line in plan.lines} == {WithheldReason.METADATA_ONLY}
    assert plan.made[0].given is None
    reviewed = plan.lines[-1]
    assert reviewed.draft.kind == LineKind.REVIEWED and (reviewed.review.evaluator, reviewed.review.score) == (
        "tone", 0.9)
