"""Every GraphQL error leaves with an extensions.code; anything unexpected is masked and logged with a request id.

Only what graphql-core itself finds wrong with the request (it does not parse, fails validation or the query
limits, or its variables do not fit their types) and the expected refusals speak their own message.
"""

from __future__ import annotations

import logging
from typing import Any

from graphql.error import GraphQLError
from strawberry.extensions import MaskErrors

from models.availability import database_unavailable
from models.errors import AgentlogError

log = logging.getLogger("agentlog.errors")


UNAVAILABLE = (
    "The database cannot be reached just now, so nothing was done; try again shortly "
    "(a write retried with the same idempotencyKey is safe)."
)


def request_id_of(context: Any) -> str:
    return getattr(context, "request_id", "-")


def shape(error: GraphQLError, request_id: str) -> GraphQLError:
    if (error.extensions or {}).get("code"):
        return error
    original = error.original_error
    if isinstance(original, AgentlogError):
        code, message = original.code, original.message
    elif database_unavailable(original):
        log.warning("request %s: the database cannot be reached: %s", request_id, error.message)
        code, message = "UNAVAILABLE", UNAVAILABLE
    elif error.path is None and (original is None or isinstance(original, GraphQLError)):
        code, message = "BAD_INPUT", error.message
    else:
        log.error("request %s failed: %s", request_id, error.message, exc_info=original)
        return GraphQLError(
            f"Something went wrong on the server (request {request_id}); it was logged.",
            nodes=error.nodes,
            path=error.path,
            extensions={"code": "INTERNAL", "requestId": request_id},
        )
    return GraphQLError(message, nodes=error.nodes, path=error.path, extensions={"code": code})


class ErrorCodes(MaskErrors):
    def __init__(self) -> None:
        super().__init__()

    def _process_errors(self, errors: list[GraphQLError]) -> list[GraphQLError]:
        request_id = request_id_of(self.execution_context.context)
        return [shape(error, request_id) for error in errors]
