"""The kit client is a package of its own: it needs httpx, and nothing of the server."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent / "kit"
SERVER_PACKAGES = {"graph", "models", "resolvers", "permissions", "tests", "bench", "tortoise_config"}


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_the_kit_imports_nothing_of_the_server():
    sources = sorted((KIT / "agentlog_kit").glob("*.py"))
    assert sources
    for source in sources:
        assert not imported(source) & SERVER_PACKAGES, source


def test_the_kit_is_its_own_typed_distribution_needing_httpx_only():
    """sniffio only spares httpcore a failed import on every connection-pool lock (it imports it lazily)."""
    project = tomllib.loads((KIT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "agentlog-kit"
    assert [requirement.split(">")[0].split("=")[0] for requirement in project["dependencies"]] == [
        "httpx", "sniffio"]
    assert (KIT / "agentlog_kit" / "py.typed").exists()
