"""Batched reads over work trees: each function answers many keys in one SQL statement."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tortoise.expressions import Q
from tortoise.functions import Count, Sum

from models import AgentTask, LlmCall, TraceEvent


def outermost(paths: Iterable[str]) -> list[str]:
    """The paths not under another of them: the fewest prefixes that cover them all."""
    kept: list[str] = []
    for path in sorted(set(paths)):
        if not kept or not (path == kept[-1] or path.startswith(kept[-1] + "/")):
            kept.append(path)
    return kept


def under_any(field: str, paths: Iterable[str]) -> Q:
    """Rows whose `field` is one of these paths or lies under one: one prefix match each."""
    query = Q()
    for path in outermost(paths):
        query |= Q(**{field: path}) | Q(**{f"{field}__startswith": path + "/"})
    return query


async def tasks_by_id(tenant: str, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, AgentTask]:
    rows = await AgentTask.filter(tenant=tenant, id__in=list(ids))
    return {row.id: row for row in rows}


async def children_of(tenant: str, parent_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[AgentTask]]:
    out: dict[uuid.UUID, list[AgentTask]] = defaultdict(list)
    for row in await AgentTask.filter(tenant=tenant, parent_id__in=list(parent_ids)).order_by("sequence"):
        out[row.parent_id].append(row)
    return out


def depth_first(top: str, rows: list[AgentTask]) -> list[AgentTask]:
    """Everything under `top`, depth first, siblings in sequence order."""
    kids: dict[uuid.UUID | None, list[AgentTask]] = defaultdict(list)
    for row in rows:
        kids[row.parent_id].append(row)
    for siblings in kids.values():
        siblings.sort(key=lambda r: r.sequence)
    out: list[AgentTask] = []
    stack = list(reversed(kids[uuid.UUID(top.rsplit("/", 1)[-1])]))
    while stack:
        row = stack.pop()
        out.append(row)
        stack.extend(reversed(kids[row.id]))
    return out


async def subtrees_of(tenant: str, paths: Sequence[str]) -> dict[str, list[AgentTask]]:
    rows = await AgentTask.filter(under_any("path", paths), tenant=tenant)
    out: dict[str, list[AgentTask]] = {}
    for path in paths:
        prefix = path + "/"
        out[path] = depth_first(path, [r for r in rows if r.path.startswith(prefix)])
    return out


async def trees_of(tenant: str, root_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[AgentTask]]:
    out: dict[uuid.UUID, list[AgentTask]] = defaultdict(list)
    for row in await AgentTask.filter(tenant=tenant, root_id__in=list(root_ids)):
        out[row.root_id].append(row)
    return out


async def lines_of_tasks(tenant: str, task_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[TraceEvent]]:
    out: dict[uuid.UUID, list[TraceEvent]] = defaultdict(list)
    for row in await TraceEvent.filter(tenant=tenant, task_id__in=list(task_ids)).order_by("seq"):
        out[row.task_id].append(row)
    return out


async def lines_of_trees(tenant: str, root_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[TraceEvent]]:
    out: dict[uuid.UUID, list[TraceEvent]] = defaultdict(list)
    for row in await TraceEvent.filter(tenant=tenant, root_id__in=list(root_ids)).order_by("seq"):
        out[row.root_id].append(row)
    return out


async def calls_of(tenant: str, task_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[LlmCall]]:
    out: dict[uuid.UUID, list[LlmCall]] = defaultdict(list)
    for row in await LlmCall.filter(tenant=tenant, task_id__in=list(task_ids)).order_by("at", "id"):
        out[row.task_id].append(row)
    return out


@dataclass(slots=True)
class Meter:
    micros: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    model_calls: int = 0

    def add(self, other: "Meter") -> None:
        self.micros += other.micros
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.model_calls += other.model_calls


@dataclass(slots=True)
class Steps:
    tool_calls: int = 0
    turns: int = 0


def _meter(row: dict) -> Meter:
    return Meter(int(row["micros"] or 0), int(row["inp"] or 0), int(row["out"] or 0), int(row["n"] or 0))


METER_SUMS = {"micros": Sum("cost_micros"), "inp": Sum("input_tokens"), "out": Sum("output_tokens"), "n": Count("id")}


async def own_meter(tenant: str, task_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Meter]:
    rows = (
        await LlmCall.filter(tenant=tenant, task_id__in=list(task_ids))
        .annotate(**METER_SUMS)
        .group_by("task_id")
        .values("task_id", *METER_SUMS)
    )
    return {_uuid(r["task_id"]): _meter(r) for r in rows}


async def all_in_meter(tenant: str, paths: Sequence[str]) -> dict[str, Meter]:
    """Each path's meter, all in: one grouped aggregate over the outermost prefixes, rolled up by path."""
    rows = (
        await LlmCall.filter(under_any("task_path", paths), tenant=tenant)
        .annotate(**METER_SUMS)
        .group_by("task_path")
        .values("task_path", *METER_SUMS)
    )
    wanted = {path: Meter() for path in paths}
    for row in rows:
        meter = _meter(row)
        parts = row["task_path"].split("/")
        for end in range(1, len(parts) + 1):
            total = wanted.get("/".join(parts[:end]))
            if total is not None:
                total.add(meter)
    return wanted


async def own_steps(tenant: str, task_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Steps]:
    rows = (
        await TraceEvent.filter(tenant=tenant, task_id__in=list(task_ids), kind__in=["TOOL_CALL", "MODEL_CALL"])
        .filter(Q(kind="TOOL_CALL") | Q(by_tool__isnull=True))
        .annotate(n=Count("id"))
        .group_by("task_id", "kind")
        .values("task_id", "kind", "n")
    )
    out: dict[uuid.UUID, Steps] = defaultdict(Steps)
    for row in rows:
        steps = out[_uuid(row["task_id"])]
        if row["kind"] == "TOOL_CALL":
            steps.tool_calls = int(row["n"])
        else:
            steps.turns = int(row["n"])
    return out


def _uuid(value: object) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
