"""`GET /export/{task}`: the task's tree's record as JSON Lines, streamed under the caller's access; and
`GET /export/bundle?task=ID&task=ID…`: an incident bundle of those trees and the tenant's ledger (SPEC 9.3).
Refusals answer in the GraphQL error shape, as every route outside the session-transcript API does."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from graph.http.errors import error_response
from models.errors import Unauthenticated
from permissions.access import Access
from permissions.principal import Principal
from permissions.tokens import principal_from_header
from resolvers.read.bundle import NotReadable, bundle_for
from resolvers.read.export import MEDIA_TYPE, export_for

ASK_FOR_A_TOKEN = {"WWW-Authenticate": "Bearer"}
MOST_TREES = 100
NOT_FOUND = "No task with this id that you may read."


def _caller(request: Request) -> Principal | Response:
    try:
        principal = principal_from_header(request.headers.get("authorization"))
    except Unauthenticated as exc:
        return error_response(401, exc.message, headers=ASK_FOR_A_TOKEN)
    if principal is None:
        return error_response(401, "A bearer token is required.", headers=ASK_FOR_A_TOKEN)
    return principal


async def export(request: Request) -> Response:
    principal = _caller(request)
    if isinstance(principal, Response):
        return principal
    found = await export_for(Access(principal), request.path_params["task"])
    if found is None:
        return error_response(404, NOT_FOUND)
    return StreamingResponse(found.lines(), media_type=MEDIA_TYPE,
                             headers={"Content-Disposition": f'attachment; filename="{found.root_id}.jsonl"'})


async def bundle(request: Request) -> Response:
    principal = _caller(request)
    if isinstance(principal, Response):
        return principal
    tasks = request.query_params.getlist("task")
    if not 1 <= len(tasks) <= MOST_TREES:
        return error_response(400, f"task: name 1 to {MOST_TREES} tasks (task=ID&task=ID…), not {len(tasks)}.",
                              field="task")
    try:
        found = await bundle_for(Access(principal), tasks)
    except NotReadable as exc:
        return error_response(404, f"task: {NOT_FOUND} ({exc.task})", field="task")
    return StreamingResponse(found.lines(), media_type=MEDIA_TYPE,
                             headers={"Content-Disposition": 'attachment; filename="bundle.jsonl"'})


ROUTES = [Route("/export/bundle", bundle, methods=["GET"]), Route("/export/{task}", export, methods=["GET"])]
