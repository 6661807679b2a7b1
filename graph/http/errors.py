"""Failures met before GraphQL runs (a body that is not JSON, no query, a wrong method, an unknown path, a body
too large) answer JSON in the GraphQL error shape, with `extensions.code`, never plain text."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

RETRY_AFTER = {"Retry-After": "1"}
CODES = {401: "UNAUTHENTICATED", 403: "FORBIDDEN", 404: "NOT_FOUND", 503: "UNAVAILABLE"}


def code_for(status: int) -> str:
    if status in CODES:
        return CODES[status]
    return "BAD_INPUT" if status < 500 else "INTERNAL"


def error_response(status: int, message: str, headers: dict[str, str] | None = None, **extensions: str) -> JSONResponse:
    body = {"errors": [{"message": message, "extensions": {"code": code_for(status), **extensions}}]}
    return JSONResponse(body, status_code=status, headers=headers)


async def http_exception(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    return error_response(exc.status_code, exc.detail, headers=exc.headers)


HANDLERS = {HTTPException: http_exception}
