from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry

from graph.context import Info
from graph.guard import guarded
from graph.types.scalars import JSON
from permissions.table import Group
from resolvers.transcript import ToolUse, Turn

if TYPE_CHECKING:
    from graph.types.agent_task import AgentTask

F, C = Group.FIGURES, Group.CONTENT


@strawberry.type(description="One tool a turn invoked, with what it was given and answered.")
class AgentToolCall:
    name: str | None = guarded(F, "The tool as the model named it.")
    tool_call_id: str | None = guarded(F, "The id pairing the call with its result.")
    is_error: bool | None = guarded(F, "Whether the tool failed.")
    duration_ms: int | None = guarded(F, "The tool's own wall-clock time.")
    sequence: int = guarded(F, "Its order within the turn, from 1.")
    input: JSON | None = guarded(C, "The arguments the model generated.")
    output: JSON | None = guarded(C, "What the tool returned to the model.")


@strawberry.type(description="One model turn: what the model was shown and answered, and the tools it invoked.")
class AgentLlmTurn:
    turn_row: strawberry.Private[Turn]
    turn: int = guarded(F, "Which turn of its task this was, from 1; pairs with LlmCall.turn.")
    agent: str = guarded(F, "The agent whose turn it was.")
    model: str | None = guarded(F, "The model that answered.")
    at: datetime = guarded(F, "When the request went out.")
    content_withheld: bool = guarded(F, "True when the turn's content was never recorded or was erased.")
    withheld_reason: str | None = guarded(F, "METADATA_ONLY, RECORDING_OFF, REDACTED or ERASED.")
    system_prompt: str | None = guarded(C, "The instructions as the model received them.")
    messages: JSON | None = guarded(C, "The messages sent.")
    response: JSON | None = guarded(C, "What came back.")
    tools: list[AgentToolCall] = guarded(F, "What this turn invoked, in order.")

    @guarded(F, "The task the turn belongs to.")
    async def task(self, info: Info) -> Annotated["AgentTask", strawberry.lazy("graph.types.agent_task")] | None:
        from graph.types.agent_task import task_view

        return await task_view(info, self.turn_row.task)


def tool_view(use: ToolUse) -> AgentToolCall:
    return AgentToolCall(
        name=use.name,
        tool_call_id=use.tool_call_id,
        is_error=use.is_error,
        duration_ms=use.duration_ms,
        sequence=use.sequence,
        input=use.input,
        output=use.output,
    )


def turn_view(turn: Turn) -> AgentLlmTurn:
    return AgentLlmTurn(
        turn_row=turn,
        turn=turn.turn,
        agent=turn.task.agent,
        model=turn.model,
        at=turn.at,
        content_withheld=turn.withheld_reason is not None,
        withheld_reason=turn.withheld_reason,
        system_prompt=turn.system_prompt,
        messages=turn.messages,
        response=turn.response,
        tools=[tool_view(t) for t in turn.tools],
    )
