"""Where the tenant's ledger lives (SPEC 9.3): the one root task, agent `agentlog` and skill `configuration`, whose
chain records every change to who may read or do what, and to what is kept.

Its id is derived from the tenant, so the first change of each tenant makes it once however many changes race, and
every reader finds it by id without a lookup or a stored pointer.
"""

from __future__ import annotations

import uuid
from functools import lru_cache

AGENT = "agentlog"
SKILL = "configuration"
NAMESPACE = uuid.UUID("3f0c2a54-7f27-5b8e-9d52-6c1e0a8b4f17")


@lru_cache(maxsize=4096)
def ledger_id(tenant: str) -> uuid.UUID:
    """The id of the tenant's ledger root."""
    return uuid.uuid5(NAMESPACE, tenant)


def is_ledger(tenant: str, root_id: uuid.UUID | str) -> bool:
    """Whether a tree of this tenant, named by its root's id, is the tenant's ledger."""
    return str(root_id) == str(ledger_id(tenant))
