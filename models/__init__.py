from models.agent import RegisteredAgent
from models.checkpoint import SignedCheckpoint
from models.erasure import ErasureRecord
from models.help import AgentHelp
from models.idempotency import IdempotencyKey
from models.llm_call import LlmCall
from models.model_price import ModelPrice
from models.otlp_placed_span import OtlpPlacedSpan
from models.otlp_span import OtlpSpan
from models.policies import TenantPolicies
from models.task import AgentTask
from models.trace_event import TraceEvent

__all__ = [
    "AgentHelp",
    "AgentTask",
    "ErasureRecord",
    "IdempotencyKey",
    "LlmCall",
    "ModelPrice",
    "OtlpPlacedSpan",
    "OtlpSpan",
    "RegisteredAgent",
    "SignedCheckpoint",
    "TenantPolicies",
    "TraceEvent",
]
