"""stopTask: Noor (a Manager, who supervises the agents) or Mia (who asked) asks the Estimator's work to stop; the
record says who and why, and every later kit write to that work or below it is recorded and answers the stop."""

import orjson

from models.record.export_check import check_export
from models.record.note import verifier_from_key
from resolvers.events.notices import add_publisher, remove_publisher
from tests.shop import Shop

STOP = "mutation($input: StopTaskInput!) { stopTask(input: $input) { id status stopAsked { by { id name } reason at } } }"
MODEL_CALL = """mutation($input: ModelCallInput!) { recordModelCall(input: $input) { seq kind } }"""
START = "mutation($input: StartTaskInput!) { startTask(input: $input) { id } }"


async def stop(shop: Shop, task: str, token: str, reason: str = "The customer collected the bike.", **more) -> dict:
    return await shop.client.post(STOP, {"input": {"task": task, "reason": reason, **more}}, token)


async def model_call(shop: Shop, task: str) -> dict:
    input = {"task": task, "model": "Everyday", "inputTokens": 120, "outputTokens": 30, "costMicros": 200}
    return await shop.client.post(MODEL_CALL, {"input": input}, shop.kit)


async def sub_task(shop: Shop, parent: str) -> str:
    input = {"agent": "Estimator", "skill": "FindParts", "parent": parent, "actor": {"id": "estimator"}}
    return (await shop.client.ok(START, {"input": input}, shop.kit))["startTask"]["id"]


async def test_noor_stops_the_work_and_its_next_write_is_recorded_and_answers_the_stop(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    await shop.model_call(task)

    asked = await stop(shop, task, shop.noor)

    ask = asked["data"]["stopTask"]["stopAsked"]
    assert asked["data"]["stopTask"]["status"] == "RUNNING"
    assert (ask["by"], ask["reason"]) == ({"id": "noor", "name": "Noor"}, "The customer collected the bike.")
    answered = await model_call(shop, task)
    assert answered["data"]["recordModelCall"]["kind"] == "MODEL_CALL"
    assert answered["extensions"]["stopAsked"] == {
        "by": {"id": "noor", "name": "Noor"}, "reason": "The customer collected the bike.", "at": ask["at"]}
    record = (await shop.read(task, shop.noor, "trace { kind summary } stopAsked { reason } spentMicros"))
    assert [(line["kind"], line["summary"]) for line in record["trace"]][2:] == [
        ("STOP_ASKED", "Noor asked the work to stop: The customer collected the bike."),
        ("MODEL_CALL", record["trace"][3]["summary"]),
    ]
    assert record["stopAsked"] == {"reason": "The customer collected the bike."} and record["spentMicros"] == 400
    assert (await shop.verify(task))["intact"]


async def test_work_not_asked_to_stop_answers_no_stop(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]

    answered = await model_call(shop, task)

    assert "stopAsked" not in (answered.get("extensions") or {})
    assert (await shop.read(task, shop.noor, "stopAsked { reason }"))["stopAsked"] is None


async def test_a_stop_reaches_the_work_below_and_not_the_work_above(client):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start())["id"]
    middle = await sub_task(shop, root)
    below = await sub_task(shop, middle)

    await stop(shop, middle, shop.noor, "Wrong parts list.")

    assert (await model_call(shop, below))["extensions"]["stopAsked"]["reason"] == "Wrong parts list."
    assert (await model_call(shop, middle))["extensions"]["stopAsked"]["reason"] == "Wrong parts list."
    assert "stopAsked" not in (await model_call(shop, root)).get("extensions", {})
    started = await shop.client.post(START, {"input": {"agent": "Estimator", "skill": "FindParts", "parent": below,
                                                       "actor": {"id": "estimator"}}}, shop.kit)
    assert started["extensions"]["stopAsked"]["reason"] == "Wrong parts list."
    ended = await shop.client.post("mutation($input: EndTaskInput!) { endTask(input: $input) { status } }",
                                   {"input": {"task": middle, "status": "STOPPED"}}, shop.kit)
    assert ended["data"]["endTask"]["status"] == "STOPPED" and ended["extensions"]["stopAsked"]
    assert (await shop.read(below, shop.noor, "stopAsked { reason }"))["stopAsked"] is None
    assert (await shop.read(middle, shop.noor, "stopAsked { reason }"))["stopAsked"]["reason"] == "Wrong parts list."
    assert (await shop.verify(root))["intact"]


