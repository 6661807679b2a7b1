from __future__ import annotations

from typing import Any, NewType

import strawberry
from graphql import GraphQLError
from strawberry.scalars import JSON

from resolvers.write.checks import MAX_LONG


def _parse_long(value: Any) -> int:
    """A GraphQLError, not a ValueError, so that graphql-core reports it as the input's fault in literals too."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        elif isinstance(value, str) and value.lstrip("-").isdigit():
            value = int(value)
        else:
            raise GraphQLError(f"Long cannot represent {value!r}: a whole number is expected.")
    if not -MAX_LONG - 1 <= value <= MAX_LONG:
        raise GraphQLError(f"Long cannot represent {value}: it is outside 64 bits.")
    return value


Long = NewType("Long", int)

LONG = strawberry.scalar(
    name="Long",
    description="A 64-bit integer, serialised as a JSON number. Every micros and token figure is a Long.",
    serialize=int,
    parse_value=_parse_long,
)

SCALARS = {Long: LONG}

__all__ = ["JSON", "Long", "SCALARS"]
