"""The schema, assembled once from its parts, with the query limits built once too."""

from __future__ import annotations

import strawberry
from strawberry.extensions import AddValidationRules, MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter
from strawberry.schema.config import StrawberryConfig
from strawberry.tools import merge_types

from graph.errors import ErrorCodes
from graph.mutation import KitMutation
from graph.query import Query
from graph.types.scalars import SCALARS
from resolvers import settings

QUERIES: tuple[type, ...] = (Query,)
MUTATIONS: tuple[type, ...] = (KitMutation,)


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
        query=merge_types("Query", QUERIES),
        mutation=merge_types("Mutation", MUTATIONS),
        extensions=[*limits, ErrorCodes],
        config=StrawberryConfig(scalar_map=SCALARS),
    )


def export() -> str:
    return build_schema().as_str() + "\n"
