"""`GET /export/{task}`: the task's tree's record as JSON Lines, streamed under the caller's access."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from graph.rest import bearer
from permissions.access import Access
from resolvers.export import MEDIA_TYPE, export_for


async def export(request: Request) -> Response:
    principal = bearer(request)
    if isinstance(principal, JSONResponse):
        return principal
    found = await export_for(Access(principal), request.path_params["task"])
    if found is None:
        return JSONResponse({"detail": "Not Found"}, status_code=404)
    return StreamingResponse(found.lines(), media_type=MEDIA_TYPE,
                             headers={"Content-Disposition": f'attachment; filename="{found.root_id}.jsonl"'})


ROUTES = [Route("/export/{task}", export, methods=["GET"])]
