"""OTLP evaluation results (SPEC 9.3): an evaluator's `gen_ai.evaluation.result` on the Estimator's span becomes a
review by the kit, named for its evaluator, whose REVIEWED line follows the task's ENDED line."""

from __future__ import annotations

from tests.otlp_spans import agent, chat, export, new_trace_id
from tests.shop import Shop
from tests.test_otlp_ingest import post, roots

EVALUATION = {"gen_ai.evaluation.name": "relevance", "gen_ai.evaluation.score.value": 0.8,
              "gen_ai.evaluation.score.label": "relevant"}
REVIEWS = ("reviews { by { id name } verdict score note evaluator } reviewCount record { kind summary }")


async def test_an_evaluation_result_becomes_a_review_after_the_ended_line(client):
    shop = Shop(client)
    await shop.setup()
    trace = new_trace_id()
    root = agent(trace, **{"agentlog.skill": "EstimateRepair"})
    root.events.add(name="gen_ai.evaluation.result", time_unix_nano=root.end_time_unix_nano)
    for key, value in EVALUATION.items():
        attribute = root.events[0].attributes.add(key=key)
        if isinstance(value, float):
            attribute.value.double_value = value
        else:
            attribute.value.string_value = value

    response = await post(shop, export(root, chat(trace, root.span_id)))

    assert response.status_code == 200
    [task] = await roots(shop)
    read = await shop.read(task["id"], shop.noor, REVIEWS)
    assert read["reviews"] == [{"by": {"id": "kit", "name": None}, "verdict": "NOTED", "score": 0.8,
                                "note": "relevant", "evaluator": "relevance"}]
    assert [line["kind"] for line in read["record"]][-2:] == ["ENDED", "REVIEWED"]
    assert read["record"][-1]["summary"] == 'The evaluator relevance, through kit, noted this work, scoring it 0.8: "relevant"'
    assert (await shop.verify(task["id"]))["intact"] is True
