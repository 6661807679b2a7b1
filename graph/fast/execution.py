"""The executor: graphql-core's, with three shortcuts that matter when one request answers a whole tree.

- A resolver's coroutine is started at once, in a context of its own as a task's would be. When what it
  awaits is already in the request's loaders it finishes without suspending, and its field completes on the
  spot instead of as one more task.
- A plain field (no resolver, no arguments) of a scalar or enum type is read with `getattr` and coerced
  by its type, without building resolve info for it.
- A list of objects whose selected fields are all such plain fields is completed in one loop; a list of
  lazy views of rows, by a function written out once for the view's type, the selection and the caller's groups.

Every value is still coerced by the field's GraphQL type. Whatever could end in an error (a null for a
non-null field, a value the type refuses, a property that raises) is handed to the ordinary path, which
reports it exactly as graphql-core does.

It is used only with AGENTLOG_EXECUTOR=fast (the default); `stock` runs graphql-core's executor as strawberry
sets it up, and tests/test_executors.py holds both to byte-identical answers on a corpus of queries.
"""

# Private and internal APIs this module relies on, checked against strawberry-graphql 0.341.2,
# graphql-core 3.3.2 and CPython 3.11.7 (look again at each when any of them is upgraded):
# - graphql-core ExecutionContext internals, overridden or called with their 3.3 signatures (position_context,
#   the tuple collect_subfields returns): execute_fields, execute_field, complete_awaitable_value,
#   complete_value, complete_list_value, complete_list_item_value, collect_subfields,
#   collect_and_execute_subfields, handle_field_error, settle_in_background, get_stream_usage, is_awaitable,
#   abort_signal, middleware_manager, build_per_event_executor and the memos it copies (_relevant_sub_fields,
#   _stream_usages); graphql.execution.collect_fields.FieldDetailsList and GroupedFieldSet
#   (each FieldDetails' .node); graphql.pyutils.gather_with_cancel.
# - strawberry: strawberry.schema.schema.StrawberryGraphQLCoreExecutionContext,
#   GraphQLCoreConverter.DEFINITION_BACKREF, the field definition's is_basic_field and python_name, and the
#   wrapped_cls of its enum types.
# - asyncio: the _asyncio_future_blocking mark a task reads on the future a coroutine yields (Resumed).

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from contextvars import Context, copy_context
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from types import CoroutineType
from typing import Any

from graphql import (
    GraphQLBoolean,
    GraphQLEnumType,
    GraphQLID,
    GraphQLInt,
    GraphQLString,
    GraphQLList,
    GraphQLObjectType,
    GraphQLOutputType,
    Undefined,
    is_leaf_type,
    is_non_null_type,
    is_object_type,
)
from graphql.execution.collect_fields import FieldDetailsList, GroupedFieldSet
from graphql.pyutils import Path, RefMap, gather_with_cancel
from orjson import dumps
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.schema_converter import GraphQLCoreConverter

from graph.fast.lazy import Views

SLOW = object()


@dataclass(frozen=True, slots=True)
class Leaf:
    """A plain scalar or enum field: the attribute it reads and how its type coerces it.

    `same` is the Python type the field's type hands back unchanged (str for String and ID, bool for
    Boolean), so a value of exactly that type needs no coercion call.
    """

    attribute: str
    coerce: Callable[[Any], Any]
    nullable: bool
    same: type | None = None

    def read(self, source: Any) -> Any:
        """The field's value, or SLOW when the ordinary path must answer (and report what went wrong)."""
        try:
            value = getattr(source, self.attribute)
            if value is None:
                return None if self.nullable else SLOW
            if type(value) is self.same:
                return value
            coerced = self.coerce(value)
        except Exception:
            return SLOW
        return SLOW if coerced is None or coerced is Undefined else coerced


_LEAVES: dict[tuple[GraphQLObjectType, str], Leaf | None] = {}


