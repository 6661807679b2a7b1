from __future__ import annotations

from datetime import datetime

import strawberry

import models
from graph.types.principal import Principal


@strawberry.type(description="A legal hold on a work tree: while it lasts, no erasure and no retention sweep touches it.")
class Hold:
    by: Principal
    reason: str
    at: datetime

    @classmethod
    def of(cls, row: models.WorkHold) -> Hold:
        return cls(by=Principal(id=row.by_id, name=row.by_name), reason=row.reason, at=row.at)
