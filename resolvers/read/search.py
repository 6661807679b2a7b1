"""Search over the words and sentences a caller may read: PostgreSQL full text, SQLite FTS5.

The indexes are kept by the database itself (migrations 0006 and 0011): on PostgreSQL a task's words in
the narrow table `task_words` kept by a trigger, a line's in a generated `tsvector` column, each with a
GIN index; on SQLite FTS5 tables kept by triggers. So every write and every erasure changes the index in
its own transaction, and an erased word stops matching when the erasure commits.

The caller's text is only ever a list of words: PostgreSQL reads it with `plainto_tsquery`, SQLite gets
each word quoted as a string, so no character of it acts as a query operator.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from models.errors import BadInput
from permissions.access import ListScope
from resolvers.read.rows import ReadQuery

SEARCH_CHARS = 1000
WORD = re.compile(r"\w+")


def check(text: str) -> None:
    if len(text) > SEARCH_CHARS:
        raise BadInput(f"filter.search is {len(text)} characters long; at most {SEARCH_CHARS} are taken.",
                       field="filter.search")
    if not WORD.search(text):
        raise BadInput("filter.search: give at least one word to look for.", field="filter.search")


def _fts5(text: str) -> str:
    return " ".join(f'"{word}"' for word in WORD.findall(text))


def _query(q: ReadQuery, text: str) -> str:
    return f"plainto_tsquery('simple', {q.param(text)})" if q.postgres else q.param(_fts5(text))


def _words(q: ReadQuery, tenant: str, text: str) -> str:
    """The ids of the tasks whose about, trigger or outcome hold every word of `text` (on SQLite, of any tenant)."""
    if q.postgres:
        return f"SELECT task_id FROM task_words WHERE tenant = {q.param(tenant)} AND words @@ {_query(q, text)}"
    return f"SELECT task_id FROM task_words WHERE task_words MATCH {_query(q, text)}"


def _sentences(q: ReadQuery, tenant: str, text: str) -> str:
    """The ids of the tenant's tasks with a line whose sentence holds every word of `text`."""
    if q.postgres:
        return f"SELECT task_id FROM trace_event WHERE tenant = {q.param(tenant)} AND search_words @@ {_query(q, text)}"
    of_tenant = f"tenant = {q.param(tenant)}"
    lines = f"SELECT rowid FROM line_words WHERE line_words MATCH {_query(q, text)}"
    return f"SELECT task_id FROM trace_event WHERE {of_tenant} AND id IN ({lines})"


def matches(q: ReadQuery, scope: ListScope, text: str, asked_by: Callable[[], str], paged: bool = False) -> str:
    """The condition on `agent_task` for tasks whose words or one of whose sentences hold every word of `text`.

    `asked_by` makes the condition bounding the match to the trees the caller asked for, used when they
    read words there only. A `paged` read walks an index in order and stops at its page, so on PostgreSQL
    it tests each task's own words as it passes; a count takes the set of matches from the index.
    """
    if scope.words is None:
        return "1 = 0"
    if paged and q.postgres:
        words = (
            f"(SELECT w.words FROM task_words w WHERE w.task_id = agent_task.id AND w.tenant = agent_task.tenant) "
            f"@@ {_query(q, text)}"
        )
    else:
        words = f"agent_task.id IN ({_words(q, scope.tenant, text)})"
    found = f"({words} OR agent_task.id IN ({_sentences(q, scope.tenant, text)}))"
    return found if scope.words == "all" else f"({found} AND {asked_by()})"


def count_all(q: ReadQuery, tenant: str, text: str, ledger: str) -> str:
    """On PostgreSQL, how many of the tenant's tasks match `text`, for a caller who reads words and sentences
    on all of them: the tasks whose own words match, counted from `task_words` alone, and those that match
    only by a sentence, but for the `ledger` (no list holds it unless asked for by its agent)."""
    return (
        f"SELECT (SELECT COUNT(*) FROM ({_words(q, tenant, text)}) by_words) + (SELECT COUNT(DISTINCT e.task_id) "
        f"FROM ({_sentences(q, tenant, text)}) e WHERE e.task_id <> {q.param(ledger)} AND NOT EXISTS (SELECT 1 FROM task_words w "
        f"WHERE w.task_id = e.task_id AND w.tenant = {q.param(tenant)} AND w.words @@ {_query(q, text)}))"
    )
