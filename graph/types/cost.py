from __future__ import annotations

import strawberry

from graph.types.scalars import Long
from resolvers.read.tree import Spend


@strawberry.type(description="What a task cost, on its own and all in (the task and everything under it), summed from the meter.")
class Cost:
    own_micros: Long
    all_in_micros: Long
    own_input_tokens: Long
    own_output_tokens: Long
    all_in_input_tokens: Long
    all_in_output_tokens: Long
    own_model_calls: int
    all_in_model_calls: int

    @classmethod
    def of(cls, spend: Spend) -> Cost:
        own, all_in = spend.own, spend.all_in
        return cls(
            own_micros=Long(own.micros),
            all_in_micros=Long(all_in.micros),
            own_input_tokens=Long(own.input_tokens),
            own_output_tokens=Long(own.output_tokens),
            all_in_input_tokens=Long(all_in.input_tokens),
            all_in_output_tokens=Long(all_in.output_tokens),
            own_model_calls=own.model_calls,
            all_in_model_calls=all_in.model_calls,
        )
