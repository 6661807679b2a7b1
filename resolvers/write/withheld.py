"""Why content is not stored: the agent's logging, the server's setting, or the call's classification."""

from __future__ import annotations

from models import settings
from models.record.vocabulary import WithheldReason


def withheld_reason(logging: str | None, classification: str | None = None) -> WithheldReason | None:
    """Why content is not stored, or None when it is."""
    if logging == WithheldReason.METADATA_ONLY:
        return WithheldReason.METADATA_ONLY
    if not settings.record_content():
        return WithheldReason.RECORDING_OFF
    if classification is not None and classification.upper() == WithheldReason.REDACTED:
        return WithheldReason.REDACTED
    return None
