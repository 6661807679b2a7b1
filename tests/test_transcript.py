"""What the agent saw, gated per agent, by default to nobody, and never shown in part."""

from __future__ import annotations

from typing import Any

import pytest

from permissions.tokens import issue_token
from tests.shop import ROLES, Shop
from tests.statements import counted

TOOL_FIELDS = "name toolCallId input output isError durationMs sequence"
TURN_FIELDS = (f"turn agent model at contentWithheld withheldReason systemPrompt messages response task {{ id }} "
               f"tools {{ {TOOL_FIELDS} }}")


async def transcript(shop: Shop, task: str, token: str | None) -> list[dict] | None:
    data = await shop.read(task, token, f"id transcript {{ {TURN_FIELDS} }}")
    return None if data is None else data["transcript"]


async def register(shop: Shop, name: str, roles: list[str], readers: list[str], logging: str = "FULL") -> None:
    await shop.write("registerAgent", {"name": name, "purpose": f"The {name}.", "roles": roles,
                                       "transcriptReaders": readers, "logging": logging})


async def ledger(shop: Shop) -> None:
    """The ledger: the Auditor holds Finance and lets Finance read what it saw; the Clerk names nobody."""
    await shop.setup()
    await register(shop, "Auditor", ["Finance"], ["Finance"])
    await register(shop, "Clerk", ["Finance"], [])


async def review(shop: Shop, agent: str = "Auditor", **start: Any) -> str:
    """One expense report reviewed: a turn that asks for the policy, the tool, and a turn that answers."""
    task = (await shop.start(agent=agent, skill="ReviewReport", **start))["id"]
    await shop.model_call(task, systemPrompt="You review expense reports against the travel policy.",
                          messages=[{"role": "user", "content": "Report R-9"}],
                          response={"toolCalls": [{"name": "PolicyFor"}]})
    await shop.tool(task, "PolicyFor", {"report": "R-9"}, {"limit": 150}, "p1")
    await shop.model_call(task, response={"text": "Within policy."})
    return task


async def test_finance_reads_the_auditor_agents_transcript_content_included(client):
    shop = Shop(client)
    await ledger(shop)
    task = await review(shop)
    fiona = shop.person("fiona", "Finance", "Manager")

    turns = await transcript(shop, task, fiona)
    receipt = await shop.read(task, fiona, "given record { payload contentAccess }")

    assert [(t["turn"], t["agent"], t["task"]["id"], t["contentWithheld"]) for t in turns] == [
        (1, "Auditor", task, False), (2, "Auditor", task, False)]
    assert turns[0]["systemPrompt"] == "You review expense reports against the travel policy."
    assert turns[0]["messages"] == [{"role": "user", "content": "Report R-9"}]
    assert turns[0]["response"] == {"toolCalls": [{"name": "PolicyFor"}]}
    assert turns[0]["withheldReason"] is None
    assert turns[0]["tools"] == [{"name": "PolicyFor", "toolCallId": "p1", "input": {"report": "R-9"},
                                  "output": {"limit": 150}, "isError": False, "durationMs": 7, "sequence": 1}]
    assert turns[1]["response"] == {"text": "Within policy."} and turns[1]["tools"] == []
    assert receipt["given"] is None and {line["contentAccess"] for line in receipt["record"]} == {"DENIED"}


@pytest.mark.parametrize("capability", ["requester", *ROLES])
async def test_whoever_reads_the_task_and_holds_finance_reads_the_transcript(client, capability):
    shop = Shop(client)
    await ledger(shop)
    task = await review(shop)
    token = shop.person("mia", "Finance") if capability == "requester" else shop.person("fin", "Finance", ROLES[capability])

    assert [t["turn"] for t in await transcript(shop, task, token)] == [1, 2]


