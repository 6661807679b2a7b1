"""agentlog-kit: record AI agents' work in agentlog — receipts, batched lines, retries — over its GraphQL API."""

from agentlog_kit.async_kit import AsyncKit
from agentlog_kit.async_task import AsyncTask, AsyncTaskScope, AsyncToolCall
from agentlog_kit.errors import (
    AgentlogError,
    Answered,
    BadInput,
    BudgetExceeded,
    BudgetWarning,
    Conflict,
    Forbidden,
    Internal,
    NotFound,
    StopAsked,
    Unauthenticated,
    Unavailable,
    WorkRunning,
)
from agentlog_kit.sync_kit import Kit, Task, TaskScope, ToolCall
from agentlog_kit.types import (
    Agent,
    EndFields,
    Help,
    ModelCallFields,
    ModelPrice,
    Policies,
    PriceFields,
    Principal,
    PrincipalDict,
    TaskFields,
    TaskStatus,
    ToolCallFields,
    ToolResultFields,
    Webhook,
)
from agentlog_kit.wire import Retry

__all__ = [
    "Agent", "AgentlogError", "Answered", "AsyncKit", "AsyncTask", "AsyncTaskScope", "AsyncToolCall", "BadInput",
    "BudgetExceeded", "BudgetWarning", "Conflict", "EndFields", "Forbidden", "Help", "Internal", "Kit",
    "ModelCallFields", "ModelPrice", "NotFound", "Policies", "PriceFields", "Principal", "PrincipalDict", "Retry",
    "StopAsked", "Task", "TaskFields", "TaskScope", "TaskStatus", "ToolCall", "ToolCallFields", "ToolResultFields",
    "Unauthenticated", "Unavailable", "Webhook", "WorkRunning",
]
