"""Whole work trees read in one request: the shape, the steps and what each part cost, from the meter and the record."""

from __future__ import annotations

import pytest

from tests.shop import LINE_FIELDS, Shop


async def workshop(shop: Shop) -> dict[str, str]:
    """Mia's estimate, handed on: Parts (with Pads under it), then Quote, then Book.

    root: one turn (300). parts: a turn (200) and a tool whose own model call costs 50. pads: a turn (120).
    quote: two turns (80 + 20). book: nothing metered.
    """
    root = (await shop.start())["id"]
    parts = (await shop.start(parent=root, about="Parts for T-7", requester={"id": "sam", "name": "Sam"}))["id"]
    quote = (await shop.start(parent=root, about="Quote for T-7"))["id"]
    book = (await shop.start(parent=root, about="Book T-7"))["id"]
    pads = (await shop.start(parent=parts, about="Pads for T-7"))["id"]
    await shop.model_call(root, costMicros=300, inputTokens=1000, outputTokens=100)
    await shop.model_call(parts, costMicros=200, inputTokens=400, outputTokens=40)
    await shop.write("recordToolCall", {"task": parts, "tool": "PartsFor", "toolCallId": "c1", "input": {"fault": "brake"}})
    await shop.model_call(parts, byTool="PartsFor", costMicros=50, inputTokens=70, outputTokens=7, response={"text": "pads"})
    await shop.write("recordToolResult", {"task": parts, "tool": "PartsFor", "toolCallId": "c1", "output": ["pads"]})
    await shop.model_call(pads, costMicros=120, inputTokens=300, outputTokens=30)
    await shop.model_call(quote, costMicros=80, inputTokens=200, outputTokens=20)
    await shop.model_call(quote, costMicros=20, inputTokens=100, outputTokens=10)
    for task in (pads, parts, quote, book, root):
        await shop.end(task)
    return {"root": root, "parts": parts, "quote": quote, "book": book, "pads": pads}


@pytest.fixture
async def shop(client) -> Shop:
    shop = Shop(client)
    await shop.setup()
    return shop


async def test_children_come_in_the_order_they_were_handed_on_and_the_subtree_depth_first(shop):
    t = await workshop(shop)

    root = await shop.read(t["root"], shop.noor, "children { id sequence depth } subtree { id depth sequence }")

    assert [c["id"] for c in root["children"]] == [t["parts"], t["quote"], t["book"]]
    assert [c["sequence"] for c in root["children"]] == [1, 2, 3]
    assert {c["depth"] for c in root["children"]} == {1}
    assert [s["id"] for s in root["subtree"]] == [t["parts"], t["pads"], t["quote"], t["book"]]
    assert [s["depth"] for s in root["subtree"]] == [1, 2, 1, 1]


async def test_a_task_knows_its_parent_root_lineage_and_path(shop):
    t = await workshop(shop)

    pads = await shop.read(t["pads"], shop.noor, "depth sequence path parent { id } root { id depth } lineage { id }")
    root = await shop.read(t["root"], shop.noor, "depth sequence path parent { id } root { id } lineage { id }")

    assert pads["depth"] == 2 and pads["sequence"] == 1
    assert pads["path"] == f"{t['root']}/{t['parts']}/{t['pads']}"
    assert pads["parent"] == {"id": t["parts"]}
    assert pads["root"] == {"id": t["root"], "depth": 0}
    assert pads["lineage"] == [{"id": t["root"]}, {"id": t["parts"]}]
    assert root == {"depth": 0, "sequence": 1, "path": t["root"], "parent": None, "root": {"id": t["root"]},
                    "lineage": []}


COST = "cost { ownMicros allInMicros ownInputTokens ownOutputTokens allInInputTokens allInOutputTokens ownModelCalls allInModelCalls }"


