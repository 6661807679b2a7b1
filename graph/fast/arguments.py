"""A field's arguments converted as strawberry converts them, by converters worked out once per field.

strawberry's `convert_arguments` works out every argument's and input field's type and GraphQL name again
on each call, a fifth of a millisecond for a `tasks` filter. For the types the schema's arguments use
(scalars, enums, lists of them, input types made of those) the converters below do what it does: None and
UNSET stay as they are, a list of leaves is copied, an input type is built from its fields' converted
values with None for those without a default. A type they do not cover (Maybe, GlobalID, lazy types,
input types that build themselves) answers None, and its field keeps strawberry's own path.
"""

# Private and internal APIs, checked against strawberry-graphql 0.341.2: StrawberryArgument's python_name and
# type, the input definition's fields, from_input and is_input, StrawberryField.resolve_type, default_value and
# default_factory, config.name_converter.from_argument / from_field, schema_converter.scalar_registry.

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING
from typing import Any

from strawberry.relay import GlobalID
from strawberry.scalars import is_scalar
from strawberry.types.base import StrawberryList, StrawberryMaybe, StrawberryOptional, has_object_definition
from strawberry.types.enum import StrawberryEnumDefinition, has_enum_definition
from strawberry.types.unset import UNSET

Convert = Callable[[Any], Any]
Arguments = list[tuple[str, str, Convert]]
"""Per argument: its GraphQL name, its Python name and its converter."""


def _same(value: Any) -> Any:
    return value


def arguments_of(definition: Any, schema: Any) -> Arguments | None:
    """The converters of a field's arguments, or None when one of them is of a type left to strawberry."""
    names = schema.config.name_converter
    out = []
    for argument in definition.arguments:
        convert = converter(argument.type, schema)
        if convert is None:
            return None
        out.append((names.from_argument(argument), argument.python_name, convert))
    return out


def converter(type_: Any, schema: Any) -> Convert | None:
    inner = _converter(type_, schema)
    if inner is None:
        return None
    return lambda value: value if value is None or value is UNSET else inner(value)


def _leaf(type_: Any, schema: Any) -> bool:
    if type_ is GlobalID:
        return False
    return is_scalar(type_, schema.schema_converter.scalar_registry) or isinstance(type_, StrawberryEnumDefinition)


def _converter(type_: Any, schema: Any) -> Convert | None:
    if isinstance(type_, StrawberryMaybe):
        return None
    if isinstance(type_, StrawberryOptional):
        return converter(type_.of_type, schema)
    if isinstance(type_, StrawberryList):
        item = type_.of_type.of_type if isinstance(type_.of_type, StrawberryOptional) else type_.of_type
        if _leaf(item, schema):
            return list
        each = converter(type_.of_type, schema)
        return None if each is None else (lambda values: [each(value) for value in values])
    if _leaf(type_, schema) or has_enum_definition(type_):
        return _same
    if has_object_definition(type_):
        return _input(type_, schema)
    return None


def _input(cls: type, schema: Any) -> Convert | None:
    definition = cls.__strawberry_definition__  # type: ignore[attr-defined]
    if not definition.is_input or definition.from_input is not None:
        return None
    names = schema.config.name_converter
    unset = {
        f.python_name: None for f in definition.fields if f.default_value is MISSING and f.default_factory is MISSING
    }
    fields: list[tuple[str, str, Convert]] = []
    for field in definition.fields:
        convert = converter(field.resolve_type(type_definition=definition), schema)
        if convert is None:
            return None
        fields.append((names.from_field(field), field.python_name, convert))

    def build(value: Mapping[str, Any]) -> Any:
        kwargs = dict(unset)
        for graphql_name, python_name, convert in fields:
            if graphql_name in value:
                kwargs[python_name] = convert(value[graphql_name])
        return cls(**kwargs)

    return build
