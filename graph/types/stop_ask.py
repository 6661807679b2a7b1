from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry

from graph.types.principal import Principal


@strawberry.type(description="A person's request that running work stop: who asked, why, when.")
class StopAsk:
    by: Principal
    reason: str
    at: datetime

    @classmethod
    def of(cls, stop: dict[str, Any] | None) -> StopAsk | None:
        if stop is None:
            return None
        by = stop["by"]
        return cls(by=Principal(id=by["id"], name=by.get("name")), reason=stop["reason"],
                   at=datetime.fromisoformat(stop["at"]))