def leaf_of(parent_type: GraphQLObjectType, name: str) -> Leaf | None:
    key = (parent_type, name)
    if key not in _LEAVES:
        _LEAVES[key] = _find_leaf(parent_type, name)
    return _LEAVES[key]


def _find_leaf(parent_type: GraphQLObjectType, name: str) -> Leaf | None:
    field = parent_type.fields.get(name)
    if field is None or field.args:
        return None
    definition = (field.extensions or {}).get(GraphQLCoreConverter.DEFINITION_BACKREF)
    if definition is None or not definition.is_basic_field:
        return None
    nullable = not is_non_null_type(field.type)
    inner = field.type if nullable else field.type.of_type
    if not is_leaf_type(inner):
        return None
    return Leaf(definition.python_name, _coercer(inner), nullable, UNCHANGED.get(inner.name))


INT_LOW, INT_HIGH = -(2**31), 2**31 - 1
UTC = timezone.utc
UNCHANGED: dict[str, type] = {GraphQLString.name: str, GraphQLID.name: str, GraphQLBoolean.name: bool}


def _coercer(leaf_type: Any) -> Callable[[Any], Any]:
    """The type's coercion; for an enum of Python members, a lookup of the name each member coerces to.

    Members are singletons, so they are looked up by identity: an enum's Python-level hash is slow. An Int
    already a 32-bit int is answered as it is, a DateTime in UTC written by `utc_iso`; any other value goes
    through graphql-core's coercion.
    """
    members = getattr(leaf_type, "wrapped_cls", None)
    coerce = leaf_type.coerce_output_value
    if leaf_type is GraphQLInt:
        return lambda value: value if type(value) is int and INT_LOW <= value <= INT_HIGH else coerce(value)
    if leaf_type.name == "DateTime":
        return lambda value: utc_iso(value) if type(value) is datetime and value.tzinfo is UTC else coerce(value)
    if not isinstance(leaf_type, GraphQLEnumType) or members is None:
        return coerce
    names = {id(member): coerce(member) for member in members}
    return lambda value: names.get(id(value)) or coerce(value)


def utc_iso(value: datetime) -> str:
    """A UTC time as `isoformat` writes it (DateTime's coercion), in a third of the time: orjson writes the same
    RFC 3339 text, the fraction left out when it is zero and the offset as +00:00."""
    return dumps(value)[1:-1].decode()


Plan = list[tuple[str, Leaf | None]]
Flat = list[tuple[str, str, Any, bool, Any, Any]]
"""Per field: its name, attribute, coercion, nullability, unchanged type, and the leaves of a nested object."""


class Resumed:
    """A coroutine already started and suspended: awaiting this carries it on from where it stopped.

    The future it stopped on is handed to the awaiting task as the coroutine handed it out. Like a task,
    starting it took the future's "blocking" mark, so that other coroutines may await the same future
    before any task runs; the mark is put back when the future goes up to a task. Like a task, it runs every
    step in the one context it started in, so a context variable it sets (a transaction's connection) is
    reset in the context that set it, whichever task carries it on.
    """

    __slots__ = ("coroutine", "pending", "context")

    def __init__(self, coroutine: CoroutineType, pending: Any, context: Context) -> None:
        if getattr(pending, "_asyncio_future_blocking", False):
            pending._asyncio_future_blocking = False
        self.coroutine = coroutine
        self.pending = pending
        self.context = context

    def __await__(self) -> Generator[Any, Any, Any]:
        coroutine, pending, run = self.coroutine, self.pending, self.context.run
        if hasattr(pending, "_asyncio_future_blocking"):
            pending._asyncio_future_blocking = True
        while True:
            try:
                sent = yield pending
            except GeneratorExit:
                coroutine.close()
                raise
            except BaseException as error:
                try:
                    pending = run(coroutine.throw, error)
                except StopIteration as done:
                    return done.value
            else:
                try:
                    pending = run(coroutine.send, sent)
                except StopIteration as done:
                    return done.value