@pytest.mark.parametrize("who", ["the requester", "an auditor", "a teacher", "a kit token carrying Finance"])
async def test_reading_the_task_or_its_content_is_not_enough_to_read_its_transcript(client, who):
    shop = Shop(client)
    await ledger(shop)
    task = await review(shop)
    token = {
        "the requester": shop.mia,
        "an auditor": shop.person("ada", "Auditor"),
        "a teacher": shop.person("tess", "Teacher"),
        "a kit token carrying Finance": issue_token("agent-kit", shop.tenant, roles=["Finance"], kit=True),
    }[who]

    assert await transcript(shop, task, token) == []
    assert (await shop.read(task, token, "id"))["id"] == task


async def test_holding_finance_is_not_enough_when_the_task_does_not_exist_for_you(client):
    shop = Shop(client)
    await ledger(shop)
    task = await review(shop)

    assert await transcript(shop, task, shop.person("fred", "Finance")) is None


async def test_an_agent_naming_no_reader_is_read_by_nobody_not_even_the_roles_it_holds(client):
    shop = Shop(client)
    await ledger(shop)
    task = await review(shop, agent="Clerk")
    everyone = shop.person("mia", "Finance", "Manager", "Auditor", "Teacher", "Accountant", "Privacy", "Helper")

    assert await transcript(shop, task, everyone) == []
    assert (await shop.read(task, everyone, "turns"))["turns"] == 2


async def test_one_refusing_agent_in_the_subtree_empties_the_transcript_never_partial(client):
    shop = Shop(client)
    await ledger(shop)
    await register(shop, "Clerk", ["Finance"], ["Bookkeeping"])
    root = await review(shop)
    by_auditor = await review(shop, parent=root)
    by_clerk = await review(shop, agent="Clerk", parent=root)
    fiona = shop.person("fiona", "Finance", "Manager")
    both = shop.person("bea", "Finance", "Bookkeeping", "Manager")

    assert await transcript(shop, root, fiona) == []
    assert await transcript(shop, by_clerk, fiona) == []
    assert [t["task"]["id"] for t in await transcript(shop, by_auditor, fiona)] == [by_auditor] * 2
    everything = await transcript(shop, root, both)
    assert [(t["task"]["id"], t["turn"]) for t in everything] == [
        (root, 1), (root, 2), (by_auditor, 1), (by_auditor, 2), (by_clerk, 1), (by_clerk, 2)]


async def test_the_transcript_of_a_task_holds_the_turns_of_everything_under_it_in_seq_order(client):
    shop = Shop(client)
    await ledger(shop)
    root = (await shop.start(agent="Auditor"))["id"]
    child = (await shop.start(agent="Auditor", parent=root))["id"]
    await shop.model_call(child, response={"text": "child one"})
    await shop.model_call(root, response={"text": "root one"})
    await shop.model_call(child, response={"text": "child two"})

    turns = await transcript(shop, root, shop.person("fiona", "Finance", "Manager"))

    assert [(t["task"]["id"], t["turn"], t["response"]["text"]) for t in turns] == [
        (child, 1, "child one"), (root, 1, "root one"), (child, 2, "child two")]


async def test_a_model_call_made_by_a_tool_is_not_a_turn_and_the_tool_stays_with_its_turn(client):
    shop = Shop(client)
    await ledger(shop)
    task = (await shop.start(agent="Auditor"))["id"]
    await shop.model_call(task)
    await shop.write("recordToolCall", {"task": task, "tool": "Summarise", "toolCallId": "s1", "input": "R-9"})
    await shop.model_call(task, byTool="Summarise", response={"text": "a summary"})
    await shop.write("recordToolResult", {"task": task, "tool": "Summarise", "toolCallId": "s1", "output": "short"})
    await shop.model_call(task, response={"text": "done"})

    turns = await transcript(shop, task, shop.person("fiona", "Finance", "Manager"))
    calls = (await shop.read(task, shop.noor, "calls { turn byTool }"))["calls"]

    assert [t["turn"] for t in turns] == [1, 2]
    assert [(x["name"], x["input"], x["output"]) for x in turns[0]["tools"]] == [("Summarise", "R-9", "short")]
    assert turns[1]["response"] == {"text": "done"}
    assert [c["turn"] for c in calls] == [1, None, 2]


