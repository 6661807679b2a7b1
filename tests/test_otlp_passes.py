"""A trace larger than one placing pass (`AGENTLOG_OTLP_PASS_SPANS`) is placed in passes, parents first: whole,
exactly once, each task's ENDED line its last, its chain verifying; the export that completes it is answered once
its own spans are stored; and every pass sends the same statements, however large the trace."""

import pytest

from models import LlmCall, OtlpSpan, TraceEvent
from models.record.vocabulary import LineKind
from resolvers.otlp.ingest import place_later, take_export
from resolvers.otlp.sweep import sweep
from resolvers.read.verify import verify_tree
from tests.otlp_spans import agent, chat, export, new_trace_id, tool
from tests.shop import Shop, work, work_lines
from tests.statements import counted
from tests.test_otlp_ingest import post

PASS = 9


def leads_then_root(leads: int, helpers: int):
    """A root agent, its leads and each lead's helpers, each agent with a model call and the helpers with a tool,
    all sent before the root, as exporters send them; the root alone in the last export."""
    t = new_trace_id()
    root = agent(t, "Estimator")
    waiting = [chat(t, root.span_id, **{"agentlog.cost_micros": 10})]
    for n in range(leads):
        lead = agent(t, f"Lead{n}", parent=root.span_id)
        for m in range(helpers):
            helper = agent(t, f"Helper{n}.{m}", parent=lead.span_id)
            waiting += [chat(t, helper.span_id, **{"agentlog.cost_micros": 10}), tool(t, helper.span_id), helper]
        waiting += [chat(t, lead.span_id, **{"agentlog.cost_micros": 10}), lead]
    return export(*waiting), export(root)


async def assert_placed_whole_once_and_in_order(tenant: str, leads: int, helpers: int) -> None:
    tasks = {task.id: task for task in await work(tenant)}
    names = sorted(task.agent for task in tasks.values())
    assert names == sorted(["Estimator", *(f"Lead{n}" for n in range(leads)),
                            *(f"Helper{n}.{m}" for n in range(leads) for m in range(helpers))])
    assert await LlmCall.filter(tenant=tenant).count() == 1 + leads + leads * helpers
    assert await TraceEvent.filter(tenant=tenant, kind=LineKind.TOOL_CALL).count() == leads * helpers
    assert await OtlpSpan.filter(tenant=tenant).count() == 0
    [root] = [task for task in tasks.values() if task.depth == 0]
    assert (await verify_tree(root)).intact
    lines = await work_lines(tenant).order_by("seq")
    assert [line.seq for line in lines] == list(range(1, root.chain_length + 1))
    started = {line.task_id: line.seq for line in lines if line.kind == LineKind.STARTED}
    for task in tasks.values():
        own = [line.kind for line in lines if line.task_id == task.id]
        assert (own[0], own[-1], own.count(LineKind.ENDED)) == (LineKind.STARTED, LineKind.ENDED, 1), task.agent
        if task.parent_id is not None:
            assert started[task.parent_id] < started[task.id], task.agent


@pytest.mark.parametrize("kept_mb", [32, 0])
async def test_a_trace_larger_than_a_pass_is_placed_whole_exactly_once_parents_first(client, configure, kept_mb):
    """Whether this process kept the waiting spans as mapped or each pass reads their bodies back."""
    configure(otlp_pass_spans=PASS, otlp_kept_mb=kept_mb)
    shop = Shop(client)
    await shop.setup()
    first, last = leads_then_root(3, 4)

    assert (await post(shop, first)).status_code == 200
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 3 * (4 * 3 + 2) + 1
    assert (await post(shop, last)).status_code == 200
    assert (await post(shop, last)).status_code == 200

    await assert_placed_whole_once_and_in_order(shop.tenant, 3, 4)


async def test_the_export_that_completes_a_large_trace_is_answered_once_its_own_spans_are_stored(client, configure):
    configure(otlp_pass_spans=PASS)
    shop = Shop(client)
    await shop.setup()
    first, last = leads_then_root(2, 5)
    waiting = 2 * (5 * 3 + 2) + 1
    await take_export(shop.tenant, first)

    taken = await take_export(shop.tenant, last)

    assert taken.taken == 1 and taken.later
    assert await work(shop.tenant).filter(agent="Estimator").count() == 1
    still = await OtlpSpan.filter(tenant=shop.tenant).count()
    assert 0 < still < waiting
    await place_later(taken.later)
    await assert_placed_whole_once_and_in_order(shop.tenant, 2, 5)


async def test_passes_that_fail_after_the_answer_are_placed_by_the_sweeps_next_round(client, configure, monkeypatch):
    configure(otlp_pass_spans=PASS)
    shop = Shop(client)
    await shop.setup()
    first, last = leads_then_root(2, 5)
    await take_export(shop.tenant, first)
    taken = await take_export(shop.tenant, last)

    async def broken(*args):
        raise ConnectionError("the database went away")

    with monkeypatch.context() as patched:
        patched.setattr("resolvers.otlp.ingest.place_pass", broken)
        await place_later(taken.later)
    assert await OtlpSpan.filter(tenant=shop.tenant).count() > 0

    await sweep()
    await assert_placed_whole_once_and_in_order(shop.tenant, 2, 5)


async def completing_statements(shop: Shop, helpers: int) -> int:
    """The statements of the export that completes a trace of a root and `helpers` helpers under it."""
    first, last = leads_then_root(0, 0)
    t = first.resource_spans[0].scope_spans[0].spans[0].trace_id
    root = last.resource_spans[0].scope_spans[0].spans[0]
    spans = []
    for n in range(helpers):
        helper = agent(t, f"Helper{n}", parent=root.span_id)
        spans += [chat(t, helper.span_id, **{"agentlog.cost_micros": 10}), tool(t, helper.span_id), helper]
    assert (await post(shop, export(*first.resource_spans[0].scope_spans[0].spans, *spans))).status_code == 200
    with counted() as sent:
        assert (await post(shop, last)).status_code == 200
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 0
    return len(sent)


async def test_every_pass_sends_the_same_statements_however_large_the_trace(client, configure):
    """The root and its model call, then three helpers of three spans a pass: 2 + 3k helpers make 1 + k passes."""
    configure(otlp_pass_spans=PASS)
    shop = Shop(client)
    await shop.setup()

    two, four, six = [await completing_statements(shop, 2 + 3 * k) for k in (2, 4, 6)]

    assert four - two == six - four > 0


async def test_a_pass_reads_the_bodies_it_needs_with_its_spans(client, configure):
    """Spans no process kept cost the first pass one read of their bodies, and every later pass none more than
    spans kept: a later pass reads the bodies with its spans, in the same statement."""
    configure(otlp_pass_spans=PASS)
    shop = Shop(client)
    await shop.setup()
    kept = [await completing_statements(shop, 2 + 3 * k) for k in (2, 6)]
    configure(otlp_kept_mb=0)

    read_back = [await completing_statements(shop, 2 + 3 * k) for k in (2, 6)]

    assert read_back[0] - kept[0] == read_back[1] - kept[1] == 1
