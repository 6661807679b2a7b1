"""Where the data lives: the connection settings and the migrations run on start."""

from __future__ import annotations

import asyncio
import fcntl
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tortoise import Tortoise
from tortoise.backends.base.config_generator import expand_db_url
from tortoise.connection import get_connection
from tortoise.migrations.executor import MigrationExecutor

from models import hosts, settings
from models.record.chain import compact_json

APP = "agentlog"
MODEL_MODULES = [
    "models.rows.agent",
    "models.rows.checkpoint",
    "models.rows.erasure",
    "models.rows.help",
    "models.rows.hold",
    "models.rows.idempotency",
    "models.rows.llm_call",
    "models.rows.model_price",
    "models.rows.otlp_open_task",
    "models.rows.otlp_placed_span",
    "models.rows.otlp_span",
    "models.rows.policies",
    "models.rows.review",
    "models.rows.task",
    "models.rows.trace_event",
    "models.rows.webhooks.delivery",
    "models.rows.webhooks.webhook",
]


def placeholders(conn: Any, sql: str) -> str:
    """`sql` written with PostgreSQL's $n placeholders, as the connection's database takes them."""
    return placeholders_for(conn.capabilities.dialect, sql)


def placeholders_for(dialect: str, sql: str) -> str:
    """`sql` written with PostgreSQL's $n placeholders, as the `dialect` takes them."""
    return sql if dialect == "postgres" else re.sub(r"\$\d+", "?", sql)


def keys_for(dialect: str, keys: list[str]) -> list[str] | str:
    """Keys given as one parameter: an array on PostgreSQL, a JSON list (read with `json_each`) on SQLite."""
    return keys if dialect == "postgres" else compact_json(keys)


def database_url() -> str:
    """The database of the settings in effect (AGENTLOG_DATABASE_URL), or `agentlog.db` in the working directory."""
    return settings.current().database_url or f"sqlite://{Path('agentlog.db').resolve()}"


def sqlite_file(url: str) -> Path | None:
    """The file a `sqlite://` URL names, made absolute; None for any other database."""
    if not url.startswith("sqlite://"):
        return None
    return Path(url[len("sqlite://"):].split("?", 1)[0]).resolve()


async def _nothing_to_reset(connection: Any) -> None:
    """A pooled connection keeps no session state to undo: its locks are taken per transaction, nothing on it
    LISTENs (the event listener has a connection of its own) and nothing SETs outside a transaction. asyncpg
    still rolls back a transaction left open; skipping its reset query saves a round trip per statement."""


def connection(url: str) -> str | dict[str, Any]:
    """The default connection: on PostgreSQL a pool that hands connections back without resetting them, over
    every host the URL names (models/hosts.py)."""
    if not url.startswith(("postgres://", "postgresql://", "asyncpg://")):
        return url
    found = hosts.addresses(url)
    config = expand_db_url(hosts.first_host_url(url))
    if len(found) > 1:
        config["engine"] = hosts.__name__
        config["credentials"].update(host=[host for host, _ in found], port=[port for _, port in found])
    config["credentials"]["reset"] = _nothing_to_reset
    return config


def tortoise_config(url: str) -> dict[str, Any]:
    return {
        "connections": {"default": connection(url)},
        "apps": {
            APP: {
                "models": MODEL_MODULES,
                "default_connection": "default",
                "migrations": "models.migrations",
            }
        },
        "use_tz": True,
        "timezone": "UTC",
    }


def dialect() -> str:
    return get_connection("default").capabilities.dialect


MIGRATION_LOCK = 0x6167656E746C6F67


@asynccontextmanager
async def file_lock(path: str) -> AsyncIterator[None]:
    """Holds an exclusive lock on the file at `path`, made for the purpose and removed when the block ends.

    Whoever waited on a file that was removed meanwhile locks the new one instead.
    """
    while True:
        held = open(path, "a")
        await asyncio.to_thread(fcntl.flock, held, fcntl.LOCK_EX)
        try:
            if os.fstat(held.fileno()).st_ino == os.stat(path).st_ino:
                break
        except FileNotFoundError:
            pass
        held.close()
    try:
        yield
    finally:
        os.unlink(path)
        held.close()


async def migrate() -> None:
    """Brings the schema of an initialised connection up to the latest migration.

    Processes starting at once on one database take turns, and whoever comes second finds the migrations
    applied: on PostgreSQL a transaction on one connection of the pool holds an advisory lock while they run
    on others; on SQLite a lock file beside the database is held.
    """
    client = get_connection("default")
    executor = MigrationExecutor(client, tortoise_config("")["apps"])
    if client.capabilities.dialect == "sqlite":
        if client.filename == ":memory:":
            await executor.migrate()
            return
        async with file_lock(f"{client.filename}.migrating"):
            await executor.migrate()
        return
    async with client.acquire_connection() as held, held.transaction():
        await held.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
        await executor.migrate()


SWEEP_LOCK = 0x6167656E74737770


@asynccontextmanager
async def one_at_a_time(wait: bool = False) -> AsyncIterator[bool]:
    """Whether this process holds the sweep lock of the database while inside: held by one process at a time,
    as migrations are (an advisory lock on PostgreSQL, a lock file beside SQLite's). Without `wait`, a process
    finding it held goes on at once with False."""
    client = get_connection("default")
    if client.capabilities.dialect == "sqlite":
        if client.filename == ":memory:":
            yield True
            return
        with open(f"{client.filename}.sweeping", "a") as held:
            try:
                await asyncio.to_thread(fcntl.flock, held, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(held, fcntl.LOCK_UN)
        return
    async with client.acquire_connection() as held, held.transaction():
        if wait:
            await held.execute("SELECT pg_advisory_xact_lock($1)", SWEEP_LOCK)
        elif not await held.fetchval("SELECT pg_try_advisory_xact_lock($1)", SWEEP_LOCK):
            yield False
            return
        yield True


async def open_database(url: str, create: bool = False) -> None:
    await Tortoise.init(config=tortoise_config(url), _create_db=create)
    await migrate()
