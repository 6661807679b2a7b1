"""A retried write with the same key returns the first answer and appends nothing."""

from models import AgentTask, LlmCall
from tests.shop import Shop, work

CALL = "mutation($input: ModelCallInput!) { recordModelCall(input: $input) { seq hash costMicros } }"
PRICE = "mutation($input: ModelPriceInput!) { setModelPrice(input: $input) { model effectiveFrom } }"


async def test_a_retried_model_call_appends_nothing(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    input = {"task": task, "model": "Everyday", "inputTokens": 10, "outputTokens": 2, "costMicros": 200,
             "idempotencyKey": "call-1"}

    first = await client.ok(CALL, {"input": input}, shop.kit)
    again = await client.ok(CALL, {"input": input}, shop.kit)

    assert again == first
    assert (await AgentTask.get(id=task)).chain_length == 2
    assert await LlmCall.filter(task_id=task).count() == 1


async def test_the_same_key_with_another_input_is_a_conflict(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    input = {"task": task, "model": "Everyday", "inputTokens": 10, "outputTokens": 2, "costMicros": 200,
             "idempotencyKey": "call-1"}
    await client.ok(CALL, {"input": input}, shop.kit)

    error = await client.error(CALL, {"input": {**input, "costMicros": 999}}, shop.kit)

    assert error["extensions"]["code"] == "CONFLICT"
    assert "idempotencyKey" in error["message"]
    assert (await AgentTask.get(id=task)).chain_length == 2


async def test_a_retried_start_returns_the_same_task(client):
    shop = Shop(client)
    await shop.setup()

    first = await shop.start(idempotencyKey="start-T-7")
    again = await shop.start(idempotencyKey="start-T-7")

    assert again["id"] == first["id"]
    assert await work(shop.tenant).count() == 1


async def test_keys_belong_to_one_tenant(client):
    shop, other = Shop(client), Shop(client)
    await shop.setup()
    await other.setup()

    mine = await shop.start(idempotencyKey="start")
    theirs = await other.start(idempotencyKey="start")

    assert mine["id"] != theirs["id"]


async def test_a_retried_price_from_a_date_replays_and_another_date_is_a_conflict(client):
    shop = Shop(client)
    price = {"model": "Everyday", "inputMicrosPerMillion": 1_000_000, "outputMicrosPerMillion": 4_000_000,
             "effectiveFrom": "2026-01-01T00:00:00Z", "idempotencyKey": "price-1"}

    first = await client.ok(PRICE, {"input": price}, shop.kit)
    again = await client.ok(PRICE, {"input": price}, shop.kit)
    error = await client.error(PRICE, {"input": {**price, "effectiveFrom": "2026-02-01T00:00:00Z"}}, shop.kit)

    assert again == first
    assert error["extensions"]["code"] == "CONFLICT"
    assert len((await client.ok("{ modelPrices { model } }", token=shop.noor))["modelPrices"]) == 1


async def test_a_retried_call_whose_content_holds_an_integer_past_64_bits_replays(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    input = {"task": task, "model": "Everyday", "inputTokens": 10, "outputTokens": 2, "costMicros": 200,
             "response": {"serial": 2**70}, "idempotencyKey": "call-big"}

    first = await client.ok(CALL, {"input": input}, shop.kit)
    again = await client.ok(CALL, {"input": input}, shop.kit)
    error = await client.error(CALL, {"input": {**input, "response": {"serial": 2**70 + 1}}}, shop.kit)

    assert again == first
    assert error["extensions"]["code"] == "CONFLICT"
    assert (await AgentTask.get(id=task)).chain_length == 2
