"""Signing each tree's new head, in the append's own transaction, never going back.

The database keeps the latest note per tree, and refuses (no row returned) a size not larger than the one
kept: so neither a smaller size nor the same size with another head is ever signed, whatever the writers do.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from models import AgentTask, SignedCheckpoint
from models.errors import CheckpointRefused
from models.record.note import Checkpoint, origin_of, sign
from resolvers.write.signing import signer

KEEP = (
    'INSERT INTO "checkpoint" ("root_id", "tenant", "size", "head", "note") VALUES ($1, $2, $3, $4, $5) '
    'ON CONFLICT ("root_id", "tenant") DO UPDATE SET "size" = excluded."size", "head" = excluded."head", '
    '"note" = excluded."note" WHERE "checkpoint"."size" < excluded."size" RETURNING "size"'
)
KEEP_SQL = {"postgres": KEEP, "sqlite": re.sub(r"\$\d+", "?", KEEP)}


def note_for(tenant: str, root_id: str, size: int, head: str) -> str:
    return sign(Checkpoint(origin_of(tenant, root_id), size, head).body, signer())


def refused(root_id: str, size: int, head: str) -> CheckpointRefused:
    """What a KEEP that returned no row means."""
    return CheckpointRefused(f"Tree {root_id} has a checkpoint at least {size} lines long; {head} is not signed.")


async def keep_checkpoint(tenant: str, root_id: str, size: int, head: str, conn: Any) -> str:
    """Signs (size, head) for the tree and keeps it, on the transaction's connection."""
    note = note_for(tenant, root_id, size, head)
    rows = await conn.execute_query_dict(KEEP_SQL[conn.capabilities.dialect], [root_id, tenant, size, head, note])
    if not rows:
        raise refused(root_id, size, head)
    return note


async def sign_head(root: AgentTask, conn: Any) -> str:
    return await keep_checkpoint(root.tenant, str(root.id), root.chain_length, root.chain_head, conn)


async def latest(tenant: str, root_ids: list[uuid.UUID]) -> dict[uuid.UUID, str]:
    """Each tree's latest signed note, by root id, in the tenant."""
    rows = await SignedCheckpoint.filter(tenant=tenant, root_id__in=list(root_ids)).values_list("root_id", "note")
    return {uuid.UUID(str(root_id)): note for root_id, note in rows}
