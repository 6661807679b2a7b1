"""The price table: model calls sent without a cost are priced from it; a cost sent always wins."""

from datetime import datetime, timedelta, timezone

from resolvers.write.prices import Usage, cost_of
from models import ModelPrice
from tests.shop import Shop

SET_PRICE = """
mutation($input: ModelPriceInput!) {
  setModelPrice(input: $input) {
    model provider inputMicrosPerMillion outputMicrosPerMillion cachedInputMicrosPerMillion effectiveFrom
  }
}
"""
PRICES = "{ modelPrices { model provider inputMicrosPerMillion outputMicrosPerMillion effectiveFrom } }"
CALLS = "query($id: ID!) { task(id: $id) { spentMicros calls { model costMicros costSource cachedInputTokens } } }"


def _ago(**delta) -> str:
    return (datetime.now(timezone.utc) - timedelta(**delta)).isoformat()


async def _set_price(shop: Shop, **fields) -> dict:
    input = {"model": "Everyday", "inputMicrosPerMillion": 1_000_000, "outputMicrosPerMillion": 4_000_000, **fields}
    return (await shop.client.ok(SET_PRICE, {"input": input}, shop.kit))["setModelPrice"]


async def _calls(shop: Shop, task: str) -> dict:
    return (await shop.client.ok(CALLS, {"id": task}, shop.noor))["task"]


async def test_a_fresh_tenant_has_no_prices_and_its_uncosted_calls_say_unpriced(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]

    line = await shop.model_call(task, costMicros=None)

    assert (await client.ok(PRICES, token=shop.noor))["modelPrices"] == []
    assert line["costMicros"] == 0
    said = (await shop.read(task, shop.noor, "trace { summary }"))["trace"][-1]["summary"]
    assert said == "Everyday (chosen by llm:default) asked for a tool; it is unpriced."
    assert (await _calls(shop, task))["calls"] == [
        {"model": "Everyday", "costMicros": 0, "costSource": "UNPRICED", "cachedInputTokens": None}
    ]


async def test_a_call_without_a_cost_is_priced_from_the_table_and_a_sent_cost_wins(client):
    shop = Shop(client)
    await shop.setup()
    await _set_price(shop, effectiveFrom=_ago(days=1))
    task = (await shop.start())["id"]

    priced = await shop.model_call(task, costMicros=None, inputTokens=120, outputTokens=30)
    sent = await shop.model_call(task, costMicros=7, inputTokens=120, outputTokens=30)

    assert priced["costMicros"] == 240 and sent["costMicros"] == 7
    calls = (await _calls(shop, task))
    assert [(c["costMicros"], c["costSource"]) for c in calls["calls"]] == [(240, "PRICE_TABLE"), (7, "KIT")]
    assert calls["spentMicros"] == 247
    assert (await shop.verify(task))["intact"] is True


async def test_record_lines_prices_each_uncosted_call(client):
    shop = Shop(client)
    await shop.setup()
    await _set_price(shop, effectiveFrom=_ago(days=1))
    task = (await shop.start())["id"]
    line = {"model": "Everyday", "inputTokens": 1000, "outputTokens": 1000}

    await client.ok(
        "mutation($input: RecordLinesInput!) { recordLines(input: $input) { firstSeq lastSeq } }",
        {"input": {"task": task, "lines": [{"modelCall": line}, {"modelCall": {**line, "costMicros": 1}}]}},
        shop.kit,
    )

    assert [c["costMicros"] for c in (await _calls(shop, task))["calls"]] == [5000, 1]


async def test_the_price_in_force_when_the_call_is_recorded_applies(client):
    shop = Shop(client)
    await shop.setup()
    await _set_price(shop, effectiveFrom=_ago(days=10), inputMicrosPerMillion=1_000_000, outputMicrosPerMillion=0)
    await _set_price(shop, effectiveFrom=_ago(days=1), inputMicrosPerMillion=3_000_000, outputMicrosPerMillion=0)
    await _set_price(shop, effectiveFrom=_ago(days=-1), inputMicrosPerMillion=9_000_000, outputMicrosPerMillion=0)
    task = (await shop.start())["id"]

    line = await shop.model_call(task, costMicros=None, inputTokens=1000, outputTokens=0)

    assert line["costMicros"] == 3000
    table = (await client.ok(PRICES, token=shop.mia))["modelPrices"]
    assert [p["inputMicrosPerMillion"] for p in table] == [1_000_000, 3_000_000, 9_000_000]


async def test_cached_input_tokens_are_priced_at_their_own_rate(client):
    shop = Shop(client)
    await shop.setup()
    await _set_price(shop, effectiveFrom=_ago(days=1), inputMicrosPerMillion=2_000_000, outputMicrosPerMillion=0,
                     cachedInputMicrosPerMillion=500_000)
    task = (await shop.start())["id"]

    line = await shop.model_call(task, costMicros=None, inputTokens=1000, cachedInputTokens=800, outputTokens=0)

    assert line["costMicros"] == 200 * 2 + 800 // 2
    assert (await _calls(shop, task))["calls"][0]["cachedInputTokens"] == 800


async def test_a_price_for_the_calls_provider_beats_one_for_any_provider(client):
    shop = Shop(client)
    await shop.setup()
    await _set_price(shop, effectiveFrom=_ago(days=1), inputMicrosPerMillion=1_000_000, outputMicrosPerMillion=0)
    await _set_price(shop, effectiveFrom=_ago(days=2), provider="scripted", inputMicrosPerMillion=5_000_000,
                     outputMicrosPerMillion=0)
    task = (await shop.start())["id"]

    line = await shop.model_call(task, costMicros=None, inputTokens=1000, outputTokens=0)

    assert line["costMicros"] == 1000


async def test_prices_are_the_tenants_own_and_only_a_kit_sets_them(client):
    shop, other = Shop(client), Shop(client)
    await shop.setup()
    await other.setup()
    await _set_price(shop, effectiveFrom=_ago(days=1))

    refused = await client.error(SET_PRICE, {"input": {"model": "Everyday", "inputMicrosPerMillion": 1,
                                                        "outputMicrosPerMillion": 1}}, shop.noor)
    negative = await client.error(SET_PRICE, {"input": {"model": "Everyday", "inputMicrosPerMillion": -1,
                                                         "outputMicrosPerMillion": 1}}, shop.kit)

    assert refused["extensions"]["code"] == "FORBIDDEN"
    assert negative["extensions"]["code"] == "BAD_INPUT"
    assert (await client.ok(PRICES, token=other.noor))["modelPrices"] == []
    assert len((await client.ok(PRICES, token=shop.noor))["modelPrices"]) == 1
    assert await ModelPrice.filter(tenant=shop.tenant).count() == 1


def test_cost_rounds_half_up_to_whole_micros():
    price = ModelPrice(input_micros_per_million=1, output_micros_per_million=0, cached_input_micros_per_million=None)
    at = datetime.now(timezone.utc)

    assert cost_of(price, Usage("m", None, 499_999, 0, None, at)) == 0
    assert cost_of(price, Usage("m", None, 500_000, 0, None, at)) == 1
