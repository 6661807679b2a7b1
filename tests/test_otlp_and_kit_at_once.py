"""One tree written at once over OpenTelemetry and by the kit: a root agent opened by its start marker (SPEC 9.1),
then model calls sent as spans and sub-tasks started by the kit under it, all at the same time. A pass locks the
tree's root before it appends, as the kit does, so every line has a seq of its own, every sub-task a sequence of its
own, and the chain verifies."""

from __future__ import annotations

import asyncio

from tests.otlp_spans import agent, chat, export, marker, new_trace_id
from tests.shop import Shop
from tests.test_otlp_ingest import post, roots

EACH = 8


async def test_passes_and_the_kit_writing_one_tree_at_once_keep_one_chain(client):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")
    assert (await post(shop, export(marker(root)))).status_code == 200
    [task] = [r for r in await roots(shop) if r["agent"] == "Estimator"]

    calls = [chat(t, root.span_id, **{"agentlog.cost_micros": 10}) for _ in range(EACH)]
    answers = await asyncio.gather(*(post(shop, export(call)) for call in calls),
                                   *(shop.start(parent=task["id"], skill=f"Part{n}") for n in range(EACH)))

    assert [answer.status_code for answer in answers[:EACH]] == [200] * EACH
    assert sorted(child["sequence"] for child in answers[EACH:]) == list(range(1, EACH + 1))
    [task] = [r for r in await roots(shop) if r["id"] == task["id"]]
    assert task["modelCalls"] == EACH
    check = await shop.verify(task["id"])
    assert check["intact"] is True and check["lines"] == 1 + 2 * EACH
