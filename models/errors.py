"""The expected refusals. Each carries the `extensions.code` a client sees, and the input field at fault
(`extensions.field`) when there is one."""

import re

LEADING_FIELD = re.compile(r"([A-Za-z_][\w.\[\]]*): ")


class AgentlogError(Exception):
    code = "INTERNAL"

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field if field is not None else leading_field(message)


def leading_field(message: str) -> str | None:
    """The field a refusal written as `field: what is wrong` names, for the raises that give no `field=`.

    Deprecated: give `field=`; this goes once every raise does."""
    found = LEADING_FIELD.match(message)
    return found.group(1) if found else None


class Unauthenticated(AgentlogError):
    code = "UNAUTHENTICATED"


class Forbidden(AgentlogError):
    code = "FORBIDDEN"


class NotFound(AgentlogError):
    code = "NOT_FOUND"


class BadInput(AgentlogError):
    code = "BAD_INPUT"


class WorkRunning(AgentlogError):
    code = "WORK_RUNNING"


class Conflict(AgentlogError):
    code = "CONFLICT"


class CheckpointRefused(Exception):
    """A signature that would take a tree's checkpoint back, or fork it: the append rolls back, masked as INTERNAL."""
