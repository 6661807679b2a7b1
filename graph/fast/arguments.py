"""What strawberry does with a resolver's arguments on every call, done once or not at all.

graphql-core hands a resolver every argument that has a default, and strawberry converts each one it is
handed on every call, through the argument's type. A nullable argument whose default is null, in the schema
and in the resolver's signature alike, reaches the resolver as None whether it is handed over or not; in a
tree read that is two conversions per task for `children` and two for `trace`, so such an argument is left
out. Strawberry also works out each declared argument's GraphQL name again on every call; it is kept.
"""

# Private and internal APIs this module relies on, checked against strawberry-graphql 0.341.2 and
# graphql-core 3.3.2: GraphQLCoreConverter.DEFINITION_BACKREF, the field definition's `arguments` (each
# StrawberryArgument's `type` and `default`) and `extensions`, and graphql-core calling `field.resolve` with
# the argument values as keywords; convert_arguments asking `config.name_converter.from_argument` per argument
# per call.

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphql import GraphQLField, GraphQLObjectType, GraphQLSchema
from strawberry.permission import PermissionExtension
from strawberry.schema.name_converter import NameConverter
from strawberry.schema.schema_converter import GraphQLCoreConverter
from strawberry.types.arguments import StrawberryArgument
from strawberry.types.base import StrawberryMaybe, StrawberryOptional


def null_defaults(field: GraphQLField, names: NameConverter) -> tuple[str, ...]:
    """The field's arguments that a null leaves as the resolver's own default; none when an extension other
    than a permission could read them."""
    definition = (field.extensions or {}).get(GraphQLCoreConverter.DEFINITION_BACKREF)
    if definition is None or any(not isinstance(e, PermissionExtension) for e in definition.extensions):
        return ()
    found = []
    for argument in definition.arguments:
        name = names.from_argument(argument)
        declared = field.args.get(name)
        if (declared is not None and declared.default_value is None and argument.default is None
                and isinstance(argument.type, StrawberryOptional) and not isinstance(argument.type, StrawberryMaybe)):
            found.append(name)
    return tuple(found)


def leaving_out(resolve: Callable[..., Any], names: tuple[str, ...]) -> Callable[..., Any]:
    def resolve_given(source: Any, info: Any, **args: Any) -> Any:
        for name in names:
            if name in args and args[name] is None:
                del args[name]
        return resolve(source, info, **args)

    return resolve_given


def null_defaults_left_out(schema: GraphQLSchema, names: NameConverter) -> None:
    for type_ in schema.type_map.values():
        if not isinstance(type_, GraphQLObjectType) or type_.name.startswith("__"):
            continue
        for field in type_.fields.values():
            if field.resolve is not None and (found := null_defaults(field, names)):
                field.resolve = leaving_out(field.resolve, found)


class RememberedArgumentNames(NameConverter):
    """Strawberry's own names, an argument's worked out once rather than on every call."""

    def __init__(self) -> None:
        super().__init__()
        self._arguments: dict[int, tuple[StrawberryArgument, str]] = {}

    def from_argument(self, argument: StrawberryArgument) -> str:
        found = self._arguments.get(id(argument))
        if found is None or found[0] is not argument:
            found = self._arguments[id(argument)] = (argument, super().from_argument(argument))
        return found[1]
