"""An export's own spans are looked up, and the waiting spans just below them read, in one statement
(`resolvers/otlp/store.py`, `known_and_below`); the levels further below, and the level below spans the export did
not carry, are read as before, a statement a level. Tried against reading every level by a statement of its own, in
the same pass on the same connection: for exports of any trace, in any order and replayed (the scenarios of
tests/test_otlp_nothing_lost.py), both find the same spans below and send every span to the same place."""

from __future__ import annotations

import pytest
from hypothesis import given

from resolvers.otlp import ingest
from tests.otlp_spans import agent, chat, export, new_trace_id, span
from tests.shop import Shop
from tests.statements import counted
from tests.test_otlp_ingest import post, roots
from tests.test_otlp_nothing_lost import IN_PROCESS, posted, scenarios

BELOW = ('"parent_span_id"=w.id', '"parent_span_id" IN (')


def comparing(agreed: list[bool]):
    """`with_waiting_below` as placing calls it, run first with nothing read before, on copies of what it is
    given; each call adds whether both ways agreed."""
    original = ingest.with_waiting_below

    async def both(conn, tenant, trace_id, spans, targets, new, due_us, read, read_of):
        alone = dict(spans)
        each = await original(conn, tenant, trace_id, alone, dict(targets), new, due_us, [], set())
        folded = await original(conn, tenant, trace_id, spans, targets, new, due_us, read, read_of)
        agreed.append(each == folded and alone == spans)
        return folded

    return both


@given(scenario=scenarios())
@IN_PROCESS
async def test_the_level_read_with_the_export_places_as_reading_each_level_does(client, scenario):
    shop = Shop(client)
    await shop.setup()
    agreed: list[bool] = []
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(ingest, "with_waiting_below", comparing(agreed))
        await posted(shop, scenario, "b")
    assert all(agreed)


async def test_an_agent_coming_after_its_waiting_work_reads_the_level_below_it_with_its_own_lookup(client):
    """A folded span placed on arrival and a model call waiting below it, then their agent: the level below the
    agent is read with the agent's own lookup, then one statement a level below that (the call, then nothing);
    the call is placed under the agent. Both ways of reading agree."""
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")
    wrapper = span(t, "turn", {}, parent=root.span_id)
    inside = chat(t, wrapper.span_id, **{"agentlog.cost_micros": 30})
    await post(shop, export(inside))
    await post(shop, export(wrapper))
    with counted() as sent:
        assert (await post(shop, export(root))).status_code == 200

    reads = [statement for statement in sent if any(by_parent in statement for by_parent in BELOW)]
    assert len(reads) == 3 and 'AS "below"' in reads[0]
    [task] = [r for r in await roots(shop) if r["agent"] == "Estimator"]
    assert task["modelCalls"] == 1
