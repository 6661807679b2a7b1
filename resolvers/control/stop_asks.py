"""The stops asked in a tree, kept on its root's row (`stops`, JSON keyed by the stopped task's id), where the
write path's lock already reads: a write learns a stop of its task or of any task above it with no statement of
its own."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson

from resolvers.control import answers


def asked(root: Any) -> dict[str, dict[str, Any]]:
    return orjson.loads(root.stops) if root.stops else {}


def over(root: Any, task: Any) -> dict[str, Any] | None:
    """The stop asked of `task` or of the nearest task above it; None when none was."""
    if not root.stops:
        return None
    stops = asked(root)
    for task_id in reversed(task.path.split("/")):
        if task_id in stops:
            return stops[task_id]
    return None


def of(root: Any, task: Any) -> dict[str, Any] | None:
    """The stop asked of `task` itself."""
    return asked(root).get(str(task.id)) if root.stops else None


def with_stop(root: Any, task: Any, by: dict[str, Any], reason: str, at: datetime) -> str:
    """The root's `stops` with `task`'s stop added."""
    stops = asked(root)
    stops[str(task.id)] = {"by": by, "reason": reason, "at": at.isoformat()}
    return orjson.dumps(stops).decode()


def heard(root: Any, task: Any) -> None:
    """A write to `task` answers the stop over it."""
    stop = over(root, task)
    if stop is not None:
        answers.note("stopAsked", stop)
