from __future__ import annotations

from datetime import datetime

import strawberry

from graph.api.context import Info
from graph.api.inputs import plain
from graph.types.model_price import ModelPrice
from graph.types.scalars import Long
from resolvers.write import prices


@strawberry.input(description="A model's price per million tokens, in force from effectiveFrom (default: now).")
class ModelPriceInput:
    model: str
    input_micros_per_million: Long
    output_micros_per_million: Long
    provider: str | None = None
    cached_input_micros_per_million: Long | None = None
    effective_from: datetime | None = None
    idempotency_key: str | None = None


@strawberry.type
class PriceMutation:
    @strawberry.mutation(
        description=(
            "Kit only. Sets a model's price from a date on; model calls sent without a cost are priced from it. "
            "The same model, provider and date again replaces the rates."
        )
    )
    async def set_model_price(self, info: Info, input: ModelPriceInput) -> ModelPrice:
        return ModelPrice.of(await prices.set_model_price(info.context.writer(), plain(input)))


@strawberry.type
class PriceQuery:
    @strawberry.field(description="The tenant's price table, by model, provider and date; empty without a token.")
    async def model_prices(self, info: Info) -> list[ModelPrice]:
        principal = info.context.principal
        if principal is None:
            return []
        return [ModelPrice.of(row) for row in await prices.model_prices(principal.tenant)]
