"""The tenant's price table: what a model call costs when the kit or the span does not say.

A fresh tenant's table is empty, so its calls are UNPRICED (cost 0) until the kit sets a price; no price list
ships with the server, since any would go stale.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from models import ModelPrice
from models.errors import BadInput
from permissions.principal import Principal
from resolvers.write import checks, sentences
from resolvers.answer.ledger import record_change
from resolvers.write.append import kit_unit
from resolvers.write.draft import LineDraft

KIT, PRICE_TABLE, UNPRICED = "KIT", "PRICE_TABLE", "UNPRICED"
MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class Usage:
    """What a call used, as its meter row will say."""

    model: str
    provider: str | None
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int | None
    at: datetime


def cost_of(price: ModelPrice, usage: Usage) -> int:
    """Micros, rounded half up. Cached input tokens are part of the input tokens, priced at the cached rate
    when the table has one."""
    cached = min(usage.cached_input_tokens or 0, usage.input_tokens)
    cached_rate = price.input_micros_per_million if price.cached_input_micros_per_million is None \
        else price.cached_input_micros_per_million
    total = ((usage.input_tokens - cached) * price.input_micros_per_million + cached * cached_rate
             + usage.output_tokens * price.output_micros_per_million)
    return (total + MILLION // 2) // MILLION


def _applies(price: ModelPrice, usage: Usage) -> bool:
    return price.effective_from <= usage.at and price.provider in (None, usage.provider)


def _best(prices: list[ModelPrice], usage: Usage) -> ModelPrice | None:
    """The latest price in effect at the call's time; one for the call's own provider beats one for any."""
    found = [p for p in prices if _applies(p, usage)]
    if not found:
        return None
    return max(found, key=lambda p: (p.effective_from, p.provider is not None))


async def price_all(tenant: str, usages: list[Usage], conn: Any) -> list[tuple[int, str]]:
    """(cost micros, cost source) for each usage, from one read of the table."""
    models = {u.model for u in usages}
    prices = await ModelPrice.filter(tenant=tenant, model__in=models).using_db(conn) if models else []
    by_model: dict[str, list[ModelPrice]] = {}
    for p in prices:
        by_model.setdefault(p.model, []).append(p)
    priced = []
    for usage in usages:
        price = _best(by_model.get(usage.model, []), usage)
        priced.append((0, UNPRICED) if price is None else (cost_of(price, usage), PRICE_TABLE))
    return priced


async def price_drafts(tenant: str, timed: list[tuple[LineDraft, datetime]], conn: Any) -> None:
    """Model calls sent without a cost are priced from the tenant's table as it stood at each call's time, in one
    read of the table; a cost sent always wins."""
    unpriced = [(d, at) for d, at in timed if d.call is not None and d.cost_micros is None]
    if not unpriced:
        return
    usages = [Usage(d.model, d.call.provider, d.input_tokens, d.output_tokens, d.call.cached_input_tokens, at)
              for d, at in unpriced]
    for (d, _), (cost, source) in zip(unpriced, await price_all(tenant, usages, conn)):
        d.cost_micros, d.call.cost_source = cost, source
        if not d.summary:
            d.summary = sentences.model_call(d.model, d.route_rule, None if source == UNPRICED else cost,
                                             d.call.response, d.by_tool)


def _utc(field: str, value: datetime | None) -> datetime:
    if value is None:
        return datetime.now(timezone.utc)
    if value.tzinfo is None:
        raise BadInput(f"{field} must carry a time zone.", field=field)
    return value.astimezone(timezone.utc)


def _price_said(price: ModelPrice) -> dict[str, Any]:
    """What the ledger records of a price: the model, the provider, the rates and when they apply from."""
    return {"model": price.model, "provider": price.provider, "effectiveFrom": price.effective_from.isoformat(),
            "inputMicrosPerMillion": price.input_micros_per_million,
            "outputMicrosPerMillion": price.output_micros_per_million,
            "cachedInputMicrosPerMillion": price.cached_input_micros_per_million}


async def set_model_price(principal: Principal | None, data: dict[str, Any]) -> ModelPrice:
    async with kit_unit(principal, "setModelPrice", data) as unit:
        if unit.first is None:
            price = await _set_price(unit.writer, data, unit.conn)
            unit.answered(str(price.id))
    if unit.first is not None:
        return await ModelPrice.get(tenant=unit.writer.tenant, id=unit.first)
    return price


async def _set_price(kit: Principal, data: dict[str, Any], conn: Any) -> ModelPrice:
    model = checks.name("model", data.get("model"), required=True)
    provider = checks.name("provider", data.get("provider"))
    rates = {
        field: checks.count(name, data.get(field))
        for field, name in (
            ("input_micros_per_million", "inputMicrosPerMillion"),
            ("output_micros_per_million", "outputMicrosPerMillion"),
            ("cached_input_micros_per_million", "cachedInputMicrosPerMillion"),
        )
    }
    effective_from = _utc("effectiveFrom", data.get("effective_from"))
    found = await ModelPrice.filter(
        tenant=kit.tenant, model=model, provider=provider, effective_from=effective_from
    ).using_db(conn).first()
    price = found or ModelPrice(id=uuid.uuid4(), tenant=kit.tenant, model=model, provider=provider,
                                effective_from=effective_from)
    before = _price_said(price) if found is not None else None
    for field, value in rates.items():
        setattr(price, field, value)
    await price.save(using_db=conn, force_create=found is None)
    if (after := _price_said(price)) != before:
        await record_change(conn, kit.tenant, kit, "setModelPrice", after, f"set the price of {model}")
    return price


async def model_prices(tenant: str) -> list[ModelPrice]:
    return await ModelPrice.filter(tenant=tenant).order_by("model", "provider", "effective_from")
