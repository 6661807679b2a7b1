from __future__ import annotations

import strawberry

from graph.api.context import Info
from graph.api.inputs import StopTaskInput, plain
from graph.types.agent_task import AgentTask, task_view
from resolvers.control import stop

WHO = "Requires supervisesAgents, or who asked for the work; never the kit."


@strawberry.type
class StopMutation:
    @strawberry.mutation(
        description="Asks running work to stop: a STOP_ASKED line naming who and why. Every later kit write to the "
        "task or below it answers extensions.stopAsked. A task asked to stop already is answered as it stands. "
        f"{WHO}"
    )
    async def stop_task(self, info: Info, input: StopTaskInput) -> AgentTask | None:
        info.context.writer()
        return await task_view(info, await stop.stop_task(info.context.access, plain(input)))
