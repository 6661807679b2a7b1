"""Server settings read from the environment each time they are needed."""

from __future__ import annotations

import os

from models.errors import BadInput


def _flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return raw.strip().lower() not in {"0", "false", "no", "off"}


def _number(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise BadInput(f"{name} must be a whole number, not {raw!r}.") from exc


def record_content() -> bool:
    return _flag("AGENTLOG_RECORD_CONTENT", True)


def transcript_row_cap() -> int:
    return _number("AGENTLOG_TRANSCRIPT_ROW_CAP", 5000)


def max_depth() -> int:
    return _number("AGENTLOG_MAX_QUERY_DEPTH", 20)


def max_aliases() -> int:
    return _number("AGENTLOG_MAX_ALIASES", 50)


def max_tokens() -> int:
    return _number("AGENTLOG_MAX_TOKENS", 10000)


def max_body_bytes() -> int:
    return _number("AGENTLOG_MAX_BODY_BYTES", 16 * 1024 * 1024)


EXECUTORS = ("fast", "stock")


def executor() -> str:
    raw = (os.environ.get("AGENTLOG_EXECUTOR") or "fast").strip().lower()
    if raw not in EXECUTORS:
        raise BadInput(f"AGENTLOG_EXECUTOR must be fast or stock, not {raw!r}.")
    return raw
