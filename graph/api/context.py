"""The per-request context: who is calling, what they may read, the settings of the app answering, and the
request's loaders."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from strawberry.types import Info as StrawberryInfo

from graph.api.loaders import Loaders
from graph.http.request_log import request_id
from permissions.access import Access
from permissions.principal import Principal
from models.errors import AgentlogError, Unauthenticated
from models.settings import Settings, current


@dataclass
class Context:
    request: Any
    response: Any
    principal: Principal | None
    auth_error: AgentlogError | None = None
    request_id: str = field(default_factory=request_id)
    connection_params: dict[str, Any] | None = None
    expires_at: datetime | None = None
    settings: Settings = field(default_factory=current)

    def __post_init__(self) -> None:
        self.access = Access(self.principal)
        self.loaders = Loaders(self.principal.tenant if self.principal else "")

    def caller(self) -> Principal:
        """The caller, or UNAUTHENTICATED when the token is missing or bad."""
        if self.auth_error is not None:
            raise self.auth_error
        if self.principal is None:
            raise Unauthenticated("A bearer token is required.")
        return self.principal

    def writer(self) -> Principal | None:
        if self.auth_error is not None:
            raise self.auth_error
        return self.principal


Info = StrawberryInfo[Context, None]
