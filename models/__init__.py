"""The bottom floor: the stored rows (tortoise models), where the data lives (`db.py`, and `hosts.py` for a
PostgreSQL URL naming a primary and its standbys), the expected refusals (`errors.py`), and the pure record in
`record/`. The rows are imported when first named, so the pure record loads without the ORM: `agentlog verify
--file` starts in a fraction of the time. It imports nothing above it."""

from importlib import import_module

MODULES = {
    "AgentHelp": "models.help",
    "AgentTask": "models.task",
    "ErasureRecord": "models.erasure",
    "IdempotencyKey": "models.idempotency",
    "LlmCall": "models.llm_call",
    "ModelPrice": "models.model_price",
    "OtlpPlacedSpan": "models.otlp_placed_span",
    "OtlpSpan": "models.otlp_span",
    "RegisteredAgent": "models.agent",
    "SignedCheckpoint": "models.checkpoint",
    "TenantPolicies": "models.policies",
    "TraceEvent": "models.trace_event",
}

__all__ = sorted(MODULES)


def __getattr__(name: str) -> object:
    module = MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'models' has no attribute {name!r}")
    found = getattr(import_module(module), name)
    globals()[name] = found
    return found
