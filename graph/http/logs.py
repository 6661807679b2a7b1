"""Where the server's log goes and how it reads: `AGENTLOG_LOG_FORMAT=text` or `json` (python-json-logger).

Every record carries the id of the request being answered. A JSON line's `time` is ISO-8601 in UTC, and it holds no
terminal colours (uvicorn's `color_message` is left out). The database drivers' own debug records (which
carry statements and their values, content among them) are held back at every level.
"""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter

from graph.http.request_log import RequestAttributes

TEXT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"
JSON_FIELDS = ["asctime", "levelname", "name", "process", "request_id", "message"]
QUIET = ("tortoise", "aiosqlite", "asyncpg", "uvicorn.access")
COLOURED = ("color_message",)


class UtcJsonFormatter(JsonFormatter):
    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802 (logging's name)
        return datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def formatter(kind: str) -> logging.Formatter:
    if kind == "json":
        return UtcJsonFormatter(JSON_FIELDS, rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
                                reserved_attrs=[*RESERVED_ATTRS, *COLOURED])
    return logging.Formatter(TEXT)


def configure(kind: str, level: str) -> None:
    """Sends every record to stderr, formatted as `kind`, from `level` on."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(kind))
    handler.addFilter(RequestAttributes())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True
