from enum import Enum

import strawberry


@strawberry.enum(description="How a piece of work stands.")
class TaskStatus(Enum):
    RUNNING = "RUNNING"
    DONE = "DONE"
    FAILED = "FAILED"
    STOPPED = "STOPPED"


@strawberry.enum(description="What set a piece of work going.")
class TaskCause(Enum):
    REQUEST = "REQUEST"
    CHAT = "CHAT"
    WORKFLOW = "WORKFLOW"
    EVENT = "EVENT"
    SCHEDULE = "SCHEDULE"
    SPAWN = "SPAWN"


@strawberry.enum(description="What a line of the record tells.")
class TraceKind(Enum):
    STARTED = "STARTED"
    MODEL_CALL = "MODEL_CALL"
    TOOL_CALL = "TOOL_CALL"
    TOOL_RESULT = "TOOL_RESULT"
    ASKED_FOR_HELP = "ASKED_FOR_HELP"
    SENT_BACK = "SENT_BACK"
    ENDED = "ENDED"
    ERASED = "ERASED"


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
