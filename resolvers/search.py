"""Search over the words and sentences a caller may read: PostgreSQL full text, SQLite FTS5.

The indexes are kept by the database itself (migration 0006): generated `tsvector` columns with GIN
indexes on PostgreSQL, FTS5 tables kept by triggers on SQLite. So every write and every erasure
changes the index in its own transaction, and an erased word stops matching when the erasure commits.

The caller's text is only ever a list of words: PostgreSQL reads it with `plainto_tsquery`, SQLite gets
each word quoted as a string, so no character of it acts as a query operator.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

from models.errors import BadInput
from resolvers.rows import Statement

SEARCH_CHARS = 1000
WORD = re.compile(r"\w+")


class Scope(Protocol):
    """Where the caller reads words and sentences: "all" their tenant's tasks, the trees under the tasks
    they "asked" for, or None: nowhere, so nothing matches."""

    tenant: str
    sub: str
    words: str | None


def check(text: str) -> None:
    if len(text) > SEARCH_CHARS:
        raise BadInput(f"filter.search is {len(text)} characters long; at most {SEARCH_CHARS} are taken.")
    if not WORD.search(text):
        raise BadInput("filter.search: give at least one word to look for.")


def _fts5(text: str) -> str:
    return " ".join(f'"{word}"' for word in WORD.findall(text))


def matches(q: Statement, scope: Scope, text: str, asked_by: Callable[[], str]) -> str:
    """The condition on `agent_task` for tasks whose words or one of whose sentences hold every word of `text`.

    `asked_by` makes the condition bounding the match to the trees the caller asked for, used when they
    read words there only.
    """
    if scope.words is None:
        return "1 = 0"
    if q.postgres:
        words = f"agent_task.search_words @@ plainto_tsquery('simple', {q.param(text)})"
        sentences = (
            f"SELECT task_id FROM trace_event WHERE tenant = {q.param(scope.tenant)} "
            f"AND search_words @@ plainto_tsquery('simple', {q.param(text)})"
        )
    else:
        words = f"agent_task.id IN (SELECT task_id FROM task_words WHERE task_words MATCH {q.param(_fts5(text))})"
        sentences = (
            "SELECT task_id FROM trace_event WHERE id IN "
            f"(SELECT rowid FROM line_words WHERE line_words MATCH {q.param(_fts5(text))})"
        )
    found = f"({words} OR agent_task.id IN ({sentences}))"
    return found if scope.words == "all" else f"({found} AND {asked_by()})"
