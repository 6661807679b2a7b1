"""The schema, assembled once, with the query limits built once too."""

from __future__ import annotations

import strawberry
from strawberry.schema.config import StrawberryConfig
from strawberry.extensions import AddValidationRules, MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter

from graph.errors import ErrorCodes
from graph.mutation import Mutation
from graph.query import Query
from graph.types.scalars import SCALARS
from resolvers import settings


def query_limits(depth: int, aliases: int, tokens: int) -> list:
    """Depth, alias and token limits; the rule classes are made here once, not per request."""
    rules = [
        *QueryDepthLimiter(max_depth=depth).validation_rules,
        *MaxAliasesLimiter(max_alias_count=aliases).validation_rules,
    ]

    class QueryLimits(AddValidationRules):
        def __init__(self) -> None:
            super().__init__(rules)

    return [QueryLimits, lambda: MaxTokensLimiter(max_token_count=tokens)]


def build_schema() -> strawberry.Schema:
    limits = query_limits(settings.max_depth(), settings.max_aliases(), settings.max_tokens())
    return strawberry.Schema(
        query=Query,
        mutation=Mutation,
        extensions=[*limits, ErrorCodes],
        config=StrawberryConfig(scalar_map=SCALARS),
    )


def export() -> str:
    return build_schema().as_str() + "\n"
