"""Liveness and readiness: /healthz answers while the process runs; /readyz only while the database answers."""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse
from tortoise.connection import get_connection

from graph.api.errors import UNAVAILABLE
from graph.http.errors import RETRY_AFTER, error_response

READY_TIMEOUT_S = 2.0


async def readyz(request: Request) -> JSONResponse:
    try:
        await asyncio.wait_for(get_connection("default").execute_query("SELECT 1"), READY_TIMEOUT_S)
    except Exception:
        return error_response(503, UNAVAILABLE, headers=RETRY_AFTER)
    return JSONResponse({"status": "ready"})
