"""The expected refusals. Each carries the `extensions.code` a client sees."""


class AgentlogError(Exception):
    code = "INTERNAL"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


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
