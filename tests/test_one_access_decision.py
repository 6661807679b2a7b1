"""One access decision: only permissions/access.py reads the access table; everything else asks it."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = "permissions.table"
DECISION = "permissions/access.py"


def project_modules() -> list[Path]:
    """The project's own Python files: not its tests (they check the server against the table), not the venv."""
    return [
        path for path in ROOT.rglob("*.py")
        if not any(part.startswith(".") or part in {"tests", "build", "node_modules"}
                   for part in path.relative_to(ROOT).parts[:-1])
    ]


def imports_of(path: Path) -> set[str]:
    names = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_the_walk_sees_the_whole_server():
    walked = {str(path.relative_to(ROOT)) for path in project_modules()}
    assert {DECISION, "graph/api/guard.py", "resolvers/read/task_list.py", "resolvers/read/export.py", "graph/fast/lazy.py"} <= walked


def test_only_the_access_decision_reads_the_access_table():
    readers = sorted(
        str(path.relative_to(ROOT)) for path in project_modules()
        if TABLE in imports_of(path)
    )
    assert readers == [DECISION]


def test_the_views_guards_lists_and_exports_ask_the_decision():
    askers = ["graph/api/guard.py", "graph/fast/lazy.py", "permissions/classes.py", "graph/types/agent_task.py",
              "graph/types/trace_event.py", "resolvers/read/task_list.py", "resolvers/read/search.py", "resolvers/read/export.py",
              "resolvers/read/session_transcript.py", "graph/api/loaders.py", "resolvers/forget/erasure.py"]
    assert [path for path in askers if "permissions.access" not in imports_of(ROOT / path)] == []
