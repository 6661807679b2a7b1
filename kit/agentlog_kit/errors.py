"""The refusals a kit can meet, each carrying the server's `extensions.code` and the input field at fault."""

from __future__ import annotations

import re
from typing import Any

LEADING_FIELD = re.compile(r"^([A-Za-z_][\w.\[\]]*)(?::| is | must | lists )")
VALIDATION_FIELD = re.compile(r"invalid value at \.([\w.\[\]]+)|required field '(\w+)'")


class AgentlogError(Exception):
    """A refusal from agentlog. `code` is `extensions.code`; `field` the input field the message names, if any.

    A refused `recordLines` batch wrote nothing; its lines are kept in `lines`, so none is lost unseen.
    """

    code = "INTERNAL"

    def __init__(self, message: str, *, field: str | None = None, lines: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.lines = lines


class Unauthenticated(AgentlogError):
    code = "UNAUTHENTICATED"


class Forbidden(AgentlogError):
    code = "FORBIDDEN"


class NotFound(AgentlogError):
    code = "NOT_FOUND"


class BadInput(AgentlogError):
    code = "BAD_INPUT"


class Conflict(AgentlogError):
    code = "CONFLICT"


class WorkRunning(AgentlogError):
    code = "WORK_RUNNING"


class Unavailable(AgentlogError):
    """The server or its database could not be reached, after every retry. Nothing is known to be written;
    sending the same call again is safe, since it carries the same idempotency key."""

    code = "UNAVAILABLE"


class Internal(AgentlogError):
    code = "INTERNAL"


BY_CODE: dict[str, type[AgentlogError]] = {
    kind.code: kind
    for kind in (Unauthenticated, Forbidden, NotFound, BadInput, Conflict, WorkRunning, Unavailable, Internal)
}


def field_named(message: str) -> str | None:
    found = VALIDATION_FIELD.search(message)
    if found:
        return found.group(1) or found.group(2)
    leading = LEADING_FIELD.match(message)
    return leading.group(1) if leading else None


def from_graphql(error: dict[str, Any]) -> AgentlogError:
    message = str(error.get("message", ""))
    code = str((error.get("extensions") or {}).get("code", "INTERNAL"))
    kind = BY_CODE.get(code, AgentlogError)
    refusal = kind(message, field=field_named(message))
    if kind is AgentlogError:
        refusal.code = code
    return refusal
