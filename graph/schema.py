"""The schema, assembled once from its parts, with the query limits built once too."""

from __future__ import annotations

from collections.abc import Iterator

import strawberry
from graphql import GraphQLError
from strawberry.extensions import (
    AddValidationRules,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    ParserCache,
    QueryDepthLimiter,
    ValidationCache,
)
from strawberry.schema.config import StrawberryConfig
from strawberry.tools import merge_types

from graph.batch_mutation import BatchMutation
from graph.erasure import ErasureMutation, ErasureQuery
from graph.errors import ErrorCodes
from graph.execution import TreeExecution, direct_resolvers
from graph.mutation import KitMutation
from graph.prices import PriceMutation, PriceQuery
from graph.nul import RefuseNul
from graph.query import Query
from graph.request_log import RequestOutcome
from graph.subscription import Subscription
from graph.types.scalars import SCALARS
from resolvers import settings

QUERIES: tuple[type, ...] = (Query, ErasureQuery, PriceQuery)
MUTATIONS: tuple[type, ...] = (KitMutation, BatchMutation, ErasureMutation, PriceMutation)


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


class CachedParse(ParserCache):
    """A document that does not parse (or is over the token limit) is left to strawberry's own parse, which
    refuses it like any other invalid query, with `extensions.code`."""

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        try:
            context.graphql_document = self.cached_parse_document(context.query, **context.parse_options)
        except GraphQLError:
            pass
        yield


def document_caches(size: int = 256) -> list:
    """Kits send the same few documents again and again: each is parsed and validated once, not per request."""
    return [lambda: CachedParse(maxsize=size), lambda: ValidationCache(maxsize=size)]


class Schema(strawberry.Schema):
    def process_errors(self, errors, execution_context=None) -> None:
        """Expected refusals are not logged; ErrorCodes logs the unexpected ones with their request id."""


def build_schema() -> strawberry.Schema:
    limits = query_limits(settings.max_depth(), settings.max_aliases(), settings.max_tokens())
    schema = Schema(
        query=merge_types("Query", QUERIES),
        mutation=merge_types("Mutation", MUTATIONS),
        subscription=Subscription,
        extensions=[RequestOutcome, *limits, *document_caches(), RefuseNul, ErrorCodes],
        config=StrawberryConfig(scalar_map=SCALARS),
        execution_context_class=TreeExecution,
    )
    return direct_resolvers(schema)


def export() -> str:
    return build_schema().as_str() + "\n"
