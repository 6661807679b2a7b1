import strawberry

from graph.types.scalars import Long


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
