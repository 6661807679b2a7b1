"""Batched reads over work trees: each function answers many keys with one SQL statement.

"Everything under a task" is a prefix match on the materialised path, served by the path indexes of
migration 0002. A batch asking for many prefixes at once (a whole level of a big tree) reads the
trees they belong to by `root_id` instead, and keeps what lies under each prefix.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from tortoise.expressions import Q

from models import LlmCall
from models.record.vocabulary import LineKind
from resolvers.read.rows import ReadQuery, TaskRow, read_lines, read_tasks

PREFIX_LIMIT = 32
"""The most prefixes one statement matches; past it, a batch reads whole trees by root."""


def outermost(paths: Iterable[str]) -> list[str]:
    """The paths not under another of them: the fewest prefixes that cover them all."""
    kept: list[str] = []
    for path in sorted(set(paths)):
        if not kept or not (path == kept[-1] or path.startswith(kept[-1] + "/")):
            kept.append(path)
    return kept


def under_any(field: str, paths: Iterable[str]) -> Q:
    """Rows whose `field` is one of these paths or lies under one: one prefix match each."""
    terms = [Q(**{field: path}) | Q(**{f"{field}__startswith": path + "/"}) for path in outermost(paths)]
    return _any(terms) if terms else Q(pk__in=[])


def _any(terms: list[Q]) -> Q:
    if len(terms) == 1:
        return terms[0]
    middle = len(terms) // 2
    return Q(_any(terms[:middle]), _any(terms[middle:]), join_type="OR")


def root_of(path: str) -> str:
    return path.split("/", 1)[0]


def prefixes_of(path: str) -> Iterator[str]:
    """The path of every task from the root down to this one."""
    at = path.find("/")
    while at != -1:
        yield path[:at]
        at = path.find("/", at + 1)
    yield path


@dataclass(frozen=True, slots=True)
class Cover:
    """What one statement reads to answer a batch of prefixes: the prefixes themselves, or their whole trees."""

    prefixes: list[str]
    roots: list[uuid.UUID]

    @classmethod
    def of(cls, paths: Iterable[str]) -> Cover:
        kept = outermost(paths)
        if len(kept) <= PREFIX_LIMIT:
            return cls(kept, [])
        return cls([], sorted({uuid.UUID(root_of(p)) for p in kept}))


async def tasks_by_id(tenant: str, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, TaskRow]:
    q = ReadQuery()
    rows = await read_tasks(q, f"tenant = {q.param(tenant)} AND {q.one_of('id', ids)}")
    return {row.id: row for row in rows}


async def children_of(tenant: str, parent_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[TaskRow]]:
    q = ReadQuery()
    rows = await read_tasks(q, f"tenant = {q.param(tenant)} AND {q.one_of('parent_id', parent_ids)}", "sequence")
    out: dict[uuid.UUID, list[TaskRow]] = defaultdict(list)
    for row in rows:
        out[row.parent_id].append(row)
    return out


def kids_of(rows: Iterable[TaskRow]) -> dict[uuid.UUID | None, list[TaskRow]]:
    """Each task's children among `rows`, in sequence order."""
    kids: dict[uuid.UUID | None, list[TaskRow]] = defaultdict(list)
    for row in rows:
        kids[row.parent_id].append(row)
    for siblings in kids.values():
        siblings.sort(key=lambda r: r.sequence)
    return kids


def depth_first(top: uuid.UUID, kids: dict[uuid.UUID | None, list[TaskRow]]) -> list[TaskRow]:
    """Everything under `top`, depth first, siblings in sequence order."""
    out: list[TaskRow] = []
    stack = list(reversed(kids.get(top, ())))
    while stack:
        row = stack.pop()
        out.append(row)
        stack.extend(reversed(kids.get(row.id, ())))
    return out


def own_id(path: str) -> uuid.UUID:
    return uuid.UUID(path.rsplit("/", 1)[-1])


def _under(q: ReadQuery, cover: "Cover") -> str:
    """The condition for tasks under the covered paths: whole trees by root, or one prefix match each."""
    if cover.roots:
        return q.one_of("root_id", cover.roots)
    return q.starts_with("path", [p + "/" for p in cover.prefixes])


async def subtrees_of(tenant: str, paths: Sequence[str]) -> dict[str, list[TaskRow]]:
    """Everything under each path: one prefix query (or one query by root, for many prefixes)."""
    cover = Cover.of(paths)
    q = ReadQuery()
    kids = kids_of(await read_tasks(q, f"tenant = {q.param(tenant)} AND {_under(q, cover)}"))
    return {path: depth_first(own_id(path), kids) for path in paths}


async def descendants_of(tenant: str, paths: Sequence[str], deepest: int) -> list[TaskRow]:
    """Every task under the paths down to depth `deepest`: one prefix query (or one by root, for many)."""
    cover = Cover.of(paths)
    q = ReadQuery()
    where = f"tenant = {q.param(tenant)} AND depth <= {q.param(deepest)} AND {_under(q, cover)}"
    rows = await read_tasks(q, where, "sequence")
    if not cover.roots:
        return rows
    tops = set(paths)
    return [row for row in rows if any(p in tops for p in prefixes_of(row.path) if p != row.path)]


