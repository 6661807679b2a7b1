"""The inspector's pages and the GraphiQL page, served from the package's own assets: nothing comes from another
host. The pages hold no data; they read through POST /graphql with the viewer's token."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from models import settings

ASSETS = Path(__file__).resolve().parent.parent / "assets"
INLINE_SCRIPT = re.compile(r"<script[^>]*>(.*?)</script>", re.S)


def inline_hashes(html: str) -> str:
    """CSP sources for the page's inline scripts (its import map), so no other inline script can run."""
    digests = (hashlib.sha256(body.encode()).digest() for body in INLINE_SCRIPT.findall(html) if body.strip())
    return " ".join(f"'sha256-{base64.b64encode(d).decode()}'" for d in digests)


def issuer_origin() -> str | None:
    """The identity provider's origin, which the pages reach for its discovery document and token endpoint."""
    issuer = settings.oidc_issuer()
    if not issuer or not settings.oidc_client_id():
        return None
    scheme, _, rest = issuer.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


def policy(html: str, style: str, connect: str | None = None) -> str:
    return "; ".join([
        "default-src 'none'",
        f"script-src 'self' {inline_hashes(html)}".rstrip(),
        f"style-src {style}",
        "font-src 'self' data:",
        "img-src 'self' data:",
        f"connect-src 'self' {connect}" if connect else "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ])


class Page:
    """One HTML file from the assets, sent with a Content-Security-Policy that allows only this server (and, where
    people sign in with their organisation, fetching from its identity provider)."""

    def __init__(self, name: str, style: str = "'self'") -> None:
        self.html = (ASSETS / name).read_text(encoding="utf-8")
        self.style = style

    def response(self) -> HTMLResponse:
        headers = {"Content-Security-Policy": policy(self.html, self.style, issuer_origin()), "Cache-Control": "no-cache"}
        return HTMLResponse(self.html, headers=headers)


INSPECTOR = Page("inspect.html")
GRAPHIQL = Page("graphiql.html", style="'self' 'unsafe-inline'")


async def home(request: Request) -> Response:
    return RedirectResponse("/inspect", status_code=302)


async def inspector(request: Request) -> Response:
    return INSPECTOR.response()


async def identity(request: Request) -> Response:
    """Where the pages send people to sign in: the issuer and the pages' public client id, or {} for none."""
    found = {"issuer": settings.oidc_issuer(), "clientId": settings.oidc_client_id()} if issuer_origin() else {}
    return JSONResponse(found, headers={"Cache-Control": "no-cache"})


ROUTES = [
    Route("/", home),
    Route("/inspect/identity.json", identity),
    Mount("/inspect/assets", StaticFiles(directory=ASSETS), name="assets"),
    Route("/inspect", inspector),
    Route("/inspect/session/{session:path}", inspector),
    Route("/inspect/{task}", inspector),
]
