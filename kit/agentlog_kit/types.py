"""What the kit's calls take (keyword arguments: the snake_case forms of the GraphQL input fields) and answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NotRequired, Required, TypedDict


class PrincipalDict(TypedDict):
    id: str
    name: NotRequired[str | None]


Principal = str | PrincipalDict
"""A person or account: its id, or `{"id": …, "name": …}`."""

TaskStatus = Literal["DONE", "FAILED", "STOPPED"]


class TaskFields(TypedDict, total=False):
    """`StartTaskInput` besides agent, skill, actor, requester, given, parent and limit_micros."""

    skill_version: str
    cause: Literal["REQUEST", "CHAT", "WORKFLOW", "EVENT", "SCHEDULE", "SPAWN"]
    about: str
    trigger: str
    session: str
    workflow_run: str
    run_step: str
    entity_type: str
    entity_id: str
    instruction_set: int
    instructions_sent: str
    summary: str
    idempotency_key: str


class ModelCallFields(TypedDict, total=False):
    """`ModelCallLineInput`. `cost_micros` may be left out: the server prices the call from its price table."""

    input_tokens: Required[int]
    output_tokens: Required[int]
    cost_micros: int
    provider: str
    route_rule: str
    attempts: int
    duration_ms: int
    by_tool: str
    system_prompt: str
    messages: Any
    response: Any
    classification: str
    summary: str


class ToolCallFields(TypedDict, total=False):
    """`ToolCallLineInput` besides the tool."""

    tool_call_id: str
    input: Any
    effect: Literal["QUERY", "CHANGE"]
    summary: str


class ToolResultFields(TypedDict, total=False):
    """`ToolResultLineInput` besides the tool, its call id and output. Without `duration_ms`, the time since the
    tool call was made is sent."""

    is_error: bool
    duration_ms: int
    summary: str


class EndFields(TypedDict, total=False):
    outcome: str
    result: Any
    summary: str
    idempotency_key: str


class PriceFields(TypedDict, total=False):
    """`setModelPrice`'s input besides the model."""

    provider: str
    input_micros_per_million: Required[int]
    output_micros_per_million: Required[int]
    cached_input_micros_per_million: int
    effective_from: str
    idempotency_key: str


@dataclass(frozen=True)
class Agent:
    name: str
    purpose: str | None
    roles: list[str]
    transcript_readers: list[str]
    logging: str


@dataclass(frozen=True)
class Policies:
    supervises_agents: list[str]
    audits_agents: list[str]
    teaches_agents: list[str]
    reads_all_agent_work: list[str]
    erases_agent_records: list[str]


@dataclass(frozen=True)
class Webhook:
    """A webhook of the tenant: where its events are sent. `secret` (`whsec_…`) is given by `define_webhook` only:
    keep it where the receiver verifies each delivery's signature."""

    id: str
    url: str
    events: list[str]
    secret: str | None


@dataclass(frozen=True)
class Help:
    """A help request. Its question and answer are content, which a kit token does not read back."""

    id: str
    asked_at: str | None
    answered_at: str | None


@dataclass(frozen=True)
class ModelPrice:
    """A model's price per million tokens from `effective_from` on; `provider` None holds for any provider."""

    model: str
    provider: str | None
    input_micros_per_million: int
    output_micros_per_million: int
    cached_input_micros_per_million: int | None
    effective_from: str