async def tools_after(shop: Shop, writes: list[tuple[str, str, str | None, Any]]) -> list[dict]:
    """One turn, then these tool lines in this order; the turn's tools as the transcript pairs them."""
    task = (await shop.start(agent="Auditor"))["id"]
    await shop.model_call(task)
    for kind, tool, call_id, value in writes:
        if kind == "call":
            await shop.write("recordToolCall", {"task": task, "tool": tool, "toolCallId": call_id, "input": value})
        else:
            await shop.write("recordToolResult", {"task": task, "tool": tool, "toolCallId": call_id, "output": value,
                                                  "isError": value == "failed", "durationMs": 3})
    turns = await transcript(shop, task, shop.person("fiona", "Finance", "Manager"))
    return [{k: t[k] for k in ("name", "toolCallId", "input", "output", "isError", "sequence")} for t in turns[0]["tools"]]


async def test_tools_are_paired_with_their_results_by_tool_call_id_whatever_the_order(client):
    shop = Shop(client)
    await ledger(shop)

    tools = await tools_after(shop, [
        ("call", "Rates", "a", "EUR"), ("call", "Rates", "b", "USD"),
        ("result", "Rates", "b", 1.08), ("result", "Rates", "a", 1.0),
    ])

    assert tools == [
        {"name": "Rates", "toolCallId": "a", "input": "EUR", "output": 1.0, "isError": False, "sequence": 1},
        {"name": "Rates", "toolCallId": "b", "input": "USD", "output": 1.08, "isError": False, "sequence": 2},
    ]


async def test_tools_without_a_tool_call_id_are_paired_with_results_in_order(client):
    shop = Shop(client)
    await ledger(shop)

    tools = await tools_after(shop, [
        ("call", "Lookup", None, "first"), ("call", "Lookup", None, "second"),
        ("result", "Lookup", None, "failed"), ("result", "Lookup", None, "two"),
        ("call", "Lookup", None, "third"),
    ])

    assert [(t["input"], t["output"], t["isError"], t["sequence"]) for t in tools] == [
        ("first", "failed", True, 1), ("second", "two", False, 2), ("third", None, None, 3)]


async def test_a_call_with_an_id_does_not_take_another_calls_result(client):
    shop = Shop(client)
    await ledger(shop)

    tools = await tools_after(shop, [
        ("call", "Lookup", None, "R-9"), ("call", "Rates", "a", "EUR"),
        ("result", "Rates", "a", 1.0), ("result", "Lookup", None, "found"),
    ])

    assert [(t["toolCallId"], t["input"], t["output"]) for t in tools] == [(None, "R-9", "found"), ("a", "EUR", 1.0)]


async def statements_to_read_transcripts(shop: Shop, children: int) -> int:
    root = (await shop.start(agent="Auditor"))["id"]
    for n in range(children):
        child = (await shop.start(agent="Auditor" if n % 2 else "Estimator", parent=root))["id"]
        await shop.model_call(child)
    query = "{ tasks(first: 100) { edges { node { transcript { turn task { id } } " \
            "children { transcript { turn tools { name } } children { transcript { turn } } } } } } }"
    with counted() as seen:
        data = await shop.client.ok(query, token=shop.person("fiona", "Finance", "Workshop", "Manager"))
    nodes = [edge["node"] for edge in data["tasks"]["edges"]]
    assert sum(len(node["transcript"]) for node in nodes) == 2 * children
    return len(seen)


async def test_reading_transcripts_of_every_task_takes_as_many_statements_for_3_tasks_as_for_30(client):
    small, large = Shop(client), Shop(client)
    for shop in (small, large):
        await ledger(shop)
        await register(shop, "Estimator", [], ["Workshop"])

    assert await statements_to_read_transcripts(small, 3) == await statements_to_read_transcripts(large, 30)
