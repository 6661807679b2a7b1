"""Why content is not stored: the agent's logging, the server's setting, or the call's classification."""

from __future__ import annotations

from typing import Any

from models.db import placeholders
from models.vocabulary import WithheldReason
from resolvers import settings

AGENT_LOGGING = 'SELECT "logging" FROM "agent" WHERE "tenant" = $1 AND "name" = $2'


async def agent_logging(tenant: str, agent: str, conn: Any) -> str | None:
    """The agent's logging mode, read on every append, so written out."""
    rows = await conn.execute_query_dict(placeholders(conn, AGENT_LOGGING), [tenant, agent])
    return rows[0]["logging"] if rows else None


def withheld_reason(logging: str | None, classification: str | None = None) -> WithheldReason | None:
    """Why content is not stored, or None when it is."""
    if logging == WithheldReason.METADATA_ONLY:
        return WithheldReason.METADATA_ONLY
    if not settings.record_content():
        return WithheldReason.RECORDING_OFF
    if classification is not None and classification.upper() == WithheldReason.REDACTED:
        return WithheldReason.REDACTED
    return None
