"""A chat session's transcript as timeline rows: each model call, each tool call with its result, each task's end."""

from __future__ import annotations

import re
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from models import AgentTask, LlmCall, TraceEvent
from models.record.chain import rfc3339
from models.record.vocabulary import LineKind, TaskStatus
from permissions.access import Access, Group
from resolvers.read.snapshot import read_snapshot
from resolvers.read.transcript import pair
from resolvers.read.tree import under_any

SESSION_ID_CHARS = 256
SESSION_ID_PATTERN = "^[A-Za-z0-9._:-]+$"
PAYLOAD_BYTES = 32_768
TRUNCATION_MARKER = " ... (truncated)"
ROW_KINDS = (LineKind.MODEL_CALL, LineKind.TOOL_CALL, LineKind.ENDED)
OPERATIONS = {LineKind.MODEL_CALL: "chat", LineKind.TOOL_CALL: "tool_call", LineKind.ENDED: "output"}

_session_id = re.compile(SESSION_ID_PATTERN)


@dataclass(frozen=True, slots=True)
class InvalidSessionId:
    type: str
    msg: str
    ctx: dict[str, object]


@dataclass(slots=True)
class TranscriptRow:
    event_timestamp: str
    agent_id: str
    iteration_id: str
    session_id: str | None
    operation: str
    provider: str | None = None
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    tool_name: str | None = None
    tool_call_id: str | None = None
    duration_ms: int = 0
    status: str = "ok"
    error_code: str | None = None
    error_message: str | None = None
    payload_truncated: bool = False
    payload_text: str | None = None


@dataclass(slots=True)
class SessionTranscript:
    session_id: str
    rows: list[TranscriptRow] = field(default_factory=list)
    truncated: bool = False


def invalid_session_id(session_id: str) -> InvalidSessionId | None:
    """Why a session id is refused, in the terms a validating client expects, or None when it is fine."""
    if len(session_id) > SESSION_ID_CHARS:
        return InvalidSessionId(
            "string_too_long",
            f"String should have at most {SESSION_ID_CHARS} characters",
            {"max_length": SESSION_ID_CHARS},
        )
    if not _session_id.fullmatch(session_id):
        return InvalidSessionId(
            "string_pattern_mismatch",
            f"String should match pattern '{SESSION_ID_PATTERN}'",
            {"pattern": SESSION_ID_PATTERN},
        )
    return None


def capped(text: str | None) -> tuple[str | None, bool]:
    """The text within PAYLOAD_BYTES of UTF-8, marker included, cut on a character boundary; and whether it was cut."""
    if text is None:
        return None, False
    encoded = text.encode("utf-8")
    if len(encoded) <= PAYLOAD_BYTES:
        return text, False
    keep = encoded[: PAYLOAD_BYTES - len(TRUNCATION_MARKER.encode("utf-8"))]
    return keep.decode("utf-8", errors="ignore") + TRUNCATION_MARKER, True


def _kept(line: TraceEvent) -> bool:
    return line.content_erased_at is None and line.withheld is None


def _stored(line: TraceEvent | None) -> str | None:
    return line.payload if line is not None and _kept(line) else None


def _tool_payload(call: TraceEvent, result: TraceEvent | None) -> str | None:
    """`{"input":…,"output":…}` from the two stored JSON texts, which are already compact JSON."""
    if not _kept(call):
        return None
    return '{"input":' + (call.payload or "null") + ',"output":' + (_stored(result) or "null") + "}"


def _duration_ms(started: datetime, ended: datetime | None) -> int:
    if ended is None:
        return 0
    return max(0, int((ended - started).total_seconds() * 1000))


async def session_tasks(access: Access, session_id: str) -> tuple[list[AgentTask], dict[uuid.UUID, frozenset[Group]]]:
    """The session's tasks and everything under them that the caller may see, with what they read on each."""
    tenant = access.tenant
    if tenant is None:
        return [], {}
    paths = await AgentTask.filter(tenant=tenant, session=session_id).values_list("path", flat=True)
    if not paths:
        return [], {}
    tasks = await AgentTask.filter(under_any("path", paths), tenant=tenant)
    groups = await access.task_groups(tasks)
    return [t for t in tasks if groups[t.id]], groups