class TreeExecution(StrawberryGraphQLCoreExecutionContext):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._plans: dict[int, tuple[GroupedFieldSet, Plan]] = {}
        self._flats: dict[int, tuple[GroupedFieldSet, Flat | None]] = {}
        self._middleware = bool(self.middleware_manager and self.middleware_manager.middlewares)

    def build_per_event_executor(self, payload: Any) -> TreeExecution:
        """One subscription event's executor, with memos of its own: graphql-core's copy shares the
        subscription's, and each event's fields, collected afresh, would stay in them until it ends."""
        executor = super().build_per_event_executor(payload)
        executor._relevant_sub_fields = {}
        executor._stream_usages = RefMap()
        executor._plans = {}
        executor._flats = {}
        return executor

    def _plan(self, parent_type: GraphQLObjectType, fields: GroupedFieldSet) -> Plan:
        found = self._plans.get(id(fields))
        if found is None:
            plan = [(name, leaf_of(parent_type, details[0].node.name.value)) for name, details in fields.items()]
            found = self._plans[id(fields)] = (fields, plan)
        return found[1]

    def execute_fields(
        self,
        parent_type: GraphQLObjectType,
        source_value: Any,
        path: Path | None,
        grouped_field_set: GroupedFieldSet,
        position_context: Any,
    ) -> Any:
        if self._middleware:
            return super().execute_fields(parent_type, source_value, path, grouped_field_set, position_context)
        results: dict[str, Any] = {}
        awaitable_fields: list[str] = []
        try:
            for name, leaf in self._plan(parent_type, grouped_field_set):
                if leaf is not None:
                    value = leaf.read(source_value)
                    if value is not SLOW:
                        results[name] = value
                        continue
                result = self.execute_field(
                    parent_type, source_value, grouped_field_set[name], Path(path, name, parent_type.name),
                    position_context,
                )
                if result is not Undefined:
                    results[name] = result
                    if self.is_awaitable(result):
                        awaitable_fields.append(name)
        except Exception:
            if awaitable_fields:
                self.settle_in_background([results[name] for name in awaitable_fields])
            raise
        if not awaitable_fields:
            return results

        async def get_results() -> dict[str, Any]:
            awaited = await gather_with_cancel(*(results[name] for name in awaitable_fields))
            results.update(zip(awaitable_fields, awaited, strict=True))
            return results

        return get_results()

    def complete_awaitable_value(
        self,
        return_type: GraphQLOutputType,
        field_details_list: FieldDetailsList,
        info: Any,
        path: Path,
        result: Any,
        position_context: Any,
    ) -> Any:
        if type(result) is not CoroutineType or self.abort_signal is not None:
            return super().complete_awaitable_value(
                return_type, field_details_list, info, path, result, position_context
            )
        context = copy_context()
        try:
            pending = context.run(result.send, None)
        except StopIteration as done:
            completed = self.complete_value(return_type, field_details_list, info, path, done.value, position_context)
            if self.is_awaitable(completed):
                return self._settle(completed, return_type, field_details_list, path)
            return completed
        return super().complete_awaitable_value(
            return_type, field_details_list, info, path, Resumed(result, pending, context), position_context
        )

    async def _settle(
        self, completed: Any, return_type: GraphQLOutputType, field_details_list: FieldDetailsList, path: Path
    ) -> Any:
        try:
            return await completed
        except Exception as error:
            self.handle_field_error(error, return_type, field_details_list, path)
            return None

    def complete_list_value(
        self,
        return_type: GraphQLList[GraphQLOutputType],
        field_details_list: FieldDetailsList,
        info: Any,
        path: Path,
        result: Any,
        position_context: Any,
    ) -> Any:
        item_type = self._object_items(return_type, field_details_list, path, result)
        if item_type is None:
            return super().complete_list_value(return_type, field_details_list, info, path, result, position_context)
        grouped, _, *_ = self.collect_subfields(item_type, field_details_list)
        plan = self._plan(item_type, grouped)
        flat = self._flat(item_type, grouped)
        if flat is not None:
            completed = _complete_flat(plan, flat, result)
            if completed is not None:
                return completed
        return self._complete_objects(
            return_type.of_type, item_type, field_details_list, info, path, result, position_context
        )

    def _flat(self, parent_type: GraphQLObjectType, grouped: GroupedFieldSet) -> Flat | None:
        """How each object of a list is completed in one loop: per field its leaf, or, for a plain field of
        object type whose own fields asked are all plain leaves, those leaves. None when a field needs more."""
        found = self._flats.get(id(grouped))
        if found is None:
            found = self._flats[id(grouped)] = (grouped, self._flat_of(parent_type, grouped))
        return found[1]

    def _flat_of(self, parent_type: GraphQLObjectType, grouped: GroupedFieldSet) -> Flat | None:
        fields: Flat = []
        for name, leaf in self._plan(parent_type, grouped):
            if leaf is not None:
                fields.append((name, leaf.attribute, leaf.coerce, leaf.nullable, leaf.same, None))
                continue
            nested = self._nested(parent_type, grouped[name])
            if nested is None:
                return None
            fields.append((name, *nested))
        return fields

    def _nested(self, parent_type: GraphQLObjectType, details: FieldDetailsList) -> tuple | None:
        """(attribute, None, nullable, None, its leaves) for a plain field of object type asking only plain leaves."""
        field = parent_type.fields.get(details[0].node.name.value)
        definition = (field.extensions or {}).get(GraphQLCoreConverter.DEFINITION_BACKREF) if field else None
        if field is None or field.args or definition is None or not definition.is_basic_field:
            return None
        nullable = not is_non_null_type(field.type)
        inner = field.type if nullable else field.type.of_type
        if not is_object_type(inner) or inner.is_type_of is not None:
            return None
        grouped, defers, *_ = self.collect_subfields(inner, details)
        if defers:
            return None
        plan = self._plan(inner, grouped)
        if any(leaf is None for _, leaf in plan):
            return None
        leaves = [(name, leaf.attribute, leaf.coerce, leaf.nullable, leaf.same, None) for name, leaf in plan]
        return definition.python_name, None, nullable, None, leaves

    def _object_items(
        self, return_type: GraphQLList[GraphQLOutputType], field_details_list: FieldDetailsList, path: Path, result: Any
    ) -> GraphQLObjectType | None:
        """The item type of a plain list of objects (no nulls, no @stream, no @defer inside), else None."""
        if not isinstance(result, (list, Views)) or self._middleware:
            return None
        item_type = return_type.of_type
        if is_non_null_type(item_type):
            item_type = item_type.of_type
        if not is_object_type(item_type) or item_type.is_type_of is not None:
            return None
        if self.get_stream_usage(field_details_list, path) is not None:
            return None
        _, defers, *_ = self.collect_subfields(item_type, field_details_list)
        return None if defers else item_type

    def _complete_objects(
        self,
        declared: GraphQLOutputType,
        item_type: GraphQLObjectType,
        field_details_list: FieldDetailsList,
        info: Any,
        path: Path,
        items: Sequence[Any],
        position_context: Any,
    ) -> Any:
        """Each object's fields executed straight, as graphql-core's list completion ends up doing."""
        completed: list[Any] = []
        awaiting: list[int] = []
        for index, item in enumerate(items):
            item_path = path.add_key(index, None)
            if item is None:
                if self.complete_list_item_value(
                    item, completed, declared, field_details_list, info, item_path, position_context
                ):
                    awaiting.append(index)
                continue
            try:
                value = self.collect_and_execute_subfields(
                    item_type, field_details_list, item_path, item, position_context
                )
                if self.is_awaitable(value):
                    value = self._settle(value, declared, field_details_list, item_path)
                    awaiting.append(index)
            except Exception as error:
                self.handle_field_error(error, declared, field_details_list, item_path)
                value = None
            completed.append(value)
        if not awaiting:
            return completed

        async def get_completed() -> list[Any]:
            awaited = await gather_with_cancel(*(completed[index] for index in awaiting))
            for index, value in zip(awaiting, awaited, strict=True):
                completed[index] = value
            return completed

        return get_completed()


