"""Input and answer types of mutations the client does not name itself, read once from the server's schema."""

from __future__ import annotations

from typing import Any

SHAPES = """{ __schema { mutationType { fields { name
  args { name type { kind name ofType { kind name } } }
  type { kind name ofType { kind name } } } } } }"""


def type_text(ref: dict[str, Any]) -> str:
    if ref["kind"] == "NON_NULL":
        return type_text(ref["ofType"]) + "!"
    return str(ref["name"])


def selection(ref: dict[str, Any]) -> str:
    """`{ __typename }` for an object answer, nothing for a scalar one."""
    while ref.get("kind") == "NON_NULL":
        ref = ref["ofType"]
    return "{ __typename }" if ref["kind"] in ("OBJECT", "INTERFACE", "UNION") else ""


def mutation_shapes(data: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """mutation name -> (the GraphQL type of its `input` argument, the selection its answer needs)."""
    shapes = {}
    for field in data["__schema"]["mutationType"]["fields"]:
        for arg in field["args"]:
            if arg["name"] == "input":
                shapes[field["name"]] = (type_text(arg["type"]), selection(field["type"]))
    return shapes
