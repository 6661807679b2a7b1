from __future__ import annotations

import strawberry

from graph.api.context import Info
from graph.api.inputs import HoldInput, ReviewInput, plain
from graph.types.agent_task import AgentTask, task_view
from graph.types.review import Review
from permissions.access import Access
from resolvers.answer import holds, reviews

HOLDERS = "Requires a person holding a role the holdsRecords policy names."
REVIEWERS = "Requires a person who may read the task's sentences; never the kit."


def _access(info: Info) -> Access:
    info.context.writer()
    return info.context.access


@strawberry.type
class AnswerMutation:
    @strawberry.mutation(
        description="A person's verdict on a task that has ended: a REVIEWED line after its ENDED line, naming them "
        f"by the identity in their token. {REVIEWERS}"
    )
    async def review_task(self, info: Info, input: ReviewInput) -> Review | None:
        return Review.of(await reviews.review_task(_access(info), plain(input)))

    @strawberry.mutation(
        description="Holds the task's whole tree: a HELD line on its root naming who and why. While held, no "
        f"erasure and no retention sweep touches it. {HOLDERS}"
    )
    async def hold_work(self, info: Info, input: HoldInput) -> AgentTask | None:
        return await task_view(info, await holds.hold_work(_access(info), plain(input)))

    @strawberry.mutation(
        description=f"Releases the hold on the task's tree: a RELEASED line on its root naming who and why. {HOLDERS}"
    )
    async def release_hold(self, info: Info, input: HoldInput) -> AgentTask | None:
        return await task_view(info, await holds.release_hold(_access(info), plain(input)))