def _complete_flat(plan: Plan, flat: Flat, items: Sequence[Any]) -> list[dict[str, Any]] | None:
    """Each item's fields read and coerced in one loop; None when any needs the ordinary path."""
    if isinstance(items, Views) and all(nested is None for *_, nested in flat):
        by_row = _complete_rows(plan, items)
        if by_row is not None:
            return by_row
    out = []
    try:
        for item in items:
            completed = _complete_one(flat, item)
            if completed is None:
                return None
            out.append(completed)
    except Exception:
        return None
    return out


def _complete_one(flat: Flat, item: Any) -> dict[str, Any] | None:
    if item is None:
        return None
    completed = {}
    for name, attribute, coerce, nullable, same, nested in flat:
        value = getattr(item, attribute)
        if value is None:
            if not nullable:
                return None
        elif nested is not None:
            value = _complete_one(nested, value)
            if value is None:
                return None
        elif type(value) is not same:
            value = coerce(value)
            if value is None or value is Undefined:
                return None
        completed[name] = value
    return completed


def _complete_rows(plan: Plan, views: Views) -> list[dict[str, Any]] | None:
    """Lazy views answered from their rows, without making them: each row completed by `row_completer`, made once
    for the view's type, the fields selected and the caller's groups. None when a field needs the view itself,
    or when any value needs the ordinary path."""
    make, groups_of = views.make, views.groups
    if getattr(make, "row_readers", None) is None:
        return None
    selected = tuple(plan)
    seen: Any = None
    one: Any = None
    out: list[dict[str, Any]] = []
    append = out.append
    try:
        for row in views.rows:
            groups = groups_of(row)
            if groups is not seen:
                seen = groups
                one = row_completer(make, selected, make.readable_names(groups))
                if one is None:
                    return None
            completed = one(row, groups)
            if completed is None:
                return None
            append(completed)
    except Exception:
        return None
    return out


