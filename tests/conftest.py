"""One fresh database per test run, SQLite by default or PostgreSQL when AGENTLOG_TEST_DATABASE_URL names one; a
Citus coordinator's when AGENTLOG_TEST_CITUS_WORKERS also names its workers (tests/citus.py)."""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path

import httpx
import pytest
from tortoise import Tortoise
from tortoise.connection import get_connection

from graph.app import create_app
from models import db, settings
from models.settings import Settings, load
from tests import citus
from tests.shop import Client
from models.record.note import new_signer

if not os.environ.get("AGENTLOG_SIGNING_KEY"):
    _key = Path(tempfile.mkdtemp()) / "signing.key"
    _key.write_text(new_signer("agentlog-test").key + "\n")
    os.environ["AGENTLOG_SIGNING_KEY"] = str(_key)
settings.current()  # this process's own settings, read once before any test sets a variable for a server it starts


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers", "postgres_only: needs PostgreSQL (it restarts a cluster of its own); deselected on the SQLite pass"
    )
    config.addinivalue_line(
        "markers", "citus_only: reads Citus's catalog; deselected unless AGENTLOG_TEST_CITUS_WORKERS names a cluster"
    )
    config.addinivalue_line(
        "markers", "fast_executor: a promise of the default executor (a fixed statement count for a tree of any "
        "size); deselected when AGENTLOG_EXECUTOR=stock, whose answers the executor comparison holds equal"
    )


def pytest_collection_modifyitems(config, items) -> None:
    """Tests marked postgres_only run whenever the suite runs on PostgreSQL, and are deselected (not skipped) on
    SQLite, where there is no server to take away; tests marked citus_only run only on a Citus cluster. Tests marked
    fast_executor are deselected on the stock pass."""
    dropped = set()
    if not os.environ.get("AGENTLOG_TEST_DATABASE_URL", "sqlite").startswith("postgres"):
        dropped.add("postgres_only")
    if not citus.workers():
        dropped.add("citus_only")
    if os.environ.get("AGENTLOG_EXECUTOR", "fast").strip().lower() == "stock":
        dropped.add("fast_executor")
    kept = [item for item in items if not any(item.get_closest_marker(name) for name in dropped)]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


def _test_url() -> str:
    url = os.environ.get("AGENTLOG_TEST_DATABASE_URL", "sqlite")
    if url == "sqlite":
        return f"sqlite://{Path(tempfile.mkdtemp()) / 'agentlog-test.db'}"
    base, _, name = url.rpartition("/")
    return f"{base}/{name or 'agentlog_test'}_{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
async def database():
    url = _test_url()
    if citus.workers():
        await citus.create(url)
        await db.open_database(url)
        yield url
        await Tortoise.close_connections()
        await citus.drop(url)
        return
    await db.open_database(url, create=True)
    yield url
    if url.startswith("postgres"):
        await Tortoise._drop_databases()
    else:
        await Tortoise.close_connections()


@pytest.fixture(scope="session")
def dialect(database) -> str:
    return get_connection("default").capabilities.dialect


@pytest.fixture(scope="session")
def app(database):
    return create_app(load(database_url=database))


@pytest.fixture
def configure(request, monkeypatch):
    """`configure(otlp_wait_s=60, ...)`: for the rest of the test, the session's app and the library code the test
    calls run under settings read from the environment with these in their place (each call adds to the last)."""
    given: dict = {}
    apps: dict = {}

    def configured(**overrides) -> Settings:
        given.update(overrides)
        app = request.getfixturevalue("app") if "app" in request.fixturenames else None
        found = load(**({"database_url": app.state.settings.database_url} if app else {}) | given)
        if app is not None:
            apps.setdefault(app, app.state.settings)
            app.state.settings = found
        monkeypatch.setattr(settings, "_loaded", found)
        return found

    yield configured
    for app, before in apps.items():
        app.state.settings = before


@pytest.fixture
async def client(app):
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agentlog.test") as http:
        yield Client(http)


@pytest.fixture(scope="session")
def servers(database):
    """`agentlog serve` processes on the test database: two on PostgreSQL, so events cross between processes;
    one on SQLite, where events stay within the process."""
    from tests.servers import start_server

    started = []
    try:
        for _ in range(2 if database.startswith("postgres") else 1):
            started.append(start_server(database))
        yield started
    finally:
        for server in started:
            server.stop()


@pytest.fixture
async def event_bus(dialect):
    """Task events flowing to this process's subscribers, as in a running server."""
    from resolvers.events import bus, flowing

    async with flowing.running(dialect):
        yield bus.HUB


@pytest.fixture(scope="session")
async def browser():
    """Debian's Chromium, headless; Playwright downloads no browser here."""
    from playwright.async_api import async_playwright

    from tests.browser import CHROMIUM

    async with async_playwright() as p:
        chromium = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        await chromium.close()
