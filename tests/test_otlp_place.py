"""Where spans go, decided from what is known of their trace, without a database."""

import uuid

from resolvers.otlp.mapping import AGENT, LLM, OTHER, TOOL
from resolvers.otlp.place import (
    ROOT, STAND_IN, KnownSpan, UnderSpan, UnderTask, depth, passes, targets, tool_span_above, unknown_above,
)

NOW, WAIT = 1_000_000_000, 60_000_000
DUE = NOW - WAIT
TASK = uuid.uuid4()


def waiting(span_id: str, parent: str | None, kind: str, received: int = NOW) -> KnownSpan:
    return KnownSpan(span_id, parent, kind, received)


def placed(span_id: str, parent: str | None, kind: str, task_id: uuid.UUID | None = None,
           tool: str | None = None) -> KnownSpan:
    return KnownSpan(span_id, parent, kind, None, True, str(task_id) if task_id else None, tool)


def known(*spans: KnownSpan) -> dict[str, KnownSpan]:
    return {span.span_id: span for span in spans}


def test_a_span_goes_under_its_nearest_agent_placed_before_or_in_the_same_pass():
    spans = known(placed("root", None, AGENT, TASK), waiting("tool", "root", TOOL), waiting("call", "tool", LLM),
                  waiting("helper", "root", AGENT), waiting("inner", "helper", LLM))

    assert targets(spans, DUE) == {
        "tool": UnderTask(TASK), "call": UnderTask(TASK), "helper": UnderTask(TASK), "inner": UnderSpan("helper")}


def test_an_agent_without_a_parent_is_a_root_and_other_work_without_one_goes_under_the_stand_in():
    spans = known(waiting("root", None, AGENT), waiting("call", None, LLM), waiting("below", "root", TOOL))

    assert targets(spans, DUE) == {"root": ROOT, "call": STAND_IN, "below": UnderSpan("root")}


def test_a_span_whose_ancestry_breaks_off_waits_until_it_has_waited_long_enough():
    fresh = known(waiting("helper", "gone", AGENT), waiting("call", "helper", LLM))
    old = known(waiting("helper", "gone", AGENT, received=DUE), waiting("call", "helper", LLM))

    assert targets(fresh, DUE) == {}
    assert targets(old, DUE) == {"helper": STAND_IN, "call": UnderSpan("helper")}


def test_placed_spans_are_not_placed_again_and_spans_in_a_cycle_go_under_the_stand_in_rather_than_wait():
    spans = known(placed("root", None, AGENT, TASK), waiting("a", "b", LLM), waiting("b", "a", TOOL))

    assert targets(spans, DUE) == {"a": STAND_IN, "b": STAND_IN}


def test_what_is_looked_up_next_stops_at_an_agent_already_placed():
    spans = known(placed("helper", "root", AGENT, TASK), placed("tool", "helper2", TOOL), waiting("call", "tool", LLM),
                  waiting("agent", "far", AGENT))

    assert unknown_above(spans, looked_up={"gone"}) == {"helper2", "far"}
    assert unknown_above(spans, looked_up={"helper2", "far"}) == set()


def test_agents_are_made_parents_first_and_a_call_inside_a_tool_finds_it_through_folded_spans():
    found = {"a": ROOT, "b": UnderSpan("a"), "c": UnderSpan("b"), "d": UnderTask(TASK)}
    spans = known(placed("tool", None, TOOL, tool="PartsFor"), placed("wrapper", "tool", OTHER),
                  waiting("call", "wrapper", LLM), waiting("own", None, LLM))

    assert [depth(s, found) for s in "abcd"] == [0, 1, 2, 0]
    assert tool_span_above(spans, "call") == "tool" and tool_span_above(spans, "own") is None


def test_passes_go_parents_first_each_agent_with_its_own_work():
    spans = known(waiting("root", None, AGENT), waiting("r1", "root", LLM), waiting("a", "root", AGENT),
                  waiting("a1", "a", TOOL), waiting("a2", "a1", LLM), waiting("b", "root", AGENT),
                  waiting("b1", "b", LLM), waiting("c", "a", AGENT), placed("old", None, AGENT, TASK),
                  waiting("late", "old", LLM), waiting("lost", None, TOOL))
    found = targets(spans, DUE)

    cut = passes(spans, found, 4)

    assert cut == [["late", "lost", "root", "r1"], ["a", "a1", "a2"], ["b", "b1", "c"]]
    assert sorted(sum(cut, [])) == sorted(found)
    assert passes(spans, found, 100) == [sum(cut, [])]