async def trees_of(tenant: str, root_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[TaskRow]]:
    q = ReadQuery()
    out: dict[uuid.UUID, list[TaskRow]] = defaultdict(list)
    for row in await read_tasks(q, f"tenant = {q.param(tenant)} AND {q.one_of('root_id', root_ids)}"):
        out[row.root_id].append(row)
    return out


async def lines_of_tasks(
    tenant: str, task_ids: Sequence[uuid.UUID], columns: Iterable[str]
) -> dict[uuid.UUID, list[Any]]:
    q = ReadQuery()
    where = f"tenant = {q.param(tenant)} AND {q.one_of('task_id', task_ids)}"
    return await read_lines(q, "task_id", columns, where, "seq")


async def calls_by_id(tenant: str, call_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, LlmCall]:
    return {row.id: row for row in await LlmCall.filter(tenant=tenant, id__in=list(call_ids))}


class Meter(NamedTuple):
    micros: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    model_calls: int = 0


NO_METER = Meter()


class Spend(NamedTuple):
    """A task's meter on its own and all in (the task and everything under it)."""

    own: Meter = NO_METER
    all_in: Meter = NO_METER


METER_SUMS = "SUM(l.cost_micros), SUM(l.input_tokens), SUM(l.output_tokens), COUNT(*)"


async def meter_by_path(tenant: str, cover: Cover) -> dict[str, Meter]:
    """The meter summed per task path under the cover: one grouped aggregate."""
    q = ReadQuery()
    if cover.roots:
        sql = (
            f"SELECT l.task_path, {METER_SUMS} FROM llm_call l JOIN agent_task t ON t.id = l.task_id "
            f"WHERE l.tenant = {q.param(tenant)} AND t.tenant = {q.param(tenant)} AND {q.one_of('t.root_id', cover.roots)} "
            "GROUP BY l.task_path"
        )
    else:
        sql = (
            f"SELECT l.task_path, {METER_SUMS} FROM llm_call l "
            f"WHERE l.tenant = {q.param(tenant)} AND {q.starts_with('l.task_path', cover.prefixes)} "
            "GROUP BY l.task_path"
        )
    return {
        path: Meter(int(micros or 0), int(inp or 0), int(out or 0), int(n or 0))
        for path, micros, inp, out, n in await q.rows(sql)
    }


def rolled_up(own: dict[str, Meter]) -> dict[str, Meter]:
    """Each path's meter summed with everything under it, for every path of `own` and every path above one:
    the deepest first, each added once to its parent."""
    levels: dict[int, dict[str, list[int]]] = defaultdict(dict)
    for path, meter in own.items():
        levels[path.count("/")][path] = list(meter)
    for depth in range(max(levels, default=0), 0, -1):
        above = levels[depth - 1]
        for path, (micros, inp, out, calls) in levels[depth].items():
            parent = path[:path.rfind("/")]
            total = above.get(parent)
            if total is None:
                above[parent] = [micros, inp, out, calls]
            else:
                total[0] += micros
                total[1] += inp
                total[2] += out
                total[3] += calls
    return {path: Meter(*total) for level in levels.values() for path, total in level.items()}


@dataclass
class MeterBook:
    """The meter read so far in one request, by task path, rolled up to every task above."""

    read: set[str] = field(default_factory=set)
    own: dict[str, Meter] = field(default_factory=dict)
    all_in: dict[str, Meter] = field(default_factory=dict)

    def covers(self, path: str) -> bool:
        read = self.read
        at = path.find("/")
        while at != -1:
            if path[:at] in read:
                return True
            at = path.find("/", at + 1)
        return path in read

    def enter(self, cover: Cover, found: dict[str, Meter]) -> None:
        self.read.update(cover.prefixes)
        self.read.update(str(root) for root in cover.roots)
        self.own.update(found)
        self.all_in = rolled_up(self.own)

    def spend(self, path: str) -> Spend:
        return Spend(self.own.get(path, NO_METER), self.all_in.get(path, NO_METER))

    async def load(self, tenant: str, paths: Sequence[str]) -> dict[str, Spend]:
        missing = [p for p in paths if not self.covers(p)]
        if missing:
            cover = Cover.of(missing)
            self.enter(cover, await meter_by_path(tenant, cover))
        return {path: self.spend(path) for path in paths}


@dataclass(slots=True)
class Steps:
    tool_calls: int = 0
    turns: int = 0


async def own_steps(tenant: str, task_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Steps]:
    """Tool calls and turns (the agent's own model calls, not a tool's) per task, from the record."""
    q = ReadQuery()
    sql = (
        f"SELECT task_id, kind, COUNT(*) FROM trace_event WHERE tenant = {q.param(tenant)} "
        f"AND {q.one_of('task_id', task_ids)} "
        f"AND (kind = '{LineKind.TOOL_CALL}' OR (kind = '{LineKind.MODEL_CALL}' AND by_tool IS NULL)) "
        "GROUP BY task_id, kind"
    )
    out: dict[uuid.UUID, Steps] = defaultdict(Steps)
    for task_id, kind, n in await q.rows(sql):
        steps = out[_uuid(task_id)]
        if kind == LineKind.TOOL_CALL:
            steps.tool_calls = int(n)
        else:
            steps.turns = int(n)
    return out


def _uuid(value: object) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
