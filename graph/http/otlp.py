"""POST /v1/traces: OTLP/HTTP trace exports from agent frameworks, with a kit token."""

from __future__ import annotations

import logging

import asyncpg
from starlette.background import BackgroundTasks
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from tortoise.exceptions import DBConnectionError

from models import settings
from models.availability import database_unavailable
from models.errors import Unauthenticated
from permissions.tokens import principal_from_header
from resolvers import metrics
from resolvers.otlp import decode, ingest
from resolvers.events.notices import publish_tasks
from resolvers.otlp.mapping import Hostile

log = logging.getLogger("agentlog.otlp")

UNAVAILABLE = (OSError, ConnectionError, DBConnectionError, asyncpg.PostgresConnectionError, asyncpg.InterfaceError)


def _refused(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"code": status, "message": message}, status_code=status, headers=headers)


async def _body(request: Request, cap: int) -> bytes | None:
    """The raw body, or None as soon as it passes the cap."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


async def traces(request: Request) -> Response:
    try:
        principal = principal_from_header(request.headers.get("authorization"))
    except Unauthenticated as exc:
        principal, problem = None, exc.message
    else:
        problem = "A kit token is required."
    if principal is None or not principal.kit:
        return _refused(401, problem, {"WWW-Authenticate": "Bearer"})
    media = decode.media_type(request.headers.get("content-type"))
    if media is None:
        return _refused(415, "Send application/x-protobuf or application/json.")
    cap = settings.max_body_bytes()
    raw = await _body(request, cap)
    if raw is None:
        return _refused(413, f"The body is larger than {cap} bytes.")
    try:
        export = decode.parse(decode.inflate(raw, request.headers.get("content-encoding"), cap), media)
        taken = await ingest.take_export(principal.tenant, export)
    except decode.TooLarge as exc:
        return _refused(413, str(exc))
    except (decode.Unreadable, Hostile) as exc:
        return _refused(400, str(exc))
    except Exception as exc:
        if not isinstance(exc, UNAVAILABLE) and not database_unavailable(exc):
            raise
        log.warning("OTLP export refused while the database is away: %s", exc)
        return _refused(503, "The database cannot be reached; send the export again.", {"Retry-After": "5"})
    metrics.otlp_spans(taken.taken, taken.rejected)
    after = BackgroundTasks()
    if taken.events:
        after.add_task(publish_tasks, list(taken.events))
    if taken.later:
        after.add_task(ingest.place_later, taken.later)
    return Response(decode.answer(media, taken.rejected, taken.message), media_type=media, background=after)


ROUTES = [Route("/v1/traces", traces, methods=["POST"])]
