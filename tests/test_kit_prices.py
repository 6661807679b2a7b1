"""Prices set with the kit client on a running `agentlog serve`: the tenant's table shows them, and model calls
sent without a cost are priced from them."""

from __future__ import annotations

from typing import Any

import httpx

from agentlog_kit import Kit, ModelPrice
from tests.kit_reads import LiveShop

PRICES = "{ modelPrices { model provider inputMicrosPerMillion outputMicrosPerMillion cachedInputMicrosPerMillion } }"
CALLS = "query($id: ID!) { task(id: $id) { spentMicros calls { inputTokens costMicros costSource } } }"


def ask(shop: LiveShop, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
    body = httpx.post(shop.url + "/graphql", json={"query": query, "variables": variables or {}},
                      headers={"Authorization": f"Bearer {shop.mia}"}, timeout=30).json()
    assert not body.get("errors"), body
    return body["data"]


def test_a_price_set_with_the_client_is_in_the_tenants_table(servers):
    shop = LiveShop(servers[0])
    with Kit(shop.url, shop.kit) as kit:
        price = kit.set_model_price("Everyday", provider="scripted", input_micros_per_million=150_000,
                                    output_micros_per_million=600_000, cached_input_micros_per_million=75_000,
                                    effective_from="2026-01-01T00:00:00Z")
    assert price == ModelPrice("Everyday", "scripted", 150_000, 600_000, 75_000, price.effective_from)
    assert price.effective_from.startswith("2026-01-01T00:00:00")
    assert ask(shop, PRICES)["modelPrices"] == [
        {"model": "Everyday", "provider": "scripted", "inputMicrosPerMillion": 150_000,
         "outputMicrosPerMillion": 600_000, "cachedInputMicrosPerMillion": 75_000}]


def test_calls_sent_without_a_cost_are_unpriced_until_a_price_is_set_then_priced_from_it(servers):
    shop = LiveShop(servers[0])
    with Kit(shop.url, shop.kit) as kit:
        kit.register_agent("Estimator", purpose="Estimates bicycle repairs.")
        with kit.task("Estimator", "EstimateRepair", requester={"id": "mia", "name": "Mia"}) as t:
            t.model_call("Everyday", input_tokens=100, output_tokens=10)
            t.flush()
            kit.set_model_price("Everyday", input_micros_per_million=2_000_000, output_micros_per_million=10_000_000)
            t.model_call("Everyday", input_tokens=120, output_tokens=30)
            t.model_call("Everyday", input_tokens=140, output_tokens=30, cost_micros=7)
    task = ask(shop, CALLS, {"id": t.id})["task"]
    assert task["calls"] == [
        {"inputTokens": 100, "costMicros": 0, "costSource": "UNPRICED"},
        {"inputTokens": 120, "costMicros": 120 * 2 + 30 * 10, "costSource": "PRICE_TABLE"},
        {"inputTokens": 140, "costMicros": 7, "costSource": "KIT"},
    ]
    assert task["spentMicros"] == 547