@lru_cache(maxsize=512)
def row_completer(make: Any, selected: tuple[tuple[str, Leaf | None], ...],
                  readable: frozenset[str]) -> Callable[[Any, frozenset], dict[str, Any] | None] | None:
    """A function completing one row as the loop over `selected` would: each readable field read by the view's
    own row reader (given the row, or the row and the caller's groups), null where the groups do not allow it,
    coerced by its type unless of the type it hands back unchanged; None for the whole row where a value needs
    the ordinary path. Written out once as Python, so that a page of thousands of rows pays no loop over its
    fields. None when a field has no row reader."""
    readers, with_groups = make.row_readers, getattr(make, "row_group_readers", {})
    body, items = [], []
    scope: dict[str, Any] = {"Undefined": Undefined}
    for i, (name, leaf) in enumerate(selected):
        if leaf is None or (leaf.attribute not in readers and leaf.attribute not in with_groups):
            return None
        if leaf.attribute not in readable:
            if not leaf.nullable:
                return lambda row, groups: None
            items.append(f"{name!r}: None")
            continue
        grouped = leaf.attribute not in readers
        scope[f"read{i}"] = with_groups[leaf.attribute] if grouped else readers[leaf.attribute]
        scope[f"coerce{i}"], scope[f"same{i}"] = leaf.coerce, leaf.same
        v = f"v{i}"
        body.append(f"    {v} = read{i}(row, groups)" if grouped else f"    {v} = read{i}(row)")
        if not leaf.nullable:
            body.append(f"    if {v} is None: return None")
        body += [
            f"    if {v} is not None and type({v}) is not same{i}:",
            f"        {v} = coerce{i}({v})",
            f"        if {v} is None or {v} is Undefined: return None",
        ]
        items.append(f"{name!r}: {v}")
    source = "\n".join(["def complete(row, groups):", *body, "    return {" + ", ".join(items) + "}"])
    exec(compile(source, f"<row completer of {make.__name__}>", "exec"), scope)
    return scope["complete"]
