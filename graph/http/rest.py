"""The REST API: the session transcript and its OpenAPI document."""

from __future__ import annotations

from dataclasses import asdict

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from graph.http.openapi import DOCUMENT, TRANSCRIPT_PATH
from permissions.access import Access
from permissions.principal import Principal
from permissions.tokens import principal_from_header
from models import settings
from models.errors import Unauthenticated
from resolvers.read.session_transcript import invalid_session_id, session_transcript


def unauthorized(message: str) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=401, headers={"WWW-Authenticate": "Bearer"})


def bearer(request: Request) -> Principal | JSONResponse:
    """The caller the request's token names, or the 401 answer for a missing or bad token."""
    try:
        principal = principal_from_header(request.headers.get("authorization"))
    except Unauthenticated as exc:
        return unauthorized(exc.message)
    return principal if principal is not None else unauthorized("A bearer token is required.")


async def transcript(request: Request) -> JSONResponse:
    principal = bearer(request)
    if isinstance(principal, JSONResponse):
        return principal
    session_id: str = request.path_params["session_id"]
    problem = invalid_session_id(session_id)
    if problem is not None:
        detail = {"type": problem.type, "loc": ["path", "session_id"], "msg": problem.msg, "input": session_id,
                  "ctx": problem.ctx}
        return JSONResponse({"detail": [detail]}, status_code=422)
    found = await session_transcript(Access(principal), session_id, settings.transcript_row_cap())
    return JSONResponse(
        {"session_id": found.session_id, "rows": [asdict(row) for row in found.rows], "truncated": found.truncated}
    )


async def openapi(request: Request) -> JSONResponse:
    return JSONResponse(DOCUMENT)


ROUTES = [
    Route(TRANSCRIPT_PATH, transcript, methods=["GET"]),
    Route("/openapi.json", openapi, methods=["GET"]),
]
