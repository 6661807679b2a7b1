"""The mutations' inputs, exactly as the contract names them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime
from enum import Enum
from typing import Any

import strawberry
from strawberry.types.unset import UnsetType
from strawberry.utils.str_converters import to_camel_case

from graph.types.enums import AgentLogging, ReviewVerdict, TaskCause, TaskStatus, ToolEffect
from graph.types.scalars import JSON, Long


def plain(value: Any) -> Any:
    """An input as plain Python: dicts with snake_case keys, enum values as strings, unset as None."""
    if isinstance(value, UnsetType):
        return None
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


@strawberry.input
class PrincipalInput:
    id: str
    name: str | None = None


@strawberry.input
class RegisterAgentInput:
    name: str
    purpose: str | None = None
    roles: list[str] | None = None
    transcript_readers: list[str] | None = None
    logging: AgentLogging = AgentLogging.FULL
    idempotency_key: str | None = None


@strawberry.input
class PoliciesInput:
    supervises_agents: list[str] | None = None
    audits_agents: list[str] | None = None
    teaches_agents: list[str] | None = None
    reads_all_agent_work: list[str] | None = None
    erases_agent_records: list[str] | None = None
    retain_days: int | None = strawberry.field(
        default=None,
        description="Days after a work tree's root ends before the tree is forgotten, as by forgetAgentWork; "
        "0 keeps work forever (the default). Omitted, the current value is kept. Under "
        "AGENTLOG_RETENTION_FLOOR_DAYS it needs a retentionBasis.",
    )
    retention_basis: str | None = strawberry.field(
        default=None,
        description="Why this tenant may keep work fewer days than AGENTLOG_RETENTION_FLOOR_DAYS; recorded with the "
        "change. Setting retainDays without it clears it.",
    )
    holds_records: list[str] | None = strawberry.field(
        default=None, description="The roles that may hold work (holdWork, releaseHold)."
    )
    idempotency_key: str | None = None


@strawberry.input
class StartTaskInput:
    agent: str
    skill: str
    actor: PrincipalInput
    skill_version: str | None = None
    cause: TaskCause = TaskCause.REQUEST
    about: str | None = None
    trigger: str | None = None
    given: str | None = None
    requester: PrincipalInput | None = None
    parent: strawberry.ID | None = None
    limit_micros: Long | None = None
    session: str | None = None
    workflow_run: str | None = None
    run_step: str | None = None
    entity_type: str | None = None
    entity_id: str | None = None
    instruction_set: int | None = None
    instructions_sent: str | None = None
    summary: str | None = None
    idempotency_key: str | None = None


@strawberry.input
class AskForHelpInput:
    question: str
    asked_of: PrincipalInput
    task: strawberry.ID | None = None
    idempotency_key: str | None = None


@strawberry.input
class SendBackInput:
    help: strawberry.ID
    answer: str
    by: PrincipalInput
    idempotency_key: str | None = None


@strawberry.input
class EndTaskInput:
    task: strawberry.ID
    status: TaskStatus
    outcome: str | None = None
    result: JSON | None = None
    summary: str | None = None
    idempotency_key: str | None = None


@strawberry.input
class StopTaskInput:
    task: strawberry.ID
    reason: str
    idempotency_key: str | None = None


@strawberry.input(description="Narrows tasks(); a filter on a field the caller may not read is refused.")
class TaskFilter:
    agent: str | None = None
    skill: str | None = None
    status: TaskStatus | None = None
    requester: str | None = None
    session: str | None = None
    roots_only: bool | None = None
    started_after: datetime | None = None
    started_before: datetime | None = None
    entity_type: str | None = None
    entity_id: str | None = strawberry.field(default=None, description="Words: refused for a caller who may not read them.")
    workflow_run: str | None = None
    model: str | None = strawberry.field(default=None, description="Tasks with a meter row of this model.")
    status_in: list[TaskStatus] | None = None
    agent_in: list[str] | None = None
    search: str | None = strawberry.field(
        default=None,
        description="Words (at most 1,000 characters, taken literally) that the task's about, trigger or outcome, "
        "or one of its line sentences, all hold; only texts the caller may read on a task make it match.",
    )
    verdict: ReviewVerdict | None = strawberry.field(
        default=None,
        description="Tasks with a review of this verdict. Sentences: refused for a caller who may not read them.",
    )


@strawberry.input(description="A verdict on a piece of work that has ended.")
class ReviewInput:
    task: strawberry.ID
    verdict: ReviewVerdict
    score: float | None = None
    note: str | None = None
    idempotency_key: str | None = None


@strawberry.input(description="The tree of the task to hold or release, and why.")
class HoldInput:
    task: strawberry.ID
    reason: str
    idempotency_key: str | None = None


@strawberry.input(description="A model call: the fields of ModelCallInput that recordLines takes per line.")
class ModelCallLineInput:
    model: str
    input_tokens: Long
    output_tokens: Long
    cost_micros: Long | None = strawberry.field(
        default=None, description="What the call cost; omitted, it is priced from the tenant's price table."
    )
    cached_input_tokens: Long | None = strawberry.field(
        default=None, description="Of inputTokens, how many were read from the provider's cache."
    )
    provider: str | None = None
    route_rule: str | None = None
    attempts: int = 1
    duration_ms: int | None = None
    by_tool: str | None = None
    system_prompt: str | None = None
    messages: JSON | None = None
    response: JSON | None = None
    classification: str | None = None
    summary: str | None = None


@strawberry.input(description="A tool call: the fields of ToolCallInput that recordLines takes per line.")
class ToolCallLineInput:
    tool: str
    tool_call_id: str | None = None
    input: JSON | None = None
    effect: ToolEffect = ToolEffect.QUERY
    summary: str | None = None


@strawberry.input(description="A tool's result: the fields of ToolResultInput that recordLines takes per line.")
class ToolResultLineInput:
    tool: str
    tool_call_id: str | None = None
    output: JSON | None = None
    is_error: bool = False
    duration_ms: int | None = None
    summary: str | None = None


@strawberry.input
class ModelCallInput(ModelCallLineInput):
    task: strawberry.ID
    idempotency_key: str | None = None


@strawberry.input
class ToolCallInput(ToolCallLineInput):
    task: strawberry.ID
    idempotency_key: str | None = None


@strawberry.input
class ToolResultInput(ToolResultLineInput):
    task: strawberry.ID
    idempotency_key: str | None = None


@strawberry.input(one_of=True, description="One line of recordLines: exactly one of modelCall, toolCall, toolResult.")
class LineInput:
    model_call: ModelCallLineInput | None = strawberry.UNSET
    tool_call: ToolCallLineInput | None = strawberry.UNSET
    tool_result: ToolResultLineInput | None = strawberry.UNSET


def _python_names(cls: type) -> dict[str, str]:
    return {to_camel_case(f.python_name): f.python_name for f in cls.__strawberry_definition__.fields}


LINE_KINDS = {
    "modelCall": ("model_call", _python_names(ModelCallLineInput), ()),
    "toolCall": ("tool_call", _python_names(ToolCallLineInput), ("effect",)),
    "toolResult": ("tool_result", _python_names(ToolResultLineInput), ()),
}


def line_as_dict(value: Mapping[str, Any]) -> dict[str, Any]:
    line = {}
    for name, fields in value.items():
        if fields is not None:
            kind, names, enums = LINE_KINDS[name]
            line[kind] = converted = {names[k]: v for k, v in fields.items()}
            for field in enums:
                if isinstance(converted.get(field), Enum):
                    converted[field] = converted[field].value
    return line


@strawberry.input(description="Lines of one running task, recorded in order in one transaction (at most 1,000).")
class RecordLinesInput:
    task: strawberry.ID
    lines: list[LineInput]
    idempotency_key: str | None = None


def record_lines_as_dict(cls: type, value: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """RecordLinesInput as `plain` would give it, built straight from the value GraphQL has already checked.

    Strawberry would otherwise build an object per line and per kind, field by field, only for `plain` to
    take them apart again: in a batch of 1,000 lines that costs more than sealing the lines.
    """
    lines = [line_as_dict(line) for line in value["lines"]]
    return {"task": value["task"], "lines": lines, "idempotency_key": value.get("idempotencyKey")}


RecordLinesInput.__strawberry_definition__.from_input = record_lines_as_dict


def flat_as_dict(cls: type, value: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """A flat input as `plain` would give it, straight from the value GraphQL has already checked."""
    names = FLAT_NAMES[cls]
    return {names[k]: v.value if isinstance(v, Enum) else v for k, v in value.items()}


FLAT_NAMES = {cls: _python_names(cls) for cls in (ModelCallInput, ToolCallInput, ToolResultInput)}
for flat in FLAT_NAMES:
    flat.__strawberry_definition__.from_input = flat_as_dict
