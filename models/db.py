"""Where the data lives: the connection settings and the migrations run on start."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tortoise import Tortoise
from tortoise.connection import get_connection
from tortoise.migrations.executor import MigrationExecutor

APP = "agentlog"
MODEL_MODULES = [
    "models.agent",
    "models.erasure",
    "models.help",
    "models.idempotency",
    "models.llm_call",
    "models.policies",
    "models.task",
    "models.trace_event",
]


def database_url() -> str:
    url = os.environ.get("AGENTLOG_DATABASE_URL")
    if url:
        return url
    return f"sqlite://{Path('agentlog.db').resolve()}"


def tortoise_config(url: str) -> dict[str, Any]:
    return {
        "connections": {"default": url},
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


async def migrate() -> None:
    """Brings the schema of an initialised connection up to the latest migration."""
    config = tortoise_config("")["apps"]
    executor = MigrationExecutor(get_connection("default"), config)
    await executor.migrate()


async def open_database(url: str, create: bool = False) -> None:
    await Tortoise.init(config=tortoise_config(url), _create_db=create)
    await migrate()
