"""The expected refusals. Each carries the `extensions.code` a client sees, and the input field at fault
(`extensions.field`) when there is one; a `BadInput` always names one."""


class AgentlogError(Exception):
    code = "INTERNAL"

    def __init__(self, message: str, field: str | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.reason = reason


class Unauthenticated(AgentlogError):
    code = "UNAUTHENTICATED"


class Forbidden(AgentlogError):
    """Refused to this caller; `reason` (`extensions.reason`) says why when the caller alone is not why: `HELD`."""

    code = "FORBIDDEN"


class NotFound(AgentlogError):
    code = "NOT_FOUND"


class BadInput(AgentlogError):
    """Input refused; `field` is the path, within the call's arguments, of the value at fault."""

    code = "BAD_INPUT"

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message, field)


class WorkRunning(AgentlogError):
    code = "WORK_RUNNING"


class Conflict(AgentlogError):
    code = "CONFLICT"


class CheckpointRefused(Exception):
    """A signature that would take a tree's checkpoint back, or fork it: the append rolls back, masked as INTERNAL."""
