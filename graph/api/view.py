"""What the GraphQL view answers before GraphQL runs: JSON in the GraphQL error shape, never plain text; a request
whose token is bad, or whose document is not trusted where only trusted documents run, is answered with its one
error and runs nothing."""

from __future__ import annotations

import dataclasses
import logging
import uuid
from typing import Any

from cross_web import HTTPException
from graphql import GraphQLError
from starlette.requests import ClientDisconnect, Request
from starlette.types import Receive, Scope, Send
from strawberry.http import GraphQLRequestData
from strawberry.schema.exceptions import InvalidOperationTypeError
from strawberry.types import ExecutionResult
from strawberry.types.graphql import OperationType

from graph.http.errors import error_response
from models.availability import database_unavailable
from models.errors import AgentlogError
from resolvers.trusted_documents import document_to_run

log = logging.getLogger("agentlog.errors")

SUBSCRIPTION_OVER_HTTP = (
    "Subscriptions are served over WebSocket (graphql-transport-ws) at /graphql, not over plain HTTP."
)


class JSONErrorsView:
    """A mixin for strawberry's ASGI view: a bad request (not JSON, no query, a query sent as GET, a
    subscription sent over HTTP, ...) answers its status with `extensions.code`; anything unexpected answers
    500 INTERNAL with a request id, and is logged under it."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)  # type: ignore[misc]
            return
        try:
            response = await self.run(Request(scope=scope, receive=receive))  # type: ignore[attr-defined]
        except HTTPException as exc:
            response = error_response(exc.status_code, _reason(exc))
        except ClientDisconnect:
            return
        except Exception as exc:
            if database_unavailable(exc):
                raise
            request_id = uuid.uuid4().hex[:12]
            log.exception("request %s failed", request_id)
            response = error_response(
                500, f"Something went wrong on the server (request {request_id}); it was logged.",
                requestId=request_id,
            )
        await response(scope, receive, send)


OVER_GET = "Send queries and mutations with POST /graphql; GET /graphql serves GraphiQL to a browser."


def _reason(exc: HTTPException) -> str:
    cause = exc.__cause__
    if isinstance(cause, InvalidOperationTypeError):
        return SUBSCRIPTION_OVER_HTTP if cause.operation_type is OperationType.SUBSCRIPTION else OVER_GET
    return exc.reason


class AdmittedRequests:
    """A mixin for strawberry's view (its `execute_single`, strawberry 0.341): every operation of a request is first
    admitted — the caller's token, if sent, is good, and the document is one that may run for this caller."""

    async def execute_single(
        self, *, request: Any, request_adapter: Any, sub_response: Any, context: Any, root_value: Any,
        request_data: GraphQLRequestData,
    ) -> ExecutionResult:
        try:
            context.writer()
            query = document_to_run(request_data.query, request_data.extensions, context.principal,
                                    context.settings.trusted_documents, context.settings.only_trusted_documents)
        except AgentlogError as exc:
            return ExecutionResult(data=None, errors=[GraphQLError(exc.message, extensions={"code": exc.code})])
        return await super().execute_single(  # type: ignore[misc]
            request=request, request_adapter=request_adapter, sub_response=sub_response, context=context,
            root_value=root_value, request_data=dataclasses.replace(request_data, query=query),
        )
