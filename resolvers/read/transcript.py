"""Turns derived from the record: each agent model call is a turn, with the tool calls that follow it."""

from __future__ import annotations

import json
import uuid
from collections import defaultdict, deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from models import AgentTask, TraceEvent
from models.record.vocabulary import LineKind, WithheldReason


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


def withheld_reason(event: TraceEvent) -> str | None:
    """Why a line's content is missing: ERASED first, then why it was never stored."""
    if event.content_erased_at is not None:
        return WithheldReason.ERASED
    return event.withheld


def content(event: TraceEvent | None) -> Any:
    if event is None or withheld_reason(event) is not None or not event.payload:
        return None
    return json.loads(event.payload)


def instructions_text(instructions: Any) -> str | None:
    """The instructions as text: as recorded when text, the words of their text parts when sent as the GenAI
    conventions' parts (`[{"type": "text", "content": …}]`), else their JSON."""
    if instructions is None or isinstance(instructions, str):
        return instructions
    if isinstance(instructions, list) and all(
        isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("content"), str)
        for part in instructions
    ):
        return "\n\n".join(part["content"] for part in instructions)
    return json.dumps(instructions, ensure_ascii=False, separators=(",", ":"))


def pair(calls: list[TraceEvent], results: list[TraceEvent]) -> dict[int, TraceEvent]:
    """Each call's result, keyed by the call's seq: by toolCallId, else by order among the lines without one."""
    by_id: dict[str, deque[TraceEvent]] = defaultdict(deque)
    for result in results:
        if result.tool_call_id is not None:
            by_id[result.tool_call_id].append(result)
    paired: dict[int, TraceEvent] = {}
    for call in calls:
        waiting = by_id.get(call.tool_call_id) if call.tool_call_id is not None else None
        if waiting:
            paired[call.seq] = waiting.popleft()
    claimed = {result.seq for result in paired.values()}
    call_ids = {call.tool_call_id for call in calls if call.tool_call_id is not None}
    loose = [r for r in results if r.seq not in claimed and r.tool_call_id not in call_ids]
    pools = {True: _Pool(loose), False: _Pool([r for r in loose if r.tool_call_id is None])}
    for call in calls:
        if call.seq not in paired:
            found = pools[call.tool_call_id is None].next_after(call.seq, claimed)
            if found is not None:
                paired[call.seq] = found
                claimed.add(found.seq)
    return paired


class _Pool:
    """Results in seq order, handed out once each to calls that come in seq order."""

    def __init__(self, results: list[TraceEvent]) -> None:
        self.results = results
        self.at = 0

    def next_after(self, seq: int, claimed: set[int]) -> TraceEvent | None:
        while self.at < len(self.results) and (
            self.results[self.at].seq <= seq or self.results[self.at].seq in claimed
        ):
            self.at += 1
        return self.results[self.at] if self.at < len(self.results) else None


def _turns_of_task(task: AgentTask, lines: list[TraceEvent]) -> list[Turn]:
    calls = [line for line in lines if line.kind == LineKind.TOOL_CALL]
    results = pair(calls, [line for line in lines if line.kind == LineKind.TOOL_RESULT])
    turns: list[Turn] = []
    for line in lines:
        if line.kind == LineKind.MODEL_CALL and line.by_tool is None:
            said = content(line) or {}
            turns.append(
                Turn(
                    turn=len(turns) + 1,
                    task=task,
                    model=line.model,
                    at=line.at,
                    system_prompt=instructions_text(said.get("systemPrompt")),
                    messages=said.get("messages"),
                    response=said.get("response"),
                    withheld_reason=withheld_reason(line),
                    seq=line.seq,
                )
            )
        elif line.kind == LineKind.TOOL_CALL and turns:
            result = results.get(line.seq)
            turns[-1].tools.append(
                ToolUse(
                    name=line.tool,
                    tool_call_id=line.tool_call_id,
                    input=content(line),
                    output=content(result),
                    is_error=result.is_error if result else None,
                    duration_ms=result.duration_ms if result else None,
                    sequence=len(turns[-1].tools) + 1,
                )
            )
    return turns


def turns_of(tasks: list[AgentTask], lines: list[TraceEvent]) -> list[Turn]:
    """The turns of these tasks, in seq order."""
    by_task: dict[uuid.UUID, list[TraceEvent]] = defaultdict(list)
    for line in sorted(lines, key=lambda e: e.seq):
        by_task[line.task_id].append(line)
    turns = [turn for task in tasks for turn in _turns_of_task(task, by_task[task.id])]
    return sorted(turns, key=lambda t: t.seq)
