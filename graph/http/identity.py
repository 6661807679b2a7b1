"""Every request's provider token finds the provider's keys already fetched: a fetch its `kid` calls for is made
here, in a worker thread, so reading the token (a plain function, `permissions/tokens.py`) never waits on the
network with the event loop held."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from permissions.tokens import keys_ready


class ProviderKeysReady:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            for name, value in scope["headers"]:
                if name == b"authorization":
                    await keys_ready(value.decode("latin-1"))
                    break
        await self.app(scope, receive, send)
