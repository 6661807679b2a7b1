from enum import Enum

import strawberry

from models.record import vocabulary
from resolvers.read import usage

TaskStatus = strawberry.enum(vocabulary.TaskStatus, description="How a piece of work stands.")
TraceKind = strawberry.enum(vocabulary.LineKind, name="TraceKind", description="What a line of the record tells.")
ReviewVerdict = strawberry.enum(vocabulary.ReviewVerdict, description="What a review found of a piece of work.")
WithheldReason = strawberry.enum(vocabulary.WithheldReason, description="Why a turn's content is missing.")
VerifyReason = strawberry.enum(
    vocabulary.VerifyReason, description="Why a chain check failed: the first fault found, in one word."
)


@strawberry.enum(description="What set a piece of work going.")
class TaskCause(Enum):
    REQUEST = "REQUEST"
    CHAT = "CHAT"
    WORKFLOW = "WORKFLOW"
    EVENT = "EVENT"
    SCHEDULE = "SCHEDULE"
    SPAWN = "SPAWN"


@strawberry.enum(description="Why a line's content is or is not shown; the first that applies wins.")
class ContentAccess(Enum):
    ERASED = "ERASED"
    WITHHELD = "WITHHELD"
    DENIED = "DENIED"
    SHOWN = "SHOWN"


@strawberry.enum(description="A group of fields read together, as the access table names them.")
class FieldGroup(Enum):
    FIGURES = "FIGURES"
    WORDS = "WORDS"
    SENTENCES = "SENTENCES"
    CONTENT = "CONTENT"


@strawberry.enum(description="What an agent's work records: everything, or no content.")
class AgentLogging(Enum):
    FULL = "FULL"
    METADATA_ONLY = "METADATA_ONLY"


@strawberry.enum(description="Whether a tool only reads or changes data.")
class ToolEffect(Enum):
    QUERY = "QUERY"
    CHANGE = "CHANGE"


@strawberry.enum(description="Where a model call's cost came from.")
class CostSource(Enum):
    KIT = "KIT"
    PRICE_TABLE = "PRICE_TABLE"
    UNPRICED = "UNPRICED"
UsageBucket = strawberry.enum(usage.UsageBucket, description="How long one point of usage covers, in UTC.")
UsageGroup = strawberry.enum(usage.UsageGroup, description="What usage is summed by.")
