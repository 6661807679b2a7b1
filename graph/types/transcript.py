from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry

from graph.api.context import Info
from graph.api.guard import build, guarded
from graph.types.enums import WithheldReason
from graph.types.scalars import JSON
from permissions.access import Group
from resolvers.read.transcript import ToolUse, Turn

if TYPE_CHECKING:
    from graph.types.agent_task import AgentTask

F, T = Group.FIGURES, Group.TRANSCRIPT

TRANSCRIPT_GROUPS = frozenset({F, T})


@strawberry.type(description="One tool a turn invoked, with what it was given and answered.")
class AgentToolCall:
    groups: strawberry.Private[frozenset]
    name: str | None = guarded(F, "The tool as the model named it.")
    tool_call_id: str | None = guarded(F, "The id pairing the call with its result.")
    is_error: bool | None = guarded(F, "Whether the tool failed; null when no result came back.")
    duration_ms: int | None = guarded(F, "The tool's own wall-clock time.")
    sequence: int = guarded(F, "Its order within the turn, from 1.")
    input: JSON | None = guarded(T, "The arguments the model generated.")
    output: JSON | None = guarded(T, "What the tool returned to the model.")


@strawberry.type(description="One model turn: what the model was shown and answered, and the tools it invoked.")
class AgentLlmTurn:
    groups: strawberry.Private[frozenset]
    turn_row: strawberry.Private[Turn]
    turn: int = guarded(F, "Which turn of its task this was, from 1; pairs with LlmCall.turn.")
    agent: str = guarded(F, "The agent whose turn it was.")
    model: str | None = guarded(F, "The model that answered.")
    at: datetime = guarded(F, "When the request went out.")
    content_withheld: bool = guarded(F, "True when the turn's content was never stored or was erased.")
    withheld_reason: WithheldReason | None = guarded(F, "Why the content is missing; null when it is there.")
    system_prompt: str | None = guarded(T, "The instructions as the model received them.")
    messages: JSON | None = guarded(T, "The messages sent.")
    response: JSON | None = guarded(T, "What came back.")
    tools: list[AgentToolCall] = guarded(F, "What this turn invoked, in order; empty on a turn that only talked.")

    @guarded(F, "The task the turn belongs to.")
    async def task(self, info: Info) -> Annotated["AgentTask", strawberry.lazy("graph.types.agent_task")] | None:
        from graph.types.agent_task import task_view

        return await task_view(info, self.turn_row.task)


def tool_view(use: ToolUse) -> AgentToolCall:
    return build(
        AgentToolCall,
        TRANSCRIPT_GROUPS,
        name=use.name,
        tool_call_id=use.tool_call_id,
        is_error=use.is_error,
        duration_ms=use.duration_ms,
        sequence=use.sequence,
        input=use.input,
        output=use.output,
    )


def turn_view(turn: Turn) -> AgentLlmTurn:
    """A turn for a caller the transcript's gate let through: all of it, content included."""
    return build(
        AgentLlmTurn,
        TRANSCRIPT_GROUPS,
        turn_row=turn,
        turn=turn.turn,
        agent=turn.task.agent,
        model=turn.model,
        at=turn.at,
        content_withheld=turn.withheld_reason is not None,
        withheld_reason=WithheldReason(turn.withheld_reason) if turn.withheld_reason else None,
        system_prompt=turn.system_prompt,
        messages=turn.messages,
        response=turn.response,
        tools=[tool_view(t) for t in turn.tools],
    )