async def test_cost_is_the_tasks_own_meter_and_all_in_everything_under_it(shop):
    t = await workshop(shop)

    root = await shop.read(t["root"], shop.noor, f"{COST} children {{ id {COST} children {{ {COST} }} }}")
    parts, quote, book = root["children"]

    assert root["cost"] == {
        "ownMicros": 300, "allInMicros": 770, "ownInputTokens": 1000, "ownOutputTokens": 100,
        "allInInputTokens": 2070, "allInOutputTokens": 207, "ownModelCalls": 1, "allInModelCalls": 6,
    }
    assert parts["cost"] == {
        "ownMicros": 250, "allInMicros": 370, "ownInputTokens": 470, "ownOutputTokens": 47,
        "allInInputTokens": 770, "allInOutputTokens": 77, "ownModelCalls": 2, "allInModelCalls": 3,
    }
    assert parts["children"][0]["cost"]["allInMicros"] == parts["children"][0]["cost"]["ownMicros"] == 120
    assert quote["cost"]["ownMicros"] == quote["cost"]["allInMicros"] == 100
    assert book["cost"] == {key: 0 for key in book["cost"]}


async def test_a_tools_model_call_counts_in_cost_and_model_calls_but_is_not_a_turn(shop):
    t = await workshop(shop)

    parts = await shop.read(t["parts"], shop.noor, "spentMicros modelCalls turns toolCalls inputTokens outputTokens")
    quote = await shop.read(t["quote"], shop.noor, "spentMicros modelCalls turns toolCalls inputTokens outputTokens")

    assert parts == {"spentMicros": 250, "modelCalls": 2, "turns": 1, "toolCalls": 1, "inputTokens": 470,
                     "outputTokens": 47}
    assert quote == {"spentMicros": 100, "modelCalls": 2, "turns": 2, "toolCalls": 0, "inputTokens": 300,
                     "outputTokens": 30}


async def test_calls_are_the_tasks_meter_rows_and_trace_its_own_lines(shop):
    t = await workshop(shop)

    parts = await shop.read(t["parts"], shop.noor, "id calls { costMicros turn byTool task { id } } "
                                                   "trace { kind seq costMicros call { costMicros } task { id } }")

    assert [(c["costMicros"], c["turn"], c["byTool"]) for c in parts["calls"]] == [(200, 1, None), (50, None, "PartsFor")]
    assert {c["task"]["id"] for c in parts["calls"]} == {t["parts"]}
    assert [line["kind"] for line in parts["trace"]] == ["STARTED", "MODEL_CALL", "TOOL_CALL", "MODEL_CALL",
                                                         "TOOL_RESULT", "ENDED"]
    seqs = [line["seq"] for line in parts["trace"]]
    assert seqs == sorted(seqs)
    assert [line["call"] and line["call"]["costMicros"] for line in parts["trace"]] == [None, 200, None, 50, None, None]
    assert {line["task"]["id"] for line in parts["trace"]} == {t["parts"]}


async def test_the_record_is_the_whole_trees_chain_read_from_any_of_its_tasks(shop):
    t = await workshop(shop)

    from_root = await shop.read(t["root"], shop.noor, "chainLength record { seq task { id } }")
    from_pads = await shop.read(t["pads"], shop.noor, "chainLength chainHead record { seq hash }")

    assert [line["seq"] for line in from_root["record"]] == list(range(1, from_root["chainLength"] + 1))
    assert {line["task"]["id"] for line in from_root["record"]} == set(t.values())
    assert [line["seq"] for line in from_pads["record"]] == list(range(1, from_pads["chainLength"] + 1))
    assert from_pads["chainHead"] == from_pads["record"][-1]["hash"]


async def test_a_line_reads_the_same_in_a_nested_tree_read_as_on_its_own(shop):
    t = await workshop(shop)

    alone = await shop.read(t["parts"], shop.noor, f"trace {{ {LINE_FIELDS} }}")
    nested = await shop.read(t["root"], shop.noor, "children { id trace { seq kind summary costMicros contentAccess } }")

    parts = next(c for c in nested["children"] if c["id"] == t["parts"])
    assert parts["trace"] == [
        {key: line[key] for key in ("seq", "kind", "summary", "costMicros", "contentAccess")} for line in alone["trace"]
    ]


