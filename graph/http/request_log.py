"""One log line and one count per request, under a request id taken from X-Request-Id or made, and sent back.

`RequestLog` wraps the whole app. It names the operation after the route (`GET /healthz`), or, for GraphQL,
after the operation's first root field (`startTask`, `tasks`), so the names are bounded by the schema; the
outcome is `OK` or the first error's `extensions.code` (for routes, the code of the HTTP status).
Never logged: the token, the query text, variables, sentences or content.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from typing import Any

from graphql import FieldNode, GraphQLSchema, OperationDefinitionNode
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from strawberry.extensions import SchemaExtension

from models.errors import AgentlogError, Unauthenticated
from permissions.tokens import principal_from_header
from resolvers import metrics

log = logging.getLogger("agentlog.request")
GIVEN_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
PROBES = frozenset({"/healthz", "/readyz", "/metrics"})
STATUS_CODES = {
    400: "BAD_INPUT", 401: "UNAUTHENTICATED", 403: "FORBIDDEN", 404: "NOT_FOUND", 409: "CONFLICT",
    413: "BAD_INPUT", 503: "UNAVAILABLE",
}


@dataclass(slots=True)
class Outcome:
    request_id: str
    operation: str = "unmatched"
    code: str = "OK"


CURRENT: ContextVar[Outcome | None] = ContextVar("agentlog_request", default=None)


def request_id() -> str:
    """The id of the request being answered, or a new one outside any request (a websocket's operations)."""
    outcome = CURRENT.get()
    return outcome.request_id if outcome is not None else os.urandom(6).hex()


def _given_or_new(value: str | None) -> str:
    return value if value is not None and GIVEN_ID.fullmatch(value) else os.urandom(6).hex()


def _headers(scope: Scope) -> tuple[str | None, str | None]:
    """The request's X-Request-Id and Authorization, read in one pass over the raw headers."""
    given = authorization = None
    for name, value in scope["headers"]:
        if name == b"x-request-id":
            given = value.decode("latin-1")
        elif name == b"authorization":
            authorization = value.decode("latin-1")
    return given, authorization


def _status_code(status: int) -> str:
    if status < 400:
        return "OK"
    return STATUS_CODES.get(status, "INTERNAL" if status >= 500 else "BAD_INPUT")


def _who(authorization: str | None) -> tuple[str, str]:
    if not authorization:
        return "-", "-"
    try:
        principal = principal_from_header(authorization)
    except Unauthenticated:
        return "-", "-"
    return (principal.tenant, principal.sub) if principal is not None else ("-", "-")


class RequestAttributes(logging.Filter):
    """Puts the current request's id on every record logged while it is answered."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            outcome = CURRENT.get()
            record.request_id = outcome.request_id if outcome is not None else "-"
        return True


class RequestLog:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given, authorization = _headers(scope)
        outcome = Outcome(_given_or_new(given))
        token = CURRENT.set(outcome)
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                sent_back = (b"x-request-id", outcome.request_id.encode())
                message = {**message, "headers": [*message.get("headers", ()), sent_back]}
            await send(message)

        started = time.perf_counter()
        try:
            await self.app(scope, receive, sending)
        except Exception:
            outcome.code = "INTERNAL"
            log.exception("request %s failed", outcome.request_id)
            raise
        finally:
            seconds = time.perf_counter() - started
            route = scope.get("route")
            if outcome.operation == "unmatched" and route is not None:
                outcome.operation = f"{scope['method']} {getattr(route, 'path', '-')}"
            if outcome.code == "OK":
                outcome.code = _status_code(status)
            self._record(outcome, seconds, scope.get("path", ""), authorization)
            CURRENT.reset(token)

    def _record(self, outcome: Outcome, seconds: float, path: str, authorization: str | None) -> None:
        metrics.answered(outcome.operation, outcome.code, seconds)
        tenant, principal = _who(authorization)
        log.log(
            logging.DEBUG if path in PROBES else logging.INFO,
            "%s %s in %.1f ms (tenant %s, principal %s)", outcome.operation, outcome.code, seconds * 1000, tenant,
            principal,
            extra={
                "request_id": outcome.request_id, "operation": outcome.operation, "outcome": outcome.code,
                "duration_ms": round(seconds * 1000, 3), "tenant": tenant, "principal": principal,
            },
        )


@cache
def _root_fields(schema: GraphQLSchema) -> frozenset[str]:
    roots = (schema.query_type, schema.mutation_type, schema.subscription_type)
    return frozenset(name for root in roots if root is not None for name in root.fields)


def _root_field(document: Any, operation_name: str | None, root_fields: frozenset[str]) -> str | None:
    for definition in getattr(document, "definitions", ()):
        if not isinstance(definition, OperationDefinitionNode):
            continue
        if operation_name and (definition.name is None or definition.name.value != operation_name):
            continue
        for selection in definition.selection_set.selections:
            if isinstance(selection, FieldNode) and selection.name.value in root_fields:
                return selection.name.value
        return None
    return None


def _code(error: Any) -> str:
    code = (error.extensions or {}).get("code")
    if code:
        return str(code)
    original = error.original_error
    if isinstance(original, AgentlogError):
        return original.code
    return "BAD_INPUT" if error.path is None else "INTERNAL"


class RequestOutcome(SchemaExtension):
    """Names the request's operation after its first root field, and takes its outcome from the first error."""

    def on_operation(self) -> Iterator[None]:
        yield
        outcome = CURRENT.get()
        if outcome is None:
            return
        context = self.execution_context
        fields = _root_fields(context.schema._schema)
        outcome.operation = _root_field(context.graphql_document, context.operation_name, fields) or "graphql"
        errors = getattr(context.result, "errors", None) or context.pre_execution_errors or ()
        if errors:
            outcome.code = _code(errors[0])
