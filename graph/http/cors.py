"""Pages on other origins (AGENTLOG_CORS_ORIGINS) may call /graphql, /export/* and /v1/traces, through Starlette's
CORSMiddleware: preflights answered, the Authorization header allowed, credentials (cookies) never, since a
bearer token is the only credential here. Every other route stays same-origin."""

from __future__ import annotations

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

PATHS = ("/graphql", "/v1/traces")
PREFIXES = ("/export/",)


def shared(path: str) -> bool:
    return path in PATHS or path.startswith(PREFIXES)


class CrossOrigin:
    def __init__(self, app: ASGIApp, origins: list[str]) -> None:
        self.app = app
        self.cors = CORSMiddleware(
            app,
            allow_origins=origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "Accept"],
            allow_credentials=False,
            expose_headers=["Retry-After"],
            max_age=600,
        )
        self.origins = origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.origins and scope["type"] == "http" and shared(scope["path"]):
            await self.cors(scope, receive, send)
        else:
            await self.app(scope, receive, send)
