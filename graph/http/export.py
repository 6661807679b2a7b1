"""`GET /export/{task}`: the task's tree's record as JSON Lines, streamed under the caller's access. Refusals answer
in the GraphQL error shape, as every route outside the session-transcript API does."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from graph.http.errors import error_response
from models.errors import Unauthenticated
from permissions.access import Access
from permissions.tokens import principal_from_header
from resolvers.read.export import MEDIA_TYPE, export_for

ASK_FOR_A_TOKEN = {"WWW-Authenticate": "Bearer"}


async def export(request: Request) -> Response:
    try:
        principal = principal_from_header(request.headers.get("authorization"))
    except Unauthenticated as exc:
        return error_response(401, exc.message, headers=ASK_FOR_A_TOKEN)
    if principal is None:
        return error_response(401, "A bearer token is required.", headers=ASK_FOR_A_TOKEN)
    found = await export_for(Access(principal), request.path_params["task"])
    if found is None:
        return error_response(404, "No task with this id that you may read.")
    return StreamingResponse(found.lines(), media_type=MEDIA_TYPE,
                             headers={"Content-Disposition": f'attachment; filename="{found.root_id}.jsonl"'})


ROUTES = [Route("/export/{task}", export, methods=["GET"])]
