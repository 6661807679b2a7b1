"""The schema, assembled once from its parts, with the query limits built once too."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import strawberry
from graphql import DocumentNode, GraphQLError, GraphQLInputObjectType, GraphQLSchema, parse
from strawberry.extensions import MaxAliasesLimiter, QueryDepthLimiter, SchemaExtension
from strawberry.schema.config import StrawberryConfig
from strawberry.schema.name_converter import NameConverter
from strawberry.schema.schema import DEFAULT_ALLOWED_OPERATION_TYPES, validate_document
from strawberry.types.graphql import OperationType
from strawberry.tools import merge_types

from graph.api.mutations.answer import AnswerMutation
from graph.api.mutations.batch import BatchMutation
from graph.api.mutations.erasure import ErasureMutation, ErasureQuery
from graph.api.errors import request_id_of, shape
from graph.fast.arguments import RememberedArgumentNames, null_defaults_left_out
from graph.fast.execution import TreeExecution
from graph.api.mutations.kit import KitMutation
from graph.api.mutations.prices import PriceMutation, PriceQuery
from graph.api.mutations.stop import StopMutation
from graph.api.mutations.webhooks import WebhookMutation, WebhookQuery
from graph.api.nul import RefuseNul
from graph.api.query import Query
from graph.api.read_routing import RoutedOperations, note_failures
from graph.http.request_log import RequestOutcome
from graph.api.subscription import Subscription
from graph.api.write_answers import WriteAnswers
from graph.types.scalars import SCALARS
from models import settings

QUERIES: tuple[type, ...] = (Query, ErasureQuery, PriceQuery, WebhookQuery)
MUTATIONS: tuple[type, ...] = (
    KitMutation, BatchMutation, ErasureMutation, PriceMutation, AnswerMutation, StopMutation, WebhookMutation
)


@lru_cache(maxsize=256)
def _parsed(query: str, **options: Any) -> DocumentNode:
    return parse(query, **options)


@lru_cache(maxsize=256)
def _validated(schema: GraphQLSchema, query: str, rules: tuple, **options: Any) -> list[GraphQLError]:
    """Keyed by the document's text, as `_parsed` is: hashing its parsed tree walks every node of it."""
    return validate_document(schema, _parsed(query, **options), rules)


class KnownDocuments(SchemaExtension):
    """Kits send the same few documents again and again: each is parsed within the token limit, and validated
    with the depth and alias limits, once, not per request. A document that does not parse (or is over the token
    limit) is left to strawberry's own parse, which refuses it like any other invalid query, with
    `extensions.code`."""

    tokens: int
    limits: tuple = ()

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        context.parse_options["max_tokens"] = self.tokens
        try:
            context.graphql_document = _parsed(context.query, **context.parse_options)
        except GraphQLError:
            pass
        yield

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        rules = context.validation_rules + self.limits
        context.pre_execution_errors = _validated(context.schema._schema, context.query, rules, **context.parse_options)
        yield


def known_documents(depth: int, aliases: int, tokens: int) -> type[KnownDocuments]:
    """KnownDocuments with the depth, alias and token limits; the rule classes are made here once, not per request."""
    limits = (
        *QueryDepthLimiter(max_depth=depth).validation_rules,
        *MaxAliasesLimiter(max_alias_count=aliases).validation_rules,
    )
    return type("LimitedDocuments", (KnownDocuments,), {"tokens": tokens, "limits": limits})


class Schema(strawberry.Schema):
    fast: bool = False
    """Whether the shortcuts of graph/fast/ run: its executor, reading ahead and lazy objects."""

    async def execute(self, *args, allowed_operation_types=None, **kwargs):
        """Subscriptions are served over graphql-transport-ws only: sent over HTTP, they are refused before they
        run (WebSocket operations go through `stream`, not here)."""
        if allowed_operation_types is None:
            allowed_operation_types = DEFAULT_ALLOWED_OPERATION_TYPES
        allowed = set(allowed_operation_types) - {OperationType.SUBSCRIPTION}
        return await super().execute(*args, allowed_operation_types=allowed, **kwargs)

    def process_errors(self, errors, execution_context=None) -> None:
        """Every error of an operation passes here (parsing, validation, execution, a hook's refusal, a failure
        that ends the operation early): each leaves with an extensions.code, and an unexpected one is logged with
        its request id and masked."""
        request_id = request_id_of(execution_context.context if execution_context else None)
        note_failures(errors)
        errors[:] = [shape(error, request_id) for error in errors]


def routed_operations() -> list:
    """With read replicas, queries read from one and mutations answer a consistency token; without, no hook."""
    return [RoutedOperations] if settings.read_database_urls() else []


def build_schema() -> strawberry.Schema:
    """With AGENTLOG_EXECUTOR=fast (the default) requests run on graph/fast/execution.py; with `stock`, on
    graphql-core's executor as strawberry sets it up."""
    fast = settings.executor() == "fast"
    documents = known_documents(settings.max_depth(), settings.max_aliases(), settings.max_tokens())
    schema = Schema(
        query=merge_types("Query", QUERIES),
        mutation=merge_types("Mutation", MUTATIONS),
        subscription=Subscription,
        extensions=[RequestOutcome, documents, RefuseNul, WriteAnswers, *routed_operations()],
        config=StrawberryConfig(scalar_map=SCALARS,
                                name_converter=RememberedArgumentNames() if fast else NameConverter()),
        execution_context_class=TreeExecution if fast else None,
    )
    schema.fast = fast
    if fast:
        null_defaults_left_out(schema._schema, schema.config.name_converter)
    one_of_checked_by_graphql_core(schema)
    return schema


def one_of_checked_by_graphql_core(schema: strawberry.Schema) -> None:
    """strawberry 0.341 checks a oneOf input itself and names no path when one breaks the rule; marked as
    graphql-core 3.3's own `is_one_of`, a variable that breaks it is refused at its path (`input.lines[2]`)."""
    for type_ in schema._schema.type_map.values():
        definition = (type_.extensions or {}).get("strawberry-definition") if isinstance(
            type_, GraphQLInputObjectType) else None
        if definition is not None and definition.is_one_of:
            type_.is_one_of = True


def export() -> str:
    return build_schema().as_str() + "\n"
