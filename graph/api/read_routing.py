"""Which node answers each request when there are read replicas (resolvers/events/replicas.py); nothing without any.

- GraphQL: a query runs on a replica chosen for the caller's tenant and the request's X-Agentlog-Consistency
  token; a mutation runs on the primary and answers a token (the header, and `extensions.consistency`).
  An erasure, anonymisation, forgetting or policy change also fences the tenant before it is answered.
- A subscription reads each event's task from a replica only if it holds everything committed before the event
  was heard.
- Other routes: GET of the export and the REST transcript reads from a replica; any other method runs on the
  primary and answers a token. Probes (/readyz) stay on the primary.
- A replica that fails a read is left out and the read runs again on the primary: the caller sees no error.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from graphql import FieldNode, get_operation_ast
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from strawberry.extensions import SchemaExtension
from strawberry.types.graphql import OperationType

from graph.http.errors import error_response
from graph.api.loaders import Loaders
from graph.http.unavailable import Watched
from models.availability import database_unavailable
from models.errors import BadInput, Unauthenticated
from permissions.access import Access
from permissions.tokens import principal_from_header
from resolvers.events import replicas
from resolvers.events.replicas import Replica, lsn_text, reading_from, routing

HEADER = "X-Agentlog-Consistency"
FENCED = frozenset({"eraseAgentWorkContent", "anonymiseAgentWork", "forgetAgentWork", "eraseAgentHelp", "definePolicies"})
READ_PATHS = ("/export/", "/agentic/")
RECOVERY_CONFLICT = "40001"


@dataclass
class Exchange:
    """One HTTP request's consistency: the token it sent, the token it answers, and the replica it read from."""

    token: int | None
    answer: str | None = None
    replica: Replica | None = None
    failed: bool = False
    primary_only: bool = False


EXCHANGE: ContextVar[Exchange | None] = ContextVar("agentlog_exchange", default=None)


def replica_failed(error: BaseException | None) -> bool:
    """A read the primary should answer instead: the replica went away, or cancelled the read because replaying
    the primary's changes conflicted with it (SQLSTATE 40001, "conflict with recovery")."""
    if database_unavailable(error):
        return True
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if getattr(error, "sqlstate", None) == RECOVERY_CONFLICT:
            return True
        error = error.__cause__ or error.__context__
    return False


def _token_of(scope: Scope) -> int | None:
    wanted = HEADER.lower().encode()
    for name, value in scope["headers"]:
        if name == wanted:
            return replicas.token_value(value.decode("latin-1"))
    return None


def _tenant_of(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization":
            try:
                principal = principal_from_header(value.decode("latin-1"))
            except Unauthenticated:
                return None
            return principal.tenant if principal is not None else None
    return None


class ConsistentReads:
    """ASGI middleware: reads the request's token, routes plain GET reads, and sends back the answer's token."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = routing()
        if found is None or scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            exchange = Exchange(_token_of(scope))
        except BadInput as exc:
            await error_response(400, exc.message, field=HEADER)(scope, receive, send)
            return
        reset = EXCHANGE.set(exchange)
        try:
            if scope["path"] == "/graphql":
                await self.app(scope, receive, _answering(exchange, send, None))
            elif scope["method"] in ("GET", "HEAD"):
                await self._read(scope, receive, send, exchange)
            else:
                await self.app(scope, receive, _answering(exchange, send, found.position))
        finally:
            EXCHANGE.reset(reset)

    async def _read(self, scope: Scope, receive: Receive, send: Send, exchange: Exchange) -> None:
        found = routing()
        if found is None or not scope["path"].startswith(READ_PATHS):
            await self.app(scope, receive, send)
            return
        replica = found.node_for(_tenant_of(scope), exchange.token)
        watched = Watched(send)
        try:
            with reading_from(replica):
                await self.app(scope, receive, watched)
        except Exception as exc:
            if replica is None or watched.started or not replica_failed(exc):
                raise
            if database_unavailable(exc):
                found.down(replica)
            with reading_from(None):
                await self.app(scope, receive, send)


def _answering(exchange: Exchange, send: Send, position: Callable[[], Awaitable[int]] | None) -> Send:
    """`send`, with the answer's token added to the response's headers: the one GraphQL set, or the primary's
    position once the route has answered (its writes are committed before its answer starts)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            if exchange.answer is None and position is not None and message["status"] < 500:
                exchange.answer = await _position_text(position)
            if exchange.answer is not None:
                header = (HEADER.lower().encode(), exchange.answer.encode())
                message = {**message, "headers": [*message.get("headers", ()), header]}
        await send(message)

    return sending


async def _position_text(position: Callable[[], Awaitable[int]]) -> str | None:
    """The primary's position as a token; None (no token) when the primary cannot be reached just now."""
    try:
        return lsn_text(await position())
    except Exception as exc:
        if not database_unavailable(exc):
            raise
        return None


def _root_fields(execution_context: Any) -> set[str]:
    operation = get_operation_ast(execution_context.graphql_document, execution_context.operation_name)
    if operation is None:
        return set()
    return {node.name.value for node in operation.selection_set.selections if isinstance(node, FieldNode)}


def _tenant(context: Any) -> str | None:
    principal = getattr(context, "principal", None)
    return principal.tenant if principal is not None else None


class RoutedOperations(SchemaExtension):
    """Runs a query on a replica and a mutation on the primary; a mutation answers its consistency token."""

    async def on_execute(self) -> AsyncIterator[None]:
        found = routing()
        exchange = EXCHANGE.get()
        context = self.execution_context
        if found is None or exchange is None or context.operation_type is OperationType.SUBSCRIPTION:
            yield
            return
        if context.operation_type is OperationType.QUERY:
            exchange.replica = None if exchange.primary_only else found.node_for(_tenant(context.context), exchange.token)
            with reading_from(exchange.replica):
                yield
            exchange.replica = None
            return
        yield
        tenant = _tenant(context.context)
        if tenant is not None and _root_fields(context) & FENCED:
            exchange.answer = await found.fence(tenant)
            return
        exchange.answer = await _position_text(found.position)

    def get_results(self) -> dict[str, Any]:
        exchange = EXCHANGE.get()
        if exchange is None or exchange.answer is None:
            return {}
        return {"consistency": exchange.answer}


def note_failures(errors: list[Any]) -> None:
    """For the schema, on an operation's errors before they are masked: whether the replica it read from failed
    it, so that it runs again on the primary (a replica that went away is left out)."""
    exchange = EXCHANGE.get()
    found = routing()
    if exchange is None or exchange.replica is None or found is None:
        return
    causes = [error.original_error for error in errors]
    if any(replica_failed(cause) for cause in causes):
        exchange.failed = True
        if any(database_unavailable(cause) for cause in causes):
            found.down(exchange.replica)


async def executed_once_more_if_a_replica_failed(execute: Callable[[], Awaitable[Any]], context: Any) -> Any:
    """A query whose replica failed under it runs again, on the primary, with nothing kept of the first run."""
    result = await execute()
    exchange = EXCHANGE.get()
    if exchange is None or not exchange.failed:
        return result
    exchange.failed = False
    exchange.primary_only = True
    context.access = Access(context.principal)
    context.loaders = Loaders(context.principal.tenant if context.principal else "")
    return await execute()


@contextmanager
def reading_since(tenant: str, since: float) -> Iterator[None]:
    """For a subscription's read of an event heard at `since`: a replica only if it holds all committed before."""
    found = routing()
    with nullcontext() if found is None else reading_from(found.node_for(tenant, since=since)):
        yield
