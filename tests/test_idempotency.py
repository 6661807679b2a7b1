"""A retried write with the same key returns the first answer and appends nothing."""

from models import AgentTask, LlmCall
from tests.shop import Shop

CALL = "mutation($input: ModelCallInput!) { recordModelCall(input: $input) { seq hash costMicros } }"


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
    assert await AgentTask.filter(tenant=shop.tenant).count() == 1


async def test_keys_belong_to_one_tenant(client):
    shop, other = Shop(client), Shop(client)
    await shop.setup()
    await other.setup()

    mine = await shop.start(idempotencyKey="start")
    theirs = await other.start(idempotencyKey="start")

    assert mine["id"] != theirs["id"]
