"""Every GraphQL error leaves with an extensions.code; anything unexpected is masked and logged with a request id.

Only what graphql-core itself finds wrong with the request (it does not parse, fails validation or the query
limits, or its variables do not fit their types) and the expected refusals speak their own message.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from collections.abc import Iterator

from graphql.error import GraphQLError
from graphql.language import ArgumentNode, FieldNode, ListValueNode, Node, ObjectValueNode, Visitor, parse, visit
from models.availability import database_unavailable
from models.errors import AgentlogError

log = logging.getLogger("agentlog.errors")


UNAVAILABLE = (
    "The database cannot be reached just now, so nothing was done; try again shortly "
    "(a write retried with the same idempotencyKey is safe)."
)


def request_id_of(context: Any) -> str:
    return getattr(context, "request_id", "-")


VARIABLE = re.compile(r"^Variable '\$(\w+)' has invalid value(?: at ([\w.\[\]]+))?: ")
REQUIRED = re.compile(r"to include required field '(\w+)'")


def argument_path(field: str, error: GraphQLError) -> str:
    """The path of the argument at fault, from the field a resolver named within its input: `input.inputTokens`.

    A line of `recordLines` is named from `lines`, as the contract names it (`lines[3].modelCall.costMicros`);
    any other field of a mutation's `input` is named within it, even one called `input`; a field that already
    starts with one of the call's arguments (`filter.search`, `first`) is left as it is."""
    node = error.nodes[0] if error.nodes else None
    arguments = [argument.name.value for argument in node.arguments or ()] if isinstance(node, FieldNode) else []
    head = re.split(r"[.\[]", field, maxsplit=1)[0]
    if head == "lines":
        return field
    if arguments == ["input"]:
        return f"input.{field}"
    if head in arguments or len(arguments) != 1:
        return field
    return f"{arguments[0]}.{field}"


def variable_path(message: str) -> str | None:
    """Where graphql-core found a variable's value not of its type. Its errors carry this only in the message
    (graphql-core 3.3: `Variable '$input' has invalid value at .inputTokens: …`, `… to include required field
    'agent' …`), so it is read from there, once, here. A line of `recordLines` is named from `lines`."""
    found = VARIABLE.match(message)
    if found is None:
        return None
    path = found.group(1) + (found.group(2) or "")
    missing = REQUIRED.search(message, found.end())
    return _lines_named(f"{path}.{missing.group(1)}" if missing else path)


def literal_path(error: GraphQLError) -> str | None:
    """Where validation found a value written into the document not of its type: the value's path below its
    argument (`input.actor.id`), found by the place in the document graphql-core points at."""
    found = error.nodes[0] if error.nodes else None
    if found is None or found.loc is None:
        return None
    arguments: list[ArgumentNode] = []

    class Arguments(Visitor):
        def enter_argument(self, node: ArgumentNode, *_: Any) -> None:
            arguments.append(node)

    visit(parse(found.loc.source), Arguments())
    for argument in arguments:
        for value, path in _values(argument.value, argument.name.value):
            if value.loc is not None and (value.kind, value.loc.start) == (found.kind, found.loc.start):
                missing = REQUIRED.search(error.message)
                return _lines_named(f"{path}.{missing.group(1)}" if missing else path)
    return None


def _values(value: Node, path: str) -> Iterator[tuple[Node, str]]:
    yield value, path
    if isinstance(value, ObjectValueNode):
        for field in value.fields:
            yield from _values(field.value, f"{path}.{field.name.value}")
    elif isinstance(value, ListValueNode):
        for at, item in enumerate(value.values):
            yield from _values(item, f"{path}[{at}]")


def _lines_named(path: str) -> str:
    return path.removeprefix("input.") if path.startswith("input.lines") else path


def shape(error: GraphQLError, request_id: str) -> GraphQLError:
    if (error.extensions or {}).get("code"):
        return error
    original = error.original_error
    field = None
    if isinstance(original, AgentlogError):
        code, message = original.code, original.message
        if original.field is not None:
            field = argument_path(original.field, error)
    elif database_unavailable(original):
        log.warning("request %s: the database cannot be reached: %s", request_id, error.message)
        code, message = "UNAVAILABLE", UNAVAILABLE
    elif error.path is None and (original is None or isinstance(original, GraphQLError)):
        code, message, field = "BAD_INPUT", error.message, variable_path(error.message) or literal_path(error)
    else:
        log.error("request %s failed: %s", request_id, error.message, exc_info=original)
        return GraphQLError(
            f"Something went wrong on the server (request {request_id}); it was logged.",
            nodes=error.nodes,
            path=error.path,
            extensions={"code": "INTERNAL", "requestId": request_id},
        )
    extensions = {"code": code} if field is None else {"code": code, "field": field}
    if isinstance(original, AgentlogError) and original.reason is not None:
        extensions["reason"] = original.reason
    return GraphQLError(message, nodes=error.nodes, path=error.path, extensions=extensions)
