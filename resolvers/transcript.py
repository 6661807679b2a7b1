"""Turns derived from the record: each agent model call is a turn, with the tool calls that follow it."""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from models import AgentTask, TraceEvent


@dataclass(slots=True)
class ToolUse:
    name: str | None
    tool_call_id: str | None
    input: Any
    output: Any
    is_error: bool | None
    duration_ms: int | None
    sequence: int


@dataclass(slots=True)
class Turn:
    turn: int
    task: AgentTask
    model: str | None
    at: datetime
    system_prompt: str | None
    messages: Any
    response: Any
    withheld_reason: str | None
    seq: int
    tools: list[ToolUse] = field(default_factory=list)


def _content(event: TraceEvent) -> Any:
    if event.content_erased_at is not None or event.withheld is not None or event.payload is None:
        return None
    return json.loads(event.payload)


def _reason(event: TraceEvent) -> str | None:
    if event.content_erased_at is not None:
        return "ERASED"
    return event.withheld


def _pair(calls: list[TraceEvent], results: list[TraceEvent]) -> list[tuple[TraceEvent, TraceEvent | None]]:
    """Each call with its result: by toolCallId where there is one, else the next unclaimed result, in order."""
    left = list(results)
    pairs = []
    for call in calls:
        match = None
        if call.tool_call_id is not None:
            match = next((r for r in left if r.tool_call_id == call.tool_call_id), None)
        if match is None:
            match = next((r for r in left if r.tool_call_id is None or call.tool_call_id is None), None)
        if match is not None:
            left.remove(match)
        pairs.append((call, match))
    return pairs


def _turns_of_task(task: AgentTask, lines: list[TraceEvent]) -> list[Turn]:
    turns: list[Turn] = []
    calls: list[TraceEvent] = []
    results: list[TraceEvent] = []

    def close() -> None:
        if turns:
            for i, (call, result) in enumerate(_pair(calls, results), start=1):
                turns[-1].tools.append(
                    ToolUse(
                        name=call.tool,
                        tool_call_id=call.tool_call_id,
                        input=_content(call),
                        output=_content(result) if result else None,
                        is_error=result.is_error if result else None,
                        duration_ms=result.duration_ms if result else None,
                        sequence=i,
                    )
                )
        calls.clear()
        results.clear()

    for line in lines:
        if line.kind == "MODEL_CALL" and line.by_tool is None:
            close()
            content = _content(line) or {}
            turns.append(
                Turn(
                    turn=len(turns) + 1,
                    task=task,
                    model=line.model,
                    at=line.at,
                    system_prompt=content.get("systemPrompt"),
                    messages=content.get("messages"),
                    response=content.get("response"),
                    withheld_reason=_reason(line),
                    seq=line.seq,
                )
            )
        elif line.kind == "TOOL_CALL":
            calls.append(line)
        elif line.kind == "TOOL_RESULT":
            results.append(line)
    close()
    return turns


def turns_of(tasks: list[AgentTask], lines: list[TraceEvent]) -> list[Turn]:
    """The turns of these tasks, in seq order."""
    by_task: dict[uuid.UUID, list[TraceEvent]] = defaultdict(list)
    for line in sorted(lines, key=lambda e: e.seq):
        by_task[line.task_id].append(line)
    turns = [turn for task in tasks for turn in _turns_of_task(task, by_task[task.id])]
    return sorted(turns, key=lambda t: t.seq)
