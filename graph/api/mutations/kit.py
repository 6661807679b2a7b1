from __future__ import annotations

import strawberry

from graph.api.context import Info
from graph.api.inputs import (
    AskForHelpInput,
    EndTaskInput,
    ModelCallInput,
    PoliciesInput,
    RegisterAgentInput,
    StartTaskInput,
    ToolCallInput,
    ToolResultInput,
    SendBackInput,
    plain,
)
from graph.types.agent import Agent
from graph.types.agent_help import AgentHelp, help_view
from graph.types.agent_task import AgentTask, line_views, task_view
from graph.types.policies import Policies
from graph.types.trace_event import TraceEvent
from resolvers.write import kit


async def _line(info: Info, event) -> TraceEvent:
    groups = await info.context.access.writer_groups()
    return line_views(info, [event], lambda _: groups)[0]


@strawberry.type
class KitMutation:
    @strawberry.mutation(description="Kit only. Registers (or updates) an agent of the tenant.")
    async def register_agent(self, info: Info, input: RegisterAgentInput) -> Agent:
        return Agent.of(await kit.register_agent(info.context.writer(), plain(input)))

    @strawberry.mutation(description="Kit only. Replaces the capability lists it is given and keeps the others.")
    async def define_policies(self, info: Info, input: PoliciesInput) -> Policies:
        return Policies.of(await kit.define_policies(info.context.writer(), plain(input)))

    @strawberry.mutation(description="Kit only. Starts a piece of work (a STARTED line).")
    async def start_task(self, info: Info, input: StartTaskInput) -> AgentTask:
        return await task_view(info, await kit.start_task(info.context.writer(), plain(input)))

    @strawberry.mutation(description="Kit only. Records a model call: a MODEL_CALL line and its meter row, in one transaction.")
    async def record_model_call(self, info: Info, input: ModelCallInput) -> TraceEvent:
        return await _line(info, await kit.record_model_call(info.context.writer(), plain(input)))

    @strawberry.mutation(description="Kit only. Records a tool call (a TOOL_CALL line).")
    async def record_tool_call(self, info: Info, input: ToolCallInput) -> TraceEvent:
        return await _line(info, await kit.record_tool_call(info.context.writer(), plain(input)))

    @strawberry.mutation(description="Kit only. Records a tool's result (a TOOL_RESULT line).")
    async def record_tool_result(self, info: Info, input: ToolResultInput) -> TraceEvent:
        return await _line(info, await kit.record_tool_result(info.context.writer(), plain(input)))

    @strawberry.mutation(description="Kit only. Asks a person for help, inside a piece of work (a line) or outside any.")
    async def ask_for_help(self, info: Info, input: AskForHelpInput) -> AgentHelp:
        return await help_view(info, await kit.ask_for_help(info.context.writer(), plain(input)))

    @strawberry.mutation(description="Kit only. Records the answer to a help request (a SENT_BACK line inside work).")
    async def send_back(self, info: Info, input: SendBackInput) -> AgentHelp:
        return await help_view(info, await kit.send_back(info.context.writer(), plain(input)))

    @strawberry.mutation(description="Kit only. Ends a piece of work DONE, FAILED or STOPPED (an ENDED line).")
    async def end_task(self, info: Info, input: EndTaskInput) -> AgentTask:
        return await task_view(info, await kit.end_task(info.context.writer(), plain(input)))
