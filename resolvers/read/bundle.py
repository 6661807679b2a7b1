"""An incident bundle (SPEC 9.3): one agentlog-bundle/v1 file holding, for each named tree, its export as the caller
may read it, then the tenant's ledger's export; each export's header carries the tree's latest signed checkpoint.

The format is written out in `models/record/bundle_check.py`, which checks it offline. Each part is streamed by
the export's own code (`export.py`), a page of lines at a time from a snapshot of its own, so a bundle of any size
is written in memory that does not grow with it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

import orjson

from models.ledger import ledger_id
from models.record.bundle_check import FORMAT, LEDGER, TREE
from models.record.chain import rfc3339
from permissions.access import Access
from resolvers.read.export import Export, export_all, export_for
from resolvers.read.rows_seen import parse_id


@dataclass(frozen=True)
class Bundle:
    tenant: str
    trees: tuple[Export, ...]
    ledger: Export | None

    async def lines(self) -> AsyncIterator[bytes]:
        yield orjson.dumps({
            "format": FORMAT, "tenant": self.tenant, "trees": [str(tree.root_id) for tree in self.trees],
            "ledger": str(self.ledger.root_id) if self.ledger else None,
            "exportedAt": rfc3339(datetime.now(timezone.utc)),
        }) + b"\n"
        for kind, part in [(TREE, tree) for tree in self.trees] + ([(LEDGER, self.ledger)] if self.ledger else []):
            yield orjson.dumps({"part": kind, "root": str(part.root_id)}) + b"\n"
            async for chunk in part.lines():
                yield chunk


class NotReadable(Exception):
    """A named task does not exist for the caller: the whole bundle answers as not found."""

    def __init__(self, task: str) -> None:
        super().__init__(task)
        self.task = task


def _distinct(exports: Iterable[Export]) -> tuple[Export, ...]:
    return tuple({export.root_id: export for export in exports}.values())


async def bundle_for(access: Access, tasks: list[str]) -> Bundle:
    """The bundle of the named tasks' trees as the caller may read them, with the ledger when they may read it;
    NotReadable names the first task that does not exist for them (another tenant's, or one they may not read)."""
    trees = []
    for task in tasks:
        found = await export_for(access, task)
        if found is None:
            raise NotReadable(task)
        trees.append(found)
    tenant = access.principal.tenant
    ledger = await export_for(access, str(ledger_id(tenant)))
    return Bundle(tenant, _distinct(t for t in trees if t.root_id != ledger_id(tenant)), ledger)


async def bundle_all(tasks: list[str]) -> Bundle:
    """The bundle with everything in it, for the operator's command line; the tasks must be of one tenant."""
    trees = []
    for task in tasks:
        tid = parse_id(task)
        found = await export_all(tid) if tid is not None else None
        if found is None:
            raise NotReadable(task)
        trees.append(found)
    tenants = {tree.tenant for tree in trees}
    if len(tenants) != 1:
        raise ValueError("The tasks of a bundle are of one tenant; these are of " + ", ".join(sorted(tenants)) + ".")
    tenant = tenants.pop()
    ledger = await export_all(ledger_id(tenant))
    return Bundle(tenant, _distinct(t for t in trees if t.root_id != ledger_id(tenant)), ledger)

