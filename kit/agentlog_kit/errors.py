"""The refusals a kit can meet, each carrying what the server said in structure, never parsed from its message:
the code, the argument at fault, the HTTP status and the request id."""

from __future__ import annotations

import re
from typing import Any

LINE_PATH = re.compile(r"lines\[(\d+)\]\.\w+\.?")
CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


class AgentlogError(Exception):
    """A refusal from agentlog, as stripe-python's errors carry theirs.

    - `code`: the server's `extensions.code`.
    - `field`: the argument of the kit call at fault, as the caller wrote it (`input_tokens`, `requester.id`),
      also when the call went out in a batch of lines; None when no argument is at fault.
    - `path`: the server's `extensions.field` as sent (`input.inputTokens`, `lines[3].modelCall.costMicros`).
    - `line`: for a refused batch, the index within `lines` of the line at fault.
    - `http_status`, `request_id`: the HTTP status of the answer and its `X-Request-Id`, to find it in the
      server's log.

    A refused `recordLines` batch wrote nothing; its lines are kept in `lines`, so none is lost unseen.
    """

    code = "INTERNAL"

    def __init__(self, message: str, *, field: str | None = None, path: str | None = None,
                 http_status: int | None = None, request_id: str | None = None,
                 lines: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.field = field if field is not None else argument_of(path)
        self.line = line_of(path)
        self.http_status = http_status
        self.request_id = request_id
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


class Answered(AgentlogError):
    """A write the server recorded, whose answer asks the agent to act on it. Raised from that write (for lines
    sent in a batch, from the next call of their task); nothing is lost or sent again. `answer` is what the
    write answered."""

    def __init__(self, message: str, *, answer: Any = None, **refusal: Any) -> None:
        super().__init__(message, **refusal)
        self.answer = answer


class StopAsked(Answered):
    """A person asked this work, or work above it, to stop (`stopTask`): `by` ({"id", "name"}), `reason` and
    `at` (RFC 3339 text) say who, why and when. A `with` block it leaves ends its task STOPPED."""

    code = "STOP_ASKED"

    def __init__(self, stop: dict[str, Any], answer: Any = None) -> None:
        self.by: dict[str, Any] = stop["by"]
        self.reason: str = stop["reason"]
        self.at: str = stop["at"]
        who = self.by.get("name") or self.by["id"]
        super().__init__(f"{who} asked the work to stop: {self.reason}", answer=answer)


class BudgetExceeded(Answered):
    """The write took the all-in spend of `task` (this work, or work above it) past its `limit_micros`:
    `spent_micros` is that spend now. Raised unless the kit was made with `on_budget="warn"`, which warns with a
    `BudgetWarning` instead. A `with` block it leaves ends its task FAILED."""

    code = "OVER_BUDGET"

    def __init__(self, over: dict[str, Any], answer: Any = None) -> None:
        self.task: str = over["task"]
        self.limit_micros: int = over["limitMicros"]
        self.spent_micros: int = over["spentMicros"]
        super().__init__(f"task {self.task} has spent {self.spent_micros} micros of its limit of "
                         f"{self.limit_micros}.", answer=answer)


class BudgetWarning(UserWarning):
    """A write went over budget, told to a kit made with `on_budget="warn"`."""


BY_CODE: dict[str, type[AgentlogError]] = {
    kind.code: kind
    for kind in (Unauthenticated, Forbidden, NotFound, BadInput, Conflict, WorkRunning, Unavailable, Internal)
}


def argument_of(path: str | None) -> str | None:
    """The kit call's own argument for a server path: `input.inputTokens` and `lines[0].modelCall.inputTokens`
    are both `input_tokens`."""
    if path is None:
        return None
    rest = path.removeprefix("input.")
    line = LINE_PATH.match(rest)
    if line is not None:
        rest = rest[line.end():]
    if not rest:
        return None
    return ".".join(CAMEL.sub(lambda found: "_" + found.group(1).lower(), part) for part in rest.split("."))


def line_of(path: str | None) -> int | None:
    found = LINE_PATH.match(path or "")
    return int(found.group(1)) if found else None


def from_graphql(error: dict[str, Any], http_status: int | None = None, request_id: str | None = None) -> AgentlogError:
    message = str(error.get("message", ""))
    extensions = error.get("extensions") or {}
    code = str(extensions.get("code", "INTERNAL"))
    path = extensions.get("field")
    kind = BY_CODE.get(code, AgentlogError)
    refusal = kind(message, path=path if isinstance(path, str) else None, http_status=http_status,
                   request_id=request_id or extensions.get("requestId"))
    if kind is AgentlogError:
        refusal.code = code
    return refusal
