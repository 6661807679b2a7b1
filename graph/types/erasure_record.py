from __future__ import annotations

from datetime import datetime
from enum import Enum

import strawberry

import models
from graph.types.principal import Principal
from permissions.access import ERASURE_LOG_READERS_NAMED


@strawberry.enum(description="Which erasure an entry of the erasure log records, named after its mutation.")
class ErasureKind(Enum):
    ERASE_AGENT_WORK_CONTENT = "ERASE_AGENT_WORK_CONTENT"
    ANONYMISE_AGENT_WORK = "ANONYMISE_AGENT_WORK"
    FORGET_AGENT_WORK = "FORGET_AGENT_WORK"
    ERASE_AGENT_HELP = "ERASE_AGENT_HELP"


LOG_READERS = ERASURE_LOG_READERS_NAMED


@strawberry.type(description=f"One entry of the erasure log: who erased what, when, why. Readable by: {LOG_READERS}.")
class ErasureRecord:
    id: strawberry.ID
    kind: ErasureKind
    task_id: strawberry.ID | None = strawberry.field(
        description="The task named; after forgetting it no longer exists."
    )
    root_id: strawberry.ID | None = strawberry.field(description="The root of the tree erased.")
    help_id: strawberry.ID | None = strawberry.field(description="The help request erased, for eraseAgentHelp.")
    why: str | None = strawberry.field(description="The reason given; forgetAgentWork takes none.")
    by: Principal
    at: datetime
    lines: int = strawberry.field(
        description="Lines whose content was erased, whose sentence was erased, or that were deleted, by kind."
    )

    @classmethod
    def of(cls, row: models.ErasureRecord) -> "ErasureRecord":
        return cls(
            id=strawberry.ID(str(row.id)),
            kind=ErasureKind(row.kind),
            task_id=_id(row.task_id),
            root_id=_id(row.root_id),
            help_id=_id(row.help_id),
            why=row.why,
            by=Principal(id=row.by_id, name=row.by_name),
            at=row.at,
            lines=row.lines,
        )


def _id(value: object | None) -> strawberry.ID | None:
    return strawberry.ID(str(value)) if value is not None else None
