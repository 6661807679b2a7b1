"""Why content is not stored: the agent's logging, the server's setting, or the call's classification."""

from __future__ import annotations

from models import RegisteredAgent
from resolvers import settings


def withheld_reason(agent: RegisteredAgent | None, classification: str | None = None) -> str | None:
    """Why content is not stored, or None when it is."""
    if agent is not None and agent.logging == "METADATA_ONLY":
        return "METADATA_ONLY"
    if not settings.record_content():
        return "RECORDING_OFF"
    if classification is not None and classification.upper() == "REDACTED":
        return "REDACTED"
    return None