async def test_mia_who_asked_may_stop_it_and_so_may_she_below_it(client):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start())["id"]
    below = await sub_task(shop, root)

    asked = await stop(shop, below, shop.mia, "I fixed it myself.")

    assert asked["data"]["stopTask"]["stopAsked"]["by"] == {"id": "mia", "name": "Mia"}


async def test_the_kit_another_mechanic_and_another_tenant_may_not_stop_it(client):
    shop, other = Shop(client), Shop(client)
    await shop.setup()
    await other.setup()
    task = (await shop.start())["id"]

    kit = await stop(shop, task, shop.kit)
    mechanic = await stop(shop, task, shop.person("leo", "Mechanic", name="Leo"))
    auditor = await stop(shop, task, shop.person("ana", "Auditor", name="Ana"))
    elsewhere = await stop(other, task, other.noor)

    assert [r["errors"][0]["extensions"]["code"] for r in (kit, mechanic, auditor, elsewhere)] == [
        "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "NOT_FOUND"]
    assert [line["kind"] for line in (await shop.read(task, shop.noor, "trace { kind }"))["trace"]] == ["STARTED"]


async def test_ended_work_answers_conflict_and_records_nothing(client):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()

    refused = await stop(shop, task, shop.noor)

    extensions = refused["errors"][0]["extensions"]
    assert (extensions["code"], extensions["field"]) == ("CONFLICT", "input.task")
    assert (await shop.read(task, shop.noor, "chainLength stopAsked { reason }")) == {"chainLength": 9,
                                                                                      "stopAsked": None}


async def test_a_second_stop_is_harmless_it_answers_the_first_and_a_retried_key_the_same(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]

    first = await stop(shop, task, shop.noor, "Parts are out of stock.", idempotencyKey="stop-1")
    again = await stop(shop, task, shop.noor, "Parts are out of stock.", idempotencyKey="stop-1")
    second = await stop(shop, task, shop.mia, "Never mind.")

    assert first["data"] == again["data"]
    assert second["data"]["stopTask"]["stopAsked"] == first["data"]["stopTask"]["stopAsked"]
    kinds = [line["kind"] for line in (await shop.read(task, shop.noor, "trace { kind }"))["trace"]]
    assert kinds == ["STARTED", "STOP_ASKED"]


async def test_a_stop_is_told_to_subscribers_as_agent_task_stop_asked(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    heard = []

    async def listen(event, row):
        heard.append((event, str(row.id)))

    add_publisher(listen)
    try:
        await stop(shop, task, shop.noor)
        await stop(shop, task, shop.noor)
    finally:
        remove_publisher(listen)

    assert heard == [("AgentTaskStopAsked", task)]


async def test_the_stop_line_checks_offline_in_an_export(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    await stop(shop, task, shop.noor)
    await shop.end(task, "STOPPED")

    response = await client.http.get(f"/export/{task}", headers={"Authorization": f"Bearer {shop.noor}"})

    lines = response.content.splitlines()
    assert [orjson.loads(line)["kind"] for line in lines[1:]] == ["STARTED", "STOP_ASKED", "ENDED"]
    key = (await shop.client.ok("{ checkpointKey }"))["checkpointKey"]
    assert check_export(lines, verifier_from_key(key)).intact


async def test_a_write_sent_again_after_a_stop_is_answered_once_and_with_the_stop(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    input = {"task": task, "model": "Everyday", "inputTokens": 120, "outputTokens": 30, "costMicros": 200,
             "idempotencyKey": "call-1"}
    first = await shop.client.post(MODEL_CALL, {"input": input}, shop.kit)
    await stop(shop, task, shop.noor)

    again = await shop.client.post(MODEL_CALL, {"input": input}, shop.kit)

    assert again["data"] == first["data"] and "stopAsked" not in (first.get("extensions") or {})
    assert again["extensions"]["stopAsked"]["reason"] == "The customer collected the bike."
    assert [line["kind"] for line in (await shop.read(task, shop.noor, "trace { kind }"))["trace"]] == [
        "STARTED", "MODEL_CALL", "STOP_ASKED"]
