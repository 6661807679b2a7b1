"""Every request, websocket and the lifespan run under the settings of the app serving them, so that code deep below
reads those (`models.settings.current()`), never the environment."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from models.settings import using


class Configured:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        with using(scope["app"].state.settings):
            await self.app(scope, receive, send)
