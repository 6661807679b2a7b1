"""The bottom floor: the stored rows (tortoise models, in `rows/`), where the data lives (`db.py`, and `hosts.py`
for a PostgreSQL URL naming a primary and its standbys), the expected refusals (`errors.py`), the settings read
once at start (`settings.py`) and the trusted documents' file they may name (`documents.py`), where the tenant's
ledger lives (`ledger.py`), and the pure record in `record/`. The rows are imported when first named, so the pure
record loads without the ORM: `agentlog verify --file` starts in a fraction of the time. It imports nothing above
it."""

from importlib import import_module

MODULES = {
    "AgentHelp": "models.rows.help",
    "AgentTask": "models.rows.task",
    "ErasureRecord": "models.rows.erasure",
    "IdempotencyKey": "models.rows.idempotency",
    "LlmCall": "models.rows.llm_call",
    "ModelPrice": "models.rows.model_price",
    "OtlpOpenTask": "models.rows.otlp_open_task",
    "OtlpPlacedSpan": "models.rows.otlp_placed_span",
    "OtlpSpan": "models.rows.otlp_span",
    "Review": "models.rows.review",
    "RegisteredAgent": "models.rows.agent",
    "SignedCheckpoint": "models.rows.checkpoint",
    "TenantPolicies": "models.rows.policies",
    "TraceEvent": "models.rows.trace_event",
    "Webhook": "models.rows.webhooks.webhook",
    "WebhookDelivery": "models.rows.webhooks.delivery",
    "WorkHold": "models.rows.hold",
}

__all__ = sorted(MODULES)


def __getattr__(name: str) -> object:
    module = MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'models' has no attribute {name!r}")
    found = getattr(import_module(module), name)
    globals()[name] = found
    return found
