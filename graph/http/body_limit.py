"""A request body larger than AGENTLOG_MAX_BODY_BYTES answers 413 before it is parsed, on every route."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graph.http.errors import error_response

DISCONNECT: Message = {"type": "http.disconnect"}


class BodyLimit:
    """Refuses at once a declared Content-Length over the limit. A body without one (chunked) is counted as it
    arrives: the moment it passes the limit the 413 is sent, and the app behind is told the client went away, so
    it stops reading and whatever it does next reaches nobody."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self.refuse(scope, receive, send)
            return
        received = 0
        started = refused = False

        async def counted() -> Message:
            nonlocal received, refused
            if refused:
                return DISCONNECT
            message = await receive()
            if message["type"] == "http.request" and not started:
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    refused = True
                    await self.refuse(scope, receive, send)
                    return DISCONNECT
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            if refused:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except Exception:
            if not refused:
                raise

    async def refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(
            413, f"The request body is larger than {self.max_bytes} bytes (AGENTLOG_MAX_BODY_BYTES).",
            headers={"Connection": "close"},
        )
        await response(scope, receive, send)
