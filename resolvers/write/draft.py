"""A line on its way in, the one shape the kit's mutations and OTLP placing both make and the write path takes:
what the line will say and its figures, and for a model call what its meter row adds to them."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, fields
from datetime import datetime
from operator import attrgetter
from typing import Any


@dataclass(slots=True)
class CallDraft:
    """What a model call's meter row holds beyond its line's figures; the response only words its summary."""

    provider: str | None
    cached_input_tokens: int | None
    cost_source: str
    response: Any = None


@dataclass(slots=True)
class LineDraft:
    """A checked line, not yet tied to a task or a time: its kind, words and figures, the tool a model call was
    made inside, the classification its agent's logging may withhold it by, and a model call's meter draft."""

    kind: str
    summary: str | None
    payload: str | None
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
    by_tool: str | None = None
    classification: str | None = None
    call: CallDraft | None = None


@dataclass(slots=True)
class MeterRow:
    """One `llm_call` row; CALL_COLUMNS names its columns in this order. Ids as text."""

    id: str
    tenant: str
    task_id: str
    task_path: str
    turn: int | None
    agent: str
    model: str
    provider: str | None
    route_rule: str | None
    attempts: int
    input_tokens: int | None
    output_tokens: int | None
    cost_micros: int | None
    duration_ms: int | None
    at: datetime
    by_tool: str | None
    cost_source: str
    cached_input_tokens: int | None

    def row(self) -> tuple:
        return _call_row(self)


CALL_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(MeterRow))
_call_row = attrgetter(*CALL_COLUMNS)


def meter_row(draft: LineDraft, call_id: uuid.UUID, task: Any, task_id: str, turn: int | None,
              at: datetime) -> MeterRow:
    """A model call's meter row, for `task` (whose id as text is `task_id`) at its `turn` (None for a call made
    inside a tool)."""
    call = draft.call
    return MeterRow(
        id=str(call_id), tenant=task.tenant, task_id=task_id, task_path=task.path, turn=turn, agent=task.agent,
        model=draft.model, provider=call.provider, route_rule=draft.route_rule, attempts=draft.attempts,
        input_tokens=draft.input_tokens, output_tokens=draft.output_tokens, cost_micros=draft.cost_micros,
        duration_ms=draft.duration_ms, at=at, by_tool=draft.by_tool, cost_source=call.cost_source,
        cached_input_tokens=call.cached_input_tokens,
    )
