"""The ASGI app: GraphQL at /graphql (GraphiQL on GET, subscriptions over graphql-transport-ws), the REST
session transcript and its /openapi.json, the inspector at /inspect, the export at /export, OTLP at /v1/traces,
liveness at /healthz, readiness at /readyz, metrics at /metrics; every route behind the body limit, and answering
503 while the database cannot be reached; /graphql, /export/* and /v1/traces open to AGENTLOG_CORS_ORIGINS. The app
keeps the settings it was made with, and every request, websocket and background loop runs under them."""

from __future__ import annotations

import gc
import logging
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.exceptions import ConnectionRejectionError
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL
from strawberry.types.unset import UNSET, UnsetType
from tortoise.contrib.starlette import RegisterTortoise

from graph.http import export, errors, inspector, otlp, rest
from graph.http.body_limit import BodyLimit
from graph.http.configured import Configured
from graph.api.context import Context
from graph.http.cors import CrossOrigin
from graph.http.identity import ProviderKeysReady
from graph.api.read_routing import ConsistentReads, executed_once_more_if_a_replica_failed
from graph.http.readiness import readyz
from graph.http.request_log import RequestLog
from graph.api.schema import build_schema
from graph.api.subscription import admit
from graph.http.unavailable import Unavailable
from graph.api.view import AdmittedRequests, JSONErrorsView
from graph.api.websocket import TextFrames
from models import db
from models.record import fast_json
from models.settings import Settings, cors_origins, load, using
from permissions.tokens import keys_ready, principal_from_header
from resolvers import metrics
from resolvers.events import flowing
from resolvers.otlp import sweep
from resolvers.events import replicas
from resolvers.forget import retention
from resolvers.webhooks import sender
from resolvers.write import signing
from models.errors import Unauthenticated

log = logging.getLogger("agentlog")


class AgentlogGraphQL(JSONErrorsView, AdmittedRequests, GraphQL):
    websocket_adapter_class = TextFrames  # type: ignore[assignment]

    async def render_graphql_ide(self, request: Any) -> HTMLResponse:
        return inspector.GRAPHIQL.response()

    def encode_json(self, data: object) -> bytes | str:
        """An answer as compact JSON in UTF-8: orjson is several times faster than `json` on a page of
        thousands of lines."""
        return fast_json.dumps(data)

    def decode_json(self, data: str | bytes) -> object:
        """A request body read as `json` reads it, by orjson where that reads the same: a batch of lines is read
        several times faster."""
        return fast_json.loads(data)

    async def get_context(self, request: Any, response: Any = None) -> Context:
        settings = request.app.state.settings
        if isinstance(request, WebSocket):
            return Context(request=request, response=response, principal=None, settings=settings)
        try:
            principal = principal_from_header(request.headers.get("authorization"))
        except Unauthenticated as exc:
            return Context(request=request, response=response, principal=None, auth_error=exc, settings=settings)
        return Context(request=request, response=response, principal=principal, settings=settings)

    async def execute_single(self, **kwargs: Any) -> Any:
        return await executed_once_more_if_a_replica_failed(
            lambda: super(AgentlogGraphQL, self).execute_single(**kwargs), kwargs["context"]
        )

    async def on_ws_connect(self, context: Context) -> UnsetType | dict[str, object] | None:
        """The token comes in connection_init as {"Authorization": "Bearer <token>"}, or in the upgrade's header."""
        params = context.connection_params or {}
        header = params.get("Authorization") or params.get("authorization") or context.request.headers.get("authorization")
        await keys_ready(header if isinstance(header, str) else None)
        try:
            admit(context, header if isinstance(header, str) else None)
        except Unauthenticated as exc:
            raise ConnectionRejectionError({"message": exc.message}) from exc
        return UNSET


async def healthz(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


async def metrics_text(request: Request) -> Response:
    return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE)


def describe_url(url: str) -> str:
    if url.startswith("sqlite"):
        return f"embedded SQLite at {url.split('://', 1)[1]}"
    scheme, _, rest = url.partition("://")
    return f"{scheme} database {rest.rsplit('@', 1)[-1]}"


def settle_heap(young: int) -> None:
    """Once started: what startup made is kept out of every later collection, and the youngest generation is
    collected every `young` (AGENTLOG_GC_YOUNG) allocations rather than Python's 700."""
    gc.freeze()
    if young:
        gc.set_threshold(young, *gc.get_threshold()[1:])


def create_app(settings: Settings | None = None, create_database: bool = False) -> Starlette:
    """The app, keeping `settings` (read from the environment when none are given) for every request and loop."""
    chosen = settings or load()
    with using(chosen):
        app = _app_of(chosen, db.database_url(), create_database)
    app.state.settings = chosen
    return app


def _app_of(chosen: Settings, url: str, create_database: bool) -> Starlette:
    graphql = AgentlogGraphQL(
        build_schema(),
        graphql_ide="graphiql",
        allow_queries_via_get=False,
        subscription_protocols=[GRAPHQL_TRANSPORT_WS_PROTOCOL],
        allowed_origins=cors_origins(),
    )

    @asynccontextmanager
    async def lifespan(app: Starlette):
        async with RegisterTortoise(app, config=db.tortoise_config(url), _create_db=create_database):
            await db.migrate()
            log.info("checkpoints are signed by %s", signing.verifier_key())
            log.info("agentlog is keeping its record in the %s", describe_url(url))
            settle_heap(chosen.gc_young)
            async with replicas.serving(chosen), flowing.running(db.dialect()), sweep.sweeping(chosen), \
                    retention.sweeping(chosen), sender.sending(chosen):
                yield

    routes = [
        Route("/healthz", healthz),
        Route("/metrics", metrics_text),
        Route("/readyz", readyz),
        Route("/graphql", graphql, methods=["GET", "POST"]),
        WebSocketRoute("/graphql", graphql),
        *rest.ROUTES,
        *inspector.ROUTES,
        *export.ROUTES,
        *otlp.ROUTES,
    ]
    middleware = [
        Middleware(Configured),
        Middleware(RequestLog),
        Middleware(CrossOrigin, origins=cors_origins()),
        Middleware(ProviderKeysReady),
        Middleware(BodyLimit, max_bytes=chosen.max_body_bytes),
        Middleware(Unavailable),
        Middleware(ConsistentReads),
    ]
    return Starlette(routes=routes, lifespan=lifespan, middleware=middleware, exception_handlers=errors.HANDLERS)
