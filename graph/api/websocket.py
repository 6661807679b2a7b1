"""graphql-transport-ws messages as JSON text frames: the protocol's messages are text, and the clients frontends
use (`graphql-ws`, Python's `gql`) refuse a binary frame. Answers over HTTP stay UTF-8 bytes."""

from __future__ import annotations

from collections.abc import Mapping

from starlette.websockets import WebSocketDisconnect
from strawberry.asgi import ASGIWebSocketAdapter
from strawberry.http.exceptions import WebSocketDisconnected


class TextFrames(ASGIWebSocketAdapter):
    async def send_json(self, message: Mapping[str, object]) -> None:
        try:
            await self.ws.send_text(self.view.encode_json_string(message))
        except WebSocketDisconnect as exc:
            raise WebSocketDisconnected from exc
