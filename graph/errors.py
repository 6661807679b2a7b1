"""Every GraphQL error leaves with an extensions.code; anything unexpected is masked and logged with a request id."""

from __future__ import annotations

import logging

from graphql.error import GraphQLError
from strawberry.extensions import MaskErrors

from models.errors import AgentlogError

log = logging.getLogger("agentlog.errors")


class ErrorCodes(MaskErrors):
    def __init__(self) -> None:
        super().__init__()

    def _request_id(self) -> str:
        context = self.execution_context.context
        return getattr(context, "request_id", "-")

    def _process_errors(self, errors: list[GraphQLError]) -> list[GraphQLError]:
        return [self._shape(error) for error in errors]

    def _shape(self, error: GraphQLError) -> GraphQLError:
        original = error.original_error
        if isinstance(original, AgentlogError):
            code, message = original.code, original.message
        elif error.path is None:
            code, message = "BAD_INPUT", error.message
        else:
            request_id = self._request_id()
            log.error("request %s failed: %s", request_id, error.message, exc_info=original)
            return GraphQLError(
                f"Something went wrong on the server (request {request_id}); it was logged.",
                nodes=error.nodes,
                path=error.path,
                extensions={"code": "INTERNAL", "requestId": request_id},
            )
        return GraphQLError(message, nodes=error.nodes, path=error.path, extensions={"code": code})
