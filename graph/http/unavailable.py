"""Any route whose database went away while it answered says 503 UNAVAILABLE with Retry-After, not 500."""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graph.api.errors import UNAVAILABLE
from graph.http.errors import RETRY_AFTER, error_response
from models.availability import database_unavailable

log = logging.getLogger("agentlog.errors")


class Watched:
    """A `send` that remembers whether the response has begun: past that, nothing may answer in its place."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False

    async def __call__(self, message: Message) -> None:
        self.started = self.started or message["type"] == "http.response.start"
        await self.send(message)


class Unavailable:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        watched = Watched(send)
        try:
            await self.app(scope, receive, watched)
        except Exception as exc:
            if watched.started or not database_unavailable(exc):
                raise
            log.warning("%s %s: the database cannot be reached: %s", scope["method"], scope["path"], exc)
            await error_response(503, UNAVAILABLE, headers=RETRY_AFTER)(scope, receive, send)
