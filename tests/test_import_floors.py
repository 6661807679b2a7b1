"""Imports run one way, down the floors: `graph/` over `resolvers/` over `permissions/` over `models/`, with the
pure record (`models/record/`) at the bottom importing nothing of the project but itself. The only circle is among
the mutually recursive GraphQL types, broken as strawberry documents: their imports of each other are made lazily
(`strawberry.lazy`, an import inside the resolver), never when a module loads."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_one_access_decision import ROOT

FLOORS = ("models.record", "models", "permissions", "resolvers", "graph")
MOST_MODULES = 16


def floor(module: str) -> int:
    return next(n for n, name in enumerate(FLOORS) if module == name or module.startswith(name + "."))


def modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[0] in ("graph", "models", "resolvers", "permissions") and "migrations" not in parts:
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _imported(node: ast.AST, known: dict[str, Path]) -> set[str]:
    names = set()
    if isinstance(node, ast.Import):
        names = {alias.name for alias in node.names}
    elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        names = {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module for a in node.names}
    return {name for name in names if name in known}


def imports(path: Path, known: dict[str, Path], on_load_only: bool) -> set[str]:
    """The project modules `path` imports: all of them, or only those imported as the module loads (not inside a
    function, not under `if TYPE_CHECKING:`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if not on_load_only:
        return {name for node in ast.walk(tree) for name in _imported(node, known)}
    found: set[str] = set()
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if isinstance(node, ast.If) and _is_type_checking(node):
            todo.extend(node.orelse)
            continue
        found |= _imported(node, known)
        todo.extend(ast.iter_child_nodes(node))
    return found


def graph_of(on_load_only: bool) -> dict[str, set[str]]:
    known = modules()
    return {name: imports(path, known, on_load_only) - {name} for name, path in known.items()}


def circles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(component)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_the_walk_sees_every_floor():
    assert {floor(name) for name in modules()} == set(range(len(FLOORS)))


def test_no_import_runs_back_up_a_floor():
    back_up = {(m, d) for m, deps in graph_of(on_load_only=False).items() for d in deps if floor(d) > floor(m)}
    assert back_up == set()


def test_the_pure_record_imports_only_itself():
    edges = graph_of(on_load_only=False)
    outside = {(m, d) for m, deps in edges.items() if floor(m) == 0 for d in deps if floor(d) != 0}
    assert outside == set()


def test_nothing_imports_in_a_circle_as_it_loads():
    assert circles(graph_of(on_load_only=True)) == []


def test_the_only_circle_is_the_graphql_types_importing_each_other_lazily():
    found = circles(graph_of(on_load_only=False))
    assert found, "the GraphQL types refer to each other, so the walk must see their circle"
    assert [c for c in found if not all(m.startswith("graph.types.") for m in c)] == []


def test_a_circle_is_found_where_there_is_one():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_every_folder_says_what_lives_there_and_holds_a_readable_number_of_modules():
    folders = {path.parent for path in modules().values()}
    unsaid = [str(f.relative_to(ROOT)) for f in folders if not ast.get_docstring(ast.parse((f / "__init__.py").read_text()))]
    crowded = {str(f.relative_to(ROOT)): n for f in folders
               if (n := len([p for p in f.glob("*.py") if p.name != "__init__.py"])) > MOST_MODULES
               and f.relative_to(ROOT) != Path("graph/types")}
    assert unsaid == [] and crowded == {}
