"""What the GraphQL view answers before GraphQL runs: JSON in the GraphQL error shape, never plain text."""

from __future__ import annotations

import logging
import uuid

from cross_web import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.types import Receive, Scope, Send
from strawberry.schema.exceptions import InvalidOperationTypeError
from strawberry.types.graphql import OperationType

from graph.http_errors import error_response
from models.availability import database_unavailable

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
