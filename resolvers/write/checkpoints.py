"""Signing each tree's new head, in the append's own transaction, never going back.

The database keeps the latest note per tree, and refuses (no row returned) a size not larger than the one
kept: so neither a smaller size nor the same size with another head is ever signed, whatever the writers do.
"""

from __future__ import annotations

import uuid
from typing import Any

from models import AgentTask, SignedCheckpoint
from models.errors import CheckpointRefused
from models.record.note import Checkpoint, origin_of, sign
from models.db import placeholders
from resolvers.control import budgets
from resolvers.write.signing import signer

KEEP = (
    'INSERT INTO "checkpoint" ("root_id", "tenant", "size", "head", "note") VALUES ($1, $2, $3, $4, $5) '
    'ON CONFLICT ("root_id", "tenant") DO UPDATE SET "size" = excluded."size", "head" = excluded."head", '
    '"note" = excluded."note" WHERE "checkpoint"."size" < excluded."size" RETURNING "size"'
)


def note_for(tenant: str, root_id: str, size: int, head: str) -> str:
    return sign(Checkpoint(origin_of(tenant, root_id), size, head).body, signer())


def refused(root_id: str, size: int, head: str) -> CheckpointRefused:
    """What a KEEP that returned no row means."""
    return CheckpointRefused(f"Tree {root_id} has a checkpoint at least {size} lines long; {head} is not signed.")


async def keep_checkpoint(tenant: str, root_id: str, size: int, head: str, conn: Any,
                          spend: budgets.Spend | None = None) -> str:
    """Signs (size, head) for the tree and keeps it, on the transaction's connection; given `spend`, the same
    statement reads what each of its budgets has spent, the write's meter rows included."""
    note = note_for(tenant, root_id, size, head)
    dialect = conn.capabilities.dialect
    sql, args = KEEP, [root_id, tenant, size, head, note]
    if spend is not None:
        sql += budgets.spent_returning(dialect, len(spend.budgets), len(args) + 1)
        args += budgets.spent_args(dialect, tenant, spend)
    rows = await conn.execute_query_dict(placeholders(conn, sql), args)
    if not rows:
        raise refused(root_id, size, head)
    if spend is not None:
        budgets.read_spent(spend, rows[0], counted=True)
    return note


async def sign_head(root: AgentTask, conn: Any, spend: budgets.Spend | None = None) -> str:
    return await keep_checkpoint(root.tenant, str(root.id), root.chain_length, root.chain_head, conn, spend)


async def latest(tenant: str, root_ids: list[uuid.UUID]) -> dict[uuid.UUID, str]:
    """Each tree's latest signed note, by root id, in the tenant."""
    rows = await SignedCheckpoint.filter(tenant=tenant, root_id__in=list(root_ids)).values_list("root_id", "note")
    return {uuid.UUID(str(root_id)): note for root_id, note in rows}
