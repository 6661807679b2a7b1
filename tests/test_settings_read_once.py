"""Settings are read once, where the server or a command starts: no module of the server reads the environment
while it serves, nothing reads CPython's private store of it, and two apps made with different settings in one
process each answer by their own."""

from __future__ import annotations

import ast

import httpx

from graph.app import create_app
from models.settings import load
from tests.shop import Client, Shop
from tests.test_import_floors import modules
from tests.test_withheld import estimate_with_help, stored_content

# Where the environment is read: the settings as they are loaded and checked, the metrics folder shared by the
# processes `serve` starts, and prometheus-client's multiprocess switch, read as prometheus-client reads it (on
# import).
AT_START = {
    ("models.settings", "_explain"),
    ("models.settings", "unknown"),
    ("graph.cli.main", "share_metrics"),
    ("resolvers.metrics", "<module>"),
}


def _reads(tree: ast.Module) -> set[str]:
    """The functions (or `<module>`) of a module that name `os.environ`, `os.getenv` or `environ` from `os`."""
    found: set[str] = set()

    def visit(node: ast.AST, where: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            where = node.name
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os" \
                and node.attr in ("environ", "environb", "getenv", "getenvb"):
            found.add(where)
        if isinstance(node, ast.ImportFrom) and node.module == "os" \
                and any(alias.name in ("environ", "environb", "getenv", "getenvb") for alias in node.names):
            found.add(where)
        for child in ast.iter_child_nodes(node):
            visit(child, where)

    visit(tree, "<module>")
    return found


def test_no_module_reads_the_environment_but_where_the_server_starts():
    found = {(name, where) for name, path in modules().items()
             for where in _reads(ast.parse(path.read_text(encoding="utf-8")))}

    assert found - AT_START == set()
    assert AT_START - found == set(), "a place named as reading the environment no longer does: strike it"


def test_the_walk_sees_a_read_of_the_environment():
    tree = ast.parse("import os\ndef f():\n    return os.environ.get('X')\nY = os.getenv('Y')\n")
    assert _reads(tree) == {"f", "<module>"}


def _private_store(tree: ast.Module) -> list[int]:
    """Lines naming `os.environ`'s own store or key encoding (`environ._data`, `environ.encodekey`)."""
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and node.attr in ("_data", "encodekey", "decodekey")
            and (isinstance(node.value, ast.Name) and node.value.id == "environ"
                 or isinstance(node.value, ast.Attribute) and node.value.attr == "environ")]


def test_nothing_reads_the_private_store_of_the_environment():
    found = {name: lines for name, path in modules().items()
             if (lines := _private_store(ast.parse(path.read_text(encoding="utf-8"))))}

    assert found == {}
    assert _private_store(ast.parse("import os\nSTORE = os.environ._data\nKEY = os.environ.encodekey\n")) == [2, 3]


async def test_two_apps_with_different_settings_each_answer_by_their_own(database):
    apps = {
        "recording": create_app(load(database_url=database)),
        "quiet": create_app(load(database_url=database, record_content=False, max_aliases=1)),
    }
    tasks, answers = {}, {}
    for name, app in apps.items():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agentlog.test") as http:
            shop = Shop(Client(http))
            await shop.setup(transcript_readers=["Finance"])
            tasks[name] = await estimate_with_help(shop)
            answers[name] = await shop.client.post("{ mine: me { id } again: me { id } }", token=shop.mia)

    assert None not in set(await stored_content(tasks["recording"]))
    assert set(await stored_content(tasks["quiet"])) == {None}
    assert answers["recording"].get("errors") is None
    assert answers["quiet"]["errors"][0]["extensions"]["code"] == "BAD_INPUT"
