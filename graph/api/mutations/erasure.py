from __future__ import annotations

import strawberry

from graph.api.context import Info
from graph.types.erasure_record import LOG_READERS, ErasureRecord
from permissions.access import ERASERS_NAMED, Access
from resolvers.forget import erasure

REQUIRES = f"Requires {ERASERS_NAMED}."
WHO = f"{REQUIRES} Refused while any task of the tree runs."


def _access(info: Info) -> Access:
    info.context.writer()
    return info.context.access


@strawberry.type
class ErasureMutation:
    @strawberry.mutation(
        description="Erases the content of the whole tree the task belongs to: every line's content and salt, help "
        f"questions and answers, given, result, instructionsSent. Returns the lines whose content was erased. {WHO}"
    )
    async def erase_agent_work_content(self, info: Info, task: strawberry.ID, why: str) -> int:
        return await erasure.erase_work_content(_access(info), task, why)

    @strawberry.mutation(
        description="Erases the content and the person from the whole tree the task belongs to: requester, about, "
        "trigger, outcome, entityId, help people, and every line's sentence and its salt. Returns the lines whose "
        f"sentence was erased. {WHO}"
    )
    async def anonymise_agent_work(self, info: Info, task: strawberry.ID, why: str) -> int:
        return await erasure.anonymise_work(_access(info), task, why)

    @strawberry.mutation(
        description="Deletes the whole tree the task belongs to: receipts, lines, help. Its meter rows are detached, "
        f"not deleted. Returns the receipts deleted. {WHO}"
    )
    async def forget_agent_work(self, info: Info, task: strawberry.ID) -> int:
        return await erasure.forget_work(_access(info), task)

    @strawberry.mutation(
        description="Erases one help request asked outside any work: its question, answer and people; help asked "
        f"inside work is erased with that work. {REQUIRES}"
    )
    async def erase_agent_help(self, info: Info, help: strawberry.ID, why: str) -> bool:
        return await erasure.erase_help(_access(info), help, why)


@strawberry.type
class ErasureQuery:
    @strawberry.field(
        description=f"The erasure log, newest first; first is at most 500. Read by {LOG_READERS}; "
        "empty for anyone else."
    )
    async def erasures(self, info: Info, first: int = 50) -> list[ErasureRecord]:
        return [ErasureRecord.of(row) for row in await erasure.erasure_log(info.context.access, first)]
