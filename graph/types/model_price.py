from datetime import datetime

import strawberry

import models
from graph.types.scalars import Long


@strawberry.type(description="What one model costs the tenant per million tokens, from effectiveFrom on.")
class ModelPrice:
    model: str
    provider: str | None = strawberry.field(description="Null: the price holds for any provider.")
    input_micros_per_million: Long
    output_micros_per_million: Long
    cached_input_micros_per_million: Long | None = strawberry.field(
        description="Null: cached input tokens are priced as input tokens."
    )
    effective_from: datetime

    @classmethod
    def of(cls, row: models.ModelPrice) -> "ModelPrice":
        return cls(
            model=row.model,
            provider=row.provider,
            input_micros_per_million=row.input_micros_per_million,
            output_micros_per_million=row.output_micros_per_million,
            cached_input_micros_per_million=row.cached_input_micros_per_million,
            effective_from=row.effective_from,
        )
