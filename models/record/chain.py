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

from orjson import OPT_UTC_Z, dumps as _orjson_dumps

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
    if at.tzinfo is timezone.utc and at.microsecond and at.year >= 1000:
        return _orjson_dumps(at, option=OPT_UTC_Z)[1:-1].decode()
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


def fixed_json(line: Line) -> str:
    """The canonical JSON of the fixed fields: written out in sorted key order, byte for byte what
    `json.dumps(fixed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` gives; a field holding a type
    other than its own is left to that general encoder, which says it exactly."""
    task, at = str(line.task).lower(), rfc3339(line.at)
    seq, attempts, cost, duration = line.seq, line.attempts, line.cost_micros, line.duration_ms
    inputs, outputs, error = line.input_tokens, line.output_tokens, line.is_error
    kind, model, rule, tool, call = line.kind, line.model, line.route_rule, line.tool, line.tool_call_id
    if not (
        (seq is None or type(seq) is int) and (attempts is None or type(attempts) is int)
        and (cost is None or type(cost) is int) and (duration is None or type(duration) is int)
        and (inputs is None or type(inputs) is int) and (outputs is None or type(outputs) is int)
        and (error is None or type(error) is bool) and (kind is None or isinstance(kind, str))
        and (model is None or isinstance(model, str)) and (rule is None or isinstance(rule, str))
        and (tool is None or isinstance(tool, str)) and (call is None or isinstance(call, str))
    ):
        return _canonical({
            "seq": seq, "kind": kind, "task": task, "at": at, "model": model, "routeRule": rule,
            "attempts": attempts, "costMicros": cost, "inputTokens": inputs, "outputTokens": outputs, "tool": tool,
            "toolCallId": call, "isError": error, "durationMs": duration,
        })
    return (
        f'{{"at":{encode_basestring(at)},"attempts":{"null" if attempts is None else attempts},'
        f'"costMicros":{"null" if cost is None else cost},"durationMs":{"null" if duration is None else duration},'
        f'"inputTokens":{"null" if inputs is None else inputs},'
        f'"isError":{"null" if error is None else "true" if error else "false"},'
        f'"kind":{"null" if kind is None else encode_basestring(kind)},'
        f'"model":{"null" if model is None else encode_basestring(model)},'
        f'"outputTokens":{"null" if outputs is None else outputs},'
        f'"routeRule":{"null" if rule is None else encode_basestring(rule)},"seq":{"null" if seq is None else seq},'
        f'"task":{encode_basestring(task)},"tool":{"null" if tool is None else encode_basestring(tool)},'
        f'"toolCallId":{"null" if call is None else encode_basestring(call)}}}'
    )


def line_hash(prev_hash: str, fixed: str, summary_hash: str, payload_hash: str) -> str:
    return hashlib.sha256(
        LINE_TAG
        + bytes.fromhex(prev_hash)
        + fixed.encode("utf-8")
        + bytes.fromhex(summary_hash)
        + bytes.fromhex(payload_hash)
    ).hexdigest()


def seal(line: Line, prev_hash: str, salts: str | None = None) -> Line:
    """Salts, commits and hashes a new line in place, after `prev_hash`; `salts` are 64 random hex digits, drawn
    here when not given."""
    salts = salts or os.urandom(32).hex()
    line.summary_salt, line.payload_salt = salts[:32], salts[32:]
    line.summary_hash = commit(line.summary_salt, line.summary or "")
    line.payload_hash = commit(line.payload_salt, line.payload or "")
    line.prev_hash = prev_hash
    line.hash = line_hash(prev_hash, fixed_json(line), line.summary_hash, line.payload_hash)
    return line
