"""What a write answers beside its result: `stopAsked` when its task or one above it was asked to stop.

The write path notes them here as it writes; the GraphQL layer gives them in the response's top-level
`extensions` (graph/api/write_answers.py). Outside a request nothing is noted.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

ANSWERS: ContextVar[dict[str, Any] | None] = ContextVar("agentlog_write_answers", default=None)


def note(key: str, value: Any) -> None:
    answers = ANSWERS.get()
    if answers is not None:
        answers[key] = value


@contextmanager
def collected() -> Iterator[dict[str, Any]]:
    """The answers noted while the block runs."""
    answers: dict[str, Any] = {}
    token = ANSWERS.set(answers)
    try:
        yield answers
    finally:
        ANSWERS.reset(token)
