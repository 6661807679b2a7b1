"""Plain values as the server takes them: principals, briefs, JSON results, a call's arguments."""

from __future__ import annotations

import inspect
import json
from typing import Any

from agentlog_kit.errors import StopAsked
from agentlog_kit.types import Principal, TaskStatus
from agentlog_kit.wire import graphql_input


def principal(value: Principal | None) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return {"id": value}
    return graphql_input({"id": value["id"], "name": value.get("name")})


def text(given: Any) -> str | None:
    """A brief as the server keeps it: text as it is, anything else as JSON."""
    if given is None or isinstance(given, str):
        return given
    return json.dumps(given, ensure_ascii=False, default=repr)


def jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False, default=repr))


def arguments(signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return json.dumps(dict(bound.arguments), ensure_ascii=False, default=repr)


def failure_outcome(error: BaseException) -> str:
    return str(error) or type(error).__name__


def ending_status(error: BaseException) -> TaskStatus:
    """An exception fails the task; a stop asked, a cancellation or an interrupt stops it."""
    return "FAILED" if isinstance(error, Exception) and not isinstance(error, StopAsked) else "STOPPED"