async def session_transcript(access: Access, session_id: str, row_cap: int) -> SessionTranscript:
    """The rows of the session's tasks the caller may see, oldest first; more than `row_cap` rows sets `truncated`.

    Read from one snapshot, so a tool call and its result, or a task and its lines, never come from two moments."""
    async with read_snapshot():
        return await _session_transcript(access, session_id, row_cap)


async def _session_transcript(access: Access, session_id: str, row_cap: int) -> SessionTranscript:
    tasks, groups = await session_tasks(access, session_id)
    out = SessionTranscript(session_id=session_id)
    if not tasks:
        return out
    tenant = tasks[0].tenant
    by_id = {t.id: t for t in tasks}
    cap = max(row_cap, 0)
    lines = await (
        TraceEvent.filter(tenant=tenant, task_id__in=list(by_id), kind__in=ROW_KINDS)
        .order_by("at", "seq", "id")
        .limit(cap + 1)
    )
    out.truncated = len(lines) > cap
    lines = lines[:cap]
    results = await _tool_results(tenant, lines)
    providers = await _providers(tenant, lines)
    for line in lines:
        task = by_id[line.task_id]
        out.rows.append(_row(line, task, groups[task.id], results.get(line.id), providers))
    return out


async def _tool_results(tenant: str, lines: list[TraceEvent]) -> dict[int, TraceEvent | None]:
    """Each tool call line's result, paired per task the way the transcript pairs them."""
    calls: dict[uuid.UUID, list[TraceEvent]] = defaultdict(list)
    for line in lines:
        if line.kind == LineKind.TOOL_CALL:
            calls[line.task_id].append(line)
    if not calls:
        return {}
    results: dict[uuid.UUID, list[TraceEvent]] = defaultdict(list)
    found = TraceEvent.filter(tenant=tenant, task_id__in=list(calls), kind=LineKind.TOOL_RESULT).order_by("seq")
    for result in await found:
        results[result.task_id].append(result)
    paired: dict[int, TraceEvent | None] = {}
    for task_id, task_calls in calls.items():
        found = pair(sorted(task_calls, key=lambda c: c.seq), results[task_id])
        for call in task_calls:
            paired[call.id] = found.get(call.seq)
    return paired


async def _providers(tenant: str, lines: list[TraceEvent]) -> dict[uuid.UUID, str | None]:
    call_ids = [line.call_id for line in lines if line.call_id is not None]
    if not call_ids:
        return {}
    rows = await LlmCall.filter(tenant=tenant, id__in=call_ids).values_list("id", "provider")
    return {uuid.UUID(str(call_id)): provider for call_id, provider in rows}


def _row(
    line: TraceEvent,
    task: AgentTask,
    groups: frozenset[Group],
    result: TraceEvent | None,
    providers: dict[uuid.UUID, str | None],
) -> TranscriptRow:
    row = TranscriptRow(
        event_timestamp=rfc3339(line.at),
        agent_id=task.agent,
        iteration_id=str(task.id),
        session_id=task.session,
        operation=OPERATIONS[line.kind],
    )
    if line.kind == LineKind.MODEL_CALL:
        row.provider = providers.get(line.call_id) if line.call_id is not None else None
        row.model = line.model
        row.input_tokens = line.input_tokens or 0
        row.output_tokens = line.output_tokens or 0
        row.duration_ms = line.duration_ms or 0
        text = _stored(line)
    elif line.kind == LineKind.TOOL_CALL:
        row.tool_name = line.tool
        row.tool_call_id = line.tool_call_id
        row.duration_ms = (result.duration_ms or 0) if result is not None else 0
        if result is not None and result.is_error:
            row.status, row.error_code = "error", "tool_error"
        text = _tool_payload(line, result)
    else:
        row.duration_ms = _duration_ms(task.started_at, task.ended_at)
        if task.status == TaskStatus.FAILED:
            row.status, row.error_code = "error", "task_failed"
            row.error_message = task.outcome if Group.WORDS in groups else None
        text = _stored(line)
    if Group.CONTENT in groups:
        row.payload_text, row.payload_truncated = capped(text)
    return row
