"""A task the kit starts and a task made from an agent's span are made by one rule: the same place in their tree,
the same session, and the same content kept or withheld, on the task and on its STARTED and ENDED lines."""

import pytest

from tests.otlp_spans import agent, export, new_trace_id
from tests.shop import Shop
from tests.test_otlp_ingest import post, roots

GIVEN, RESULT = "Ticket T-7: rear brake does not bite.", "New pads and a cable."
TASK = "id given result session depth sequence status record { kind payload contentAccess task { id } }"
TREE = f"query($id: ID!) {{ task(id: $id) {{ {TASK} children {{ {TASK} }} }} }}"


def seen(task: dict) -> tuple:
    own = [line for line in task["record"] if line["task"]["id"] == task["id"]]
    lines = [(line["kind"], line["payload"], line["contentAccess"]) for line in own if line["kind"] in ("STARTED", "ENDED")]
    return task["given"], task["result"], task["session"], task["depth"], task["sequence"], task["status"], lines


async def tree(shop: Shop, root: str) -> tuple:
    found = (await shop.client.ok(TREE, {"id": root}, shop.noor))["task"]
    return seen(found), [seen(child) for child in found["children"]]


async def started_by_the_kit(shop: Shop) -> tuple:
    root = (await shop.start(given=GIVEN, session="s-7"))["id"]
    child = (await shop.start(given=GIVEN, parent=root, requester=None))["id"]
    await shop.end(child, result=RESULT)
    await shop.end(root, result=RESULT)
    return await tree(shop, root)


async def made_from_spans(shop: Shop) -> tuple:
    t = new_trace_id()
    root = agent(t, "Estimator", **{"input.value": GIVEN, "output.value": RESULT, "gen_ai.conversation.id": "s-7"})
    child = agent(t, "Estimator", parent=root.span_id, **{"input.value": GIVEN, "output.value": RESULT})
    assert (await post(shop, export(child, root))).status_code == 200
    [made] = await roots(shop)
    return await tree(shop, made["id"])


@pytest.mark.parametrize("logging, record_content", [("FULL", True), ("METADATA_ONLY", True), ("FULL", False)])
async def test_the_kit_and_a_span_make_the_same_task(client, configure, logging, record_content):
    configure(record_content=record_content)
    by_kit, by_span = Shop(client), Shop(client)
    await by_kit.setup(logging=logging)
    await by_span.setup(logging=logging)

    kit_tree, span_tree = await started_by_the_kit(by_kit), await made_from_spans(by_span)

    assert kit_tree == span_tree
    shown = logging == "FULL" and record_content
    (given, result, session, *_), [child] = kit_tree
    assert (given, result, session) == ((GIVEN, RESULT, "s-7") if shown else (None, None, "s-7"))
    assert child[2] == "s-7" and child[3:5] == (1, 1)
