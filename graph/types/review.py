from __future__ import annotations

from datetime import datetime

import strawberry

import models
from graph.types.enums import ReviewVerdict
from graph.types.principal import Principal


@strawberry.type(description="A verdict on a piece of work: who checked it, what they found, when.")
class Review:
    by: Principal = strawberry.field(description="Who reviewed it, by the identity in their token; the kit for an "
                                     "evaluator's result sent over OTLP.")
    verdict: ReviewVerdict
    score: float | None
    note: str | None
    at: datetime
    evaluator: str | None = strawberry.field(description="The evaluator that gave this result, when not a person.")

    @classmethod
    def of(cls, row: models.Review) -> Review:
        return cls(by=Principal(id=row.by_id, name=row.by_name), verdict=ReviewVerdict(row.verdict), score=row.score,
                   note=row.note, at=row.at, evaluator=row.evaluator)
