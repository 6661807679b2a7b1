"""What a query reads below the tasks a root field returns, read ahead of the executor in a few batches.

A root field (`task`, `tasks`) works out a `TaskPlan` from its selection once. `prefetch` then finds every
task the selection reaches (a chain of `children` in one descendants query) and reads what the selection
asks of all of them in one batch per kind of read. The fields below find their rows in the request's
loaders and resolve at once. Nothing depends on it for correctness: a field whose rows were not read
ahead loads them in its own batch.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from strawberry.types.nodes import FragmentSpread, InlineFragment, SelectedField, Selection
from strawberry.utils.str_converters import to_snake_case

from graph.api.loaders import Columns, Loader
from graph.api.pages import record_key
from permissions.access import ancestor_ids
from resolvers.read import tree
from resolvers.read.pages import MAX_FIRST, Page
from resolvers.read.rows import LINE_COLUMNS, TaskRow, task_row_of

TASK_VALUED = ("children", "subtree", "parent", "root", "lineage")
PAGED = ("children", "subtree", "trace", "record", "calls")
WHOLE = Page()
METER_FIELDS = frozenset({"cost", "spentMicros", "modelCalls", "inputTokens", "outputTokens"})
STEP_FIELDS = frozenset({"toolCalls", "turns"})
ROOT_FIELDS = frozenset({"root", "chainLength", "chainHead"})
LINE_FIELD_COLUMNS: dict[str, frozenset[str]] = {  # the line fields that read columns other than their own name
    "contentAccess": frozenset({"content_erased_at", "withheld"}),
    "withheldReason": frozenset({"withheld"}),
    "task": frozenset({"task_id"}),
    "call": frozenset({"call_id", "task_id"}),
    "__typename": frozenset(),
}


def fields_of(selections: Iterable[Selection]) -> list[SelectedField]:
    """The fields selected, fragments spread out."""
    out: list[SelectedField] = []
    for selection in selections:
        if isinstance(selection, SelectedField):
            out.append(selection)
        elif isinstance(selection, (FragmentSpread, InlineFragment)):
            out.extend(fields_of(selection.selections))
    return out


def line_columns(selections: Iterable[Selection]) -> Columns:
    """The `trace_event` columns the fields selected on a line read; every column for a field not known here."""
    columns: set[str] = set()
    for selected in fields_of(selections):
        known = LINE_FIELD_COLUMNS.get(selected.name)
        if known is None:
            column = to_snake_case(selected.name)
            if column not in LINE_COLUMNS:
                return LINE_COLUMNS
            known = frozenset({column})
        columns |= known
    return frozenset(columns)


def _whole(value: Any) -> Any:
    """An Int argument's value: strawberry hands a literal in the query over as its text, a variable as a number."""
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return value
    return value


def page_of(selected: SelectedField) -> Page | None:
    """The page a list field asks for, or None when it cannot be read ahead (bad arguments, or `after` an id)."""
    first, after = _whole(selected.arguments.get("first")), selected.arguments.get("after")
    if selected.name in ("trace", "record"):
        after = _whole(after)
    if first is not None and not (isinstance(first, int) and 1 <= first <= MAX_FIRST):
        return None
    if after is not None and not (selected.name in ("trace", "record") and isinstance(after, int) and after >= 0):
        return None
    return Page(first, after)


@dataclass
class TaskPlan:
    """The fields a query selects on a task, with the plans of the tasks and lines it reaches from there."""

    fields: set[str] = field(default_factory=set)
    nested: dict[str, TaskPlan] = field(default_factory=dict)
    trace: Columns | None = None
    record: Columns | None = None
    pages: dict[str, Page | None] = field(default_factory=dict)

    @classmethod
    def of(cls, selections: Iterable[Selection]) -> TaskPlan:
        plan = cls()
        plan.add(selections)
        return plan

    def add(self, selections: Iterable[Selection]) -> None:
        for selected in fields_of(selections):
            name = selected.name
            self.fields.add(name)
            if name in PAGED:
                at = page_of(selected)
                self.pages[name] = at if self.pages.get(name, at) == at else None
            if name in TASK_VALUED:
                self.nested.setdefault(name, TaskPlan()).add(selected.selections)
            elif name == "trace":
                self.trace = (self.trace or frozenset()) | line_columns(selected.selections)
            elif name == "record":
                self.record = (self.record or frozenset()) | line_columns(selected.selections)

    @classmethod
    def of_connection(cls, selections: Iterable[Selection]) -> TaskPlan:
        """The plan for the nodes of an AgentTaskConnection."""
        plan = cls()
        for edges in fields_of(selections):
            if edges.name == "edges":
                for node in fields_of(edges.selections):
                    if node.name == "node":
                        plan.add(node.selections)
        return plan

    def wants(self, names: frozenset[str]) -> bool:
        return not self.fields.isdisjoint(names)

    def chain(self, name: str) -> int:
        """How many levels deep `name` nests in itself: 2 for `children { children { … } }`."""
        levels, plan = 0, self
        while name in plan.nested and plan.page(name) == WHOLE:
            levels, plan = levels + 1, plan.nested[name]
        return levels

    def page(self, name: str) -> Page | None:
        return self.pages.get(name, WHOLE)


