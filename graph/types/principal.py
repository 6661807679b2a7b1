from __future__ import annotations

import strawberry


@strawberry.type(description="A person or account, as the kit named it.")
class Principal:
    id: str
    name: str | None

    @classmethod
    def of(cls, id: str | None, name: str | None) -> "Principal | None":
        return cls(id=id, name=name) if id is not None else None
