"""No String or ID argument may hold a NUL character: PostgreSQL cannot store one in text.

Every argument is walked against its schema type before the operation runs, literals and variables
alike, list items and input object fields included, so a new argument is covered without a word.
JSON values are exempt: they are stored as JSON text, where a NUL is written `\\u0000`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from graphql import (
    ArgumentNode,
    DocumentNode,
    ExecutionResult,
    GraphQLError,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLSchema,
    ListValueNode,
    ObjectFieldNode,
    OperationDefinitionNode,
    StringValueNode,
    TypeInfo,
    TypeInfoVisitor,
    Visitor,
    get_named_type,
    get_nullable_type,
    type_from_ast,
    visit,
)
import orjson
from strawberry.extensions import SchemaExtension

from models.errors import BadInput

TEXT_SCALARS = frozenset({"String", "ID"})
NUL = "\x00"


def _nul_in_value(value: Any, type_: GraphQLInputType, at: str) -> str | None:
    """Where in `value`, given for `type_`, a text holds NUL."""
    type_ = get_nullable_type(type_)
    if value is None:
        return None
    if isinstance(type_, GraphQLList):
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            found = _nul_in_value(item, type_.of_type, f"{at}[{i}]")
            if found:
                return found
        return None
    if isinstance(type_, GraphQLInputObjectType):
        if not isinstance(value, dict):
            return None
        for name, field in type_.fields.items():
            found = _nul_in_value(value.get(name), field.type, f"{at}.{name}")
            if found:
                return found
        return None
    if get_named_type(type_).name in TEXT_SCALARS and isinstance(value, str) and NUL in value:
        return at
    return None


class _Literals(Visitor):
    """String literals of text type holding NUL, named by argument and field."""

    def __init__(self, type_info: TypeInfo) -> None:
        super().__init__()
        self.type_info = type_info
        self.found: list[str] = []

    def enter_string_value(self, node: StringValueNode, key: Any, parent: Any, path: Any, ancestors: Any) -> None:
        expected = self.type_info.get_input_type()
        if NUL in node.value and expected is not None and get_named_type(expected).name in TEXT_SCALARS:
            self.found.append(_literal_path([*ancestors, parent], key))


def _literal_path(ancestors: list[Any], key: Any) -> str:
    parts: list[str] = []
    for node in ancestors:
        if isinstance(node, ArgumentNode):
            parts = [node.name.value]
        elif isinstance(node, ObjectFieldNode):
            parts.append(f".{node.name.value}")
        elif isinstance(node, ListValueNode):
            parts.append("[]")
    if isinstance(key, int) and parts and parts[-1] == "[]":
        parts[-1] = f"[{key}]"
    return "".join(parts) or "argument"


def may_hold_nul(variables: dict[str, Any]) -> bool:
    """Whether a text in `variables` may hold NUL: JSON writes every NUL as `\\u0000`, so variables whose JSON has
    none hold none, and only those that do are walked (a text holding a backslash then `u0000` is walked too)."""
    try:
        return b"\\u0000" in orjson.dumps(variables)
    except orjson.JSONEncodeError:
        return True


def nul_paths(
    schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, variables: dict[str, Any],
    escapes: bool = True,
) -> Iterator[str]:
    """Every argument path where a text holds NUL: in `operation`'s variables, and in the document's literals
    (fragments included) when it has `escapes`, since a NUL can only be written into a document as one."""
    walked = (operation.variable_definitions or ()) if may_hold_nul(variables) else ()
    for definition in walked:
        type_ = type_from_ast(schema, definition.type)
        name = definition.variable.name.value
        if type_ is not None and name in variables:
            found = _nul_in_value(variables[name], type_, f"${name}")
            if found:
                yield found
    if escapes:
        type_info = TypeInfo(schema)
        literals = _Literals(type_info)
        visit(document, TypeInfoVisitor(type_info, literals))
        yield from literals.found


class RefuseNul(SchemaExtension):
    def on_execute(self) -> Iterator[None]:
        context = self.execution_context
        document = context.graphql_document
        if document is not None:
            operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
            name = context.operation_name
            chosen = [o for o in operations if name is None or (o.name and o.name.value == name)][:1]
            for operation in chosen:
                escapes = "\\u" in (context.query or "")
                found = next(nul_paths(context.schema._schema, document, operation, context.variables or {}, escapes),
                             None)
                if found:
                    refusal = BadInput(f"{found} holds a NUL character (U+0000), which agentlog does not take; "
                                       "leave it out.", field=found.lstrip("$"))
                    error = GraphQLError(refusal.message, original_error=refusal)
                    context.result = ExecutionResult(data=None, errors=[error])
        yield