async def test_every_line_field_reads_the_same_through_a_planned_read_as_through_a_whole_row(shop):
    t = await workshop(shop)
    fields = f"{LINE_FIELDS} task {{ id }} call {{ id costMicros }}"

    planned = await shop.read(t["root"], shop.noor, f"id trace {{ {fields} }} children {{ id trace {{ {fields} }} }}")
    whole = await shop.read(t["root"], shop.noor, f"record {{ seq task {{ id trace {{ {fields} }} }} }}")

    by_task = {line["task"]["id"]: line["task"]["trace"] for line in whole["record"]}
    assert planned["trace"] == by_task[t["root"]]
    assert all(child["trace"] == by_task[child["id"]] for child in planned["children"])
    assert any(line["call"] for line in planned["trace"])


async def test_the_requester_of_a_sub_task_reads_it_and_what_is_under_it_not_what_is_above(shop):
    t = await workshop(shop)
    sam = shop.person("sam", "Mechanic")

    parts = await shop.read(t["parts"], sam, "id parent { id } root { id } lineage { id } subtree { id } "
                                             "cost { allInMicros } record { seq task { id } }")

    assert parts["parent"] is None and parts["root"] is None and parts["lineage"] == []
    assert parts["subtree"] == [{"id": t["pads"]}]
    assert parts["cost"]["allInMicros"] == 370
    assert {line["task"]["id"] for line in parts["record"]} == {t["parts"], t["pads"]}
    assert await shop.read(t["root"], sam, "id") is None


async def test_a_figures_reader_reads_a_whole_tree_without_its_words(shop):
    t = await workshop(shop)
    accountant = shop.person("ann", "Accountant")

    root = await shop.read(t["root"], accountant, "about cost { allInMicros } children { about trace { summary kind } }")

    assert root["about"] is None and root["cost"]["allInMicros"] == 770
    assert all(child["about"] is None for child in root["children"])
    assert all(line["summary"] is None and line["kind"] for child in root["children"] for line in child["trace"])


async def grove(shop: Shop, trees: int) -> list[dict]:
    """`trees` small trees (a root, a child and a grandchild), each metered once per task."""
    grown = []
    for n in range(trees):
        root = (await shop.start(about=f"Ticket T-{n}"))["id"]
        child = (await shop.start(parent=root))["id"]
        grandchild = (await shop.start(parent=child))["id"]
        for task, micros in ((root, 1), (child, 10), (grandchild, 100 + n)):
            await shop.model_call(task, costMicros=micros)
        grown.append({"root": root, "child": child, "grandchild": grandchild, "n": n})
    return grown


async def test_many_trees_in_one_page_each_read_whole_with_their_own_costs(shop):
    grown = await grove(shop, 40)
    query = """{ tasks(first: 100, filter: {rootsOnly: true}) { edges { node {
      id cost { allInMicros } subtree { id } children { id cost { allInMicros } children { id cost { allInMicros } } }
    } } } }"""

    edges = (await shop.client.ok(query, token=shop.noor))["tasks"]["edges"]

    by_root = {edge["node"]["id"]: edge["node"] for edge in edges}
    assert len(by_root) == 40
    for tree in grown:
        node = by_root[tree["root"]]
        [child] = node["children"]
        [grandchild] = child["children"]
        assert (child["id"], grandchild["id"]) == (tree["child"], tree["grandchild"])
        assert [s["id"] for s in node["subtree"]] == [tree["child"], tree["grandchild"]]
        assert node["cost"]["allInMicros"] == 111 + tree["n"]
        assert child["cost"]["allInMicros"] == 110 + tree["n"]
        assert grandchild["cost"]["allInMicros"] == 100 + tree["n"]


async def test_costs_asked_deep_first_and_then_above_add_up_the_same(shop):
    t = await workshop(shop)

    first = await shop.client.ok(
        f'{{ pads: task(id: "{t["pads"]}") {{ cost {{ allInMicros }} }} '
        f'parts: task(id: "{t["parts"]}") {{ cost {{ allInMicros }} }} '
        f'root: task(id: "{t["root"]}") {{ cost {{ allInMicros }} }} }}',
        token=shop.noor,
    )

    assert {name: task["cost"]["allInMicros"] for name, task in first.items()} == {"pads": 120, "parts": 370, "root": 770}
