import strawberry

from graph.types.enums import VerifyReason
from models.record.check import TraceCheck as Check


@strawberry.type(description="What walking a tree's chain found.")
class TraceCheck:
    intact: bool
    lines: int
    broken_at: int | None = strawberry.field(description="The first line (1-based) changed, removed, reordered or slipped in.")
    problem: str | None = strawberry.field(description="What is wrong there, in a sentence.")
    erased: int = strawberry.field(description="Lines whose sentence or content was erased.")
    reason: VerifyReason | None = strawberry.field(
        description="What is wrong there, in one word from a closed set; the offline verifier gives the same for the "
        "same fault. Null when intact."
    )

    @classmethod
    def of(cls, check: Check) -> "TraceCheck":
        return cls(
            intact=check.intact, lines=check.lines, broken_at=check.broken_at, problem=check.problem,
            erased=check.erased, reason=check.reason,
        )
