"""The record's hash chain, encoding v1: plain functions over plain values.

Nothing here touches a database or GraphQL, so an exported record can be
verified offline by the same code the server uses.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from json.encoder import encode_basestring
from typing import Any

COMMIT_TAG = b"agentlog/commit/v1\x00"
LINE_TAG = b"agentlog/line/v1\x00"
GENESIS = "0" * 64
ERASED_SENTENCE = "Erased."

FIXED_KEYS = (
    "seq", "kind", "task", "at", "model", "routeRule", "attempts", "costMicros",
    "inputTokens", "outputTokens", "tool", "toolCallId", "isError", "durationMs",
)


UTC_OFFSET = timedelta(0)
_compact = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_canonical = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


def commit(salt: str, text: str) -> str:
    return hashlib.sha256(COMMIT_TAG + bytes.fromhex(salt) + text.encode("utf-8")).hexdigest()


def rfc3339(at: datetime) -> str:
    if at.utcoffset() == UTC_OFFSET and at.year >= 1000:
        return at.isoformat(timespec="microseconds")[:-6] + "Z"
    return at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def compact_json(value: Any) -> str:
    return _compact(value)


@dataclass(slots=True)
class Line:
    """One line of a record, as stored: what the hash covers and what it is checked against."""

    seq: int
    kind: str
    task: str
    at: datetime
    summary: str | None
    payload: str | None
    summary_salt: str | None
    payload_salt: str | None
    summary_hash: str
    payload_hash: str
    prev_hash: str
    hash: str
    model: str | None = None
    route_rule: str | None = None
    attempts: int | None = None
    cost_micros: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    tool: str | None = None
    tool_call_id: str | None = None
    is_error: bool | None = None
    duration_ms: int | None = None
    erased: bool = False
    content_erased: bool = False


class _Unusual(Exception):
    """A fixed field holds a type other than its own; the general encoder says it exactly."""


def _int(value: Any) -> str:
    if value is None:
        return "null"
    if type(value) is int:
        return int.__repr__(value)
    raise _Unusual


def _str(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return encode_basestring(value)
    raise _Unusual


def _bool(value: Any) -> str:
    if value is None:
        return "null"
    if type(value) is bool:
        return "true" if value else "false"
    raise _Unusual


def fixed_json(line: Line) -> str:
    """The canonical JSON of the fixed fields: written out in sorted key order, byte for byte what
    `json.dumps(fixed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` gives."""
    task, at = str(line.task).lower(), rfc3339(line.at)
    try:
        return (
            f'{{"at":{encode_basestring(at)},"attempts":{_int(line.attempts)},"costMicros":{_int(line.cost_micros)},'
            f'"durationMs":{_int(line.duration_ms)},"inputTokens":{_int(line.input_tokens)},'
            f'"isError":{_bool(line.is_error)},"kind":{_str(line.kind)},"model":{_str(line.model)},'
            f'"outputTokens":{_int(line.output_tokens)},"routeRule":{_str(line.route_rule)},"seq":{_int(line.seq)},'
            f'"task":{encode_basestring(task)},"tool":{_str(line.tool)},"toolCallId":{_str(line.tool_call_id)}}}'
        )
    except _Unusual:
        return _canonical({
            "seq": line.seq, "kind": line.kind, "task": task, "at": at, "model": line.model,
            "routeRule": line.route_rule, "attempts": line.attempts, "costMicros": line.cost_micros,
            "inputTokens": line.input_tokens, "outputTokens": line.output_tokens, "tool": line.tool,
            "toolCallId": line.tool_call_id, "isError": line.is_error, "durationMs": line.duration_ms,
        })


def line_hash(prev_hash: str, fixed: str, summary_hash: str, payload_hash: str) -> str:
    return hashlib.sha256(
        LINE_TAG
        + bytes.fromhex(prev_hash)
        + fixed.encode("utf-8")
        + bytes.fromhex(summary_hash)
        + bytes.fromhex(payload_hash)
    ).hexdigest()


def seal(line: Line, prev_hash: str) -> Line:
    """Salts, commits and hashes a new line in place, after `prev_hash`."""
    salts = os.urandom(32).hex()
    line.summary_salt, line.payload_salt = salts[:32], salts[32:]
    line.summary_hash = commit(line.summary_salt, line.summary or "")
    line.payload_hash = commit(line.payload_salt, line.payload or "")
    line.prev_hash = prev_hash
    line.hash = line_hash(prev_hash, fixed_json(line), line.summary_hash, line.payload_hash)
    return line
