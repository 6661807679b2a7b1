"""`session`: a conversation's turns in order and what it cost all in, summed from the meter, as each person may
see it: Mia sees the turns she asked for and the totals of those, Noor the whole conversation, a stranger nothing."""

from __future__ import annotations

from tests.conversation import conversation
from tests.shop import Shop
from tests.statements import counted

SESSION = """query($id: String!) { session(id: $id) {
  id taskCount totalCostMicros inputTokens outputTokens modelCalls failedTasks startedAt endedAt moreTurns
  tasks { id about requester { id } outcome cost { allInMicros } }
} }"""


async def test_a_manager_reads_every_turn_in_order_and_the_whole_spend(client):
    shop, turns = await conversation(client)
    with counted() as sent:
        found = (await client.ok(SESSION, {"id": "chat-7"}, shop.noor))["session"]
    assert [t["id"] for t in found["tasks"]] == turns
    assert [t["requester"]["id"] for t in found["tasks"]] == ["mia", "mia", "noor"]
    assert found["taskCount"] == 4 and found["modelCalls"] == 8 and found["failedTasks"] == 1
    assert found["totalCostMicros"] == 600 + 1000 + 50 + 600
    assert (found["inputTokens"], found["outputTokens"]) == (360 + 10 + 1 + 360, 90 + 5 + 1 + 90)
    assert [t["cost"]["allInMicros"] for t in found["tasks"]] == [600, 1050, 600]
    assert found["endedAt"] is not None and found["moreTurns"] is False
    session_statements = [s for s in sent if "agent_task" in s or "llm_call" in s]
    assert len([s for s in session_statements if "session" in s]) == 2, sent


async def test_the_requester_sees_only_the_turns_they_asked_for_and_the_totals_of_those(client):
    shop, turns = await conversation(client)
    found = (await client.ok(SESSION, {"id": "chat-7"}, shop.mia))["session"]
    assert [t["id"] for t in found["tasks"]] == turns[:2]
    assert found["taskCount"] == 3 and found["totalCostMicros"] == 600 + 1000 + 50 and found["modelCalls"] == 5
    assert found["tasks"][1]["outcome"] == "No parts in stock."


async def test_a_figures_only_reader_sees_the_spend_and_no_words(client):
    shop, turns = await conversation(client)
    found = (await client.ok(SESSION, {"id": "chat-7"}, shop.person("ada", "Accountant")))["session"]
    assert [t["id"] for t in found["tasks"]] == turns and found["totalCostMicros"] == 2250
    assert {t["outcome"] for t in found["tasks"]} == {None} and {t["requester"] for t in found["tasks"]} == {None}


async def test_a_session_nobody_may_see_is_null_and_a_bad_id_is_bad_input(client):
    shop, _ = await conversation(client)
    assert (await client.ok(SESSION, {"id": "chat-7"}, Shop(client).person("mia", "Manager")))["session"] is None
    assert (await client.ok(SESSION, {"id": "chat-7"}, shop.person("eve", "Mechanic")))["session"] is None
    assert (await client.ok(SESSION, {"id": "no-such-chat"}, shop.noor))["session"] is None
    error = await client.error(SESSION, {"id": "x" * 300}, shop.noor)
    assert error["extensions"]["code"] == "BAD_INPUT" and error["extensions"]["field"] == "id"
