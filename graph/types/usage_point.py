from __future__ import annotations

from datetime import datetime

import strawberry

from graph.types.scalars import Long
from resolvers.read import usage


@strawberry.type(description="What one key (an agent, a model, a skill or a requester) used in one bucket of time, "
                 "summed from the meter at read time over the work the caller may see.")
class UsagePoint:
    at: datetime = strawberry.field(description="The bucket's start (UTC).")
    key: str | None = strawberry.field(description="The agent, model, skill or requester's id; null when not recorded.")
    cost_micros: Long
    input_tokens: Long
    output_tokens: Long
    calls: int = strawberry.field(description="Model calls.")
    failures: int | None = strawberry.field(description="Tasks that ended FAILED in the bucket; null by model.")

    @classmethod
    def of(cls, point: usage.UsagePoint) -> UsagePoint:
        return cls(
            at=point.at, key=point.key, cost_micros=Long(point.cost_micros), input_tokens=Long(point.input_tokens),
            output_tokens=Long(point.output_tokens), calls=point.calls, failures=point.failures,
        )