async def prefetch(context: Any, plan: TaskPlan, rows: Sequence[TaskRow]) -> None:
    """Reads what `plan` needs for `rows` and for every task it reaches from them.

    First every task the selection reaches (a chain of `children` in one descendants query), then, in
    one pass, what each level asks of them: one batch per kind of read for the whole tree. A task reached is a
    task read: a field that asks for it by id (a subtree's root, say) finds it without another statement.
    """
    reached = await _reach(context, plan, list(rows))
    context.loaders.task.remember({row.id: task_row_of(row) for _, level_rows in reached for row in level_rows})
    wanted: dict[Loader, list[Any]] = defaultdict(list)
    records: dict[tuple[Columns, Page], list[Any]] = defaultdict(list)
    for level_plan, level_rows in reached:
        _keys(context.loaders, level_plan, level_rows, wanted, records)
    await asyncio.gather(
        *(loader.fill(keys) for loader, keys in wanted.items()),
        *(_tree_and_record(context, roots, columns, at) for (columns, at), roots in records.items()),
    )


async def _reach(context: Any, plan: TaskPlan, rows: list[TaskRow]) -> list[tuple[TaskPlan, list[TaskRow]]]:
    """Every (plan, tasks) pair the selection reaches from `rows`, with the caller's groups worked out for all."""
    reached = [(plan, rows)]
    frontier = reached
    while frontier:
        steps = [(sub, _follow(context, name, level_plan, level_rows))
                 for level_plan, level_rows in frontier for name, sub in level_plan.nested.items() if level_rows]
        found = await asyncio.gather(*(step for _, step in steps))
        frontier = [(sub, _unique(rows_found)) for (sub, _), rows_found in zip(steps, found)]
        reached += frontier
    await context.loaders.readable(context.access, [row for _, level_rows in reached for row in level_rows])
    return reached


async def _follow(context: Any, name: str, plan: TaskPlan, rows: list[TaskRow]) -> list[TaskRow]:
    loaders = context.loaders
    at = plan.page(name)
    if at is None:
        return []
    if name == "children":
        if at != WHOLE:
            return [row for kids in await loaders.children_page(at).get_many([r.id for r in rows]) for row in kids]
        await _read_down(context, plan, rows)
        return [row for kids in await loaders.children.get_many([r.id for r in rows]) for row in kids]
    if name == "subtree":
        return [row for below in await loaders.subtree.get_many([r.path for r in rows]) for row in below[: at.first]]
    found = await loaders.tasks(_above(name, rows))
    return [row for row in found if row is not None]


async def _read_down(context: Any, plan: TaskPlan, rows: list[TaskRow]) -> None:
    """For a chain of `children` several levels deep, reads all those levels at once."""
    levels = plan.chain("children")
    loaders = context.loaders
    rows = [row for row in rows if row.id not in loaders.read_down]
    if levels < 2 or not rows:
        return
    deepest = max(row.depth for row in rows) + levels
    below = await tree.descendants_of(loaders.tenant, [row.path for row in rows], deepest)
    kids = tree.kids_of(below)
    known = {row.id: kids.get(row.id, []) for row in [*rows, *below] if row.depth < deepest}
    loaders.children.remember(known)
    loaders.read_down.update(known)


def _keys(
    loaders: Any,
    plan: TaskPlan,
    rows: list[TaskRow],
    wanted: dict[Loader, list[Any]],
    records: dict[tuple[Columns, Page], list[Any]],
) -> None:
    """The keys each loader reads for the fields the plan selects on these tasks."""
    ids = [row.id for row in rows]
    if plan.wants(METER_FIELDS):
        wanted[loaders.meter] += [row.path for row in rows]
    if plan.wants(STEP_FIELDS):
        wanted[loaders.steps] += ids
    if "childCount" in plan.fields:
        wanted[loaders.child_count] += ids
    if "subtreeCount" in plan.fields:
        wanted[loaders.subtree_count] += [row.path for row in rows]
    if "calls" in plan.fields and (calls := plan.page("calls")) is not None:
        wanted[loaders.calls_page(calls)] += ids
    if plan.trace is not None and (trace := plan.page("trace")) is not None:
        wanted[loaders.trace_page(plan.trace, trace)] += ids
    if plan.record is not None and (record := plan.page("record")) is not None:
        records[(plan.record, record)] += [row.root_id for row in rows]
    for name in ("root", "parent", "lineage"):
        if name in plan.fields or (name == "root" and plan.wants(ROOT_FIELDS)):
            wanted[loaders.task] += _above(name, rows)


async def _tree_and_record(context: Any, roots: list[Any], columns: Columns, at: Page) -> None:
    """The trees' tasks and what the caller reads of them (where that depends on the task), then a page of each
    tree's chain in one batch."""
    loaders = context.loaders
    if await context.access.same_groups() is None:
        await loaders.tree.fill(roots)
        trees = await loaders.tree.get_many(dict.fromkeys(roots))
        loaders.task.remember({row.id: row for tree in trees for row in tree})
        await loaders.readable(context.access, [row for tree in trees for row in tree])
    keys = [await record_key(context, root) for root in dict.fromkeys(roots)]
    page = loaders.record_page(columns, at)
    await page.fill(keys)
    if "call_id" in columns:
        lines = await page.get_many(keys)
        await loaders.call.fill({line.call_id for found in lines for line in found if line.call_id is not None})


def _unique(rows: list[TaskRow]) -> list[TaskRow]:
    return list({row.id: row for row in rows}.values())


def _above(name: str, rows: Sequence[TaskRow]) -> list[Any]:
    if name == "parent":
        return list({row.parent_id for row in rows if row.parent_id is not None})
    if name == "root":
        return list({row.root_id for row in rows})
    return list({a for row in rows for a in ancestor_ids(row.path)[:-1]})
