from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a person (or a kit) of one tenant, with roles. The same sub in two tenants is two people."""

    sub: str
    tenant: str
    name: str | None = None
    roles: frozenset[str] = frozenset()
    kit: bool = False
