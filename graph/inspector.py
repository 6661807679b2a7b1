"""The inspector's pages and the GraphiQL page, served from the package's own assets: nothing comes from another
host. The pages hold no data; they read through POST /graphql with the viewer's token."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

ASSETS = Path(__file__).resolve().parent / "assets"
INLINE_SCRIPT = re.compile(r"<script[^>]*>(.*?)</script>", re.S)


def inline_hashes(html: str) -> str:
    """CSP sources for the page's inline scripts (its import map), so no other inline script can run."""
    digests = (hashlib.sha256(body.encode()).digest() for body in INLINE_SCRIPT.findall(html) if body.strip())
    return " ".join(f"'sha256-{base64.b64encode(d).decode()}'" for d in digests)


def policy(html: str, style: str) -> str:
    return "; ".join([
        "default-src 'none'",
        f"script-src 'self' {inline_hashes(html)}".rstrip(),
        f"style-src {style}",
        "font-src 'self' data:",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ])


class Page:
    """One HTML file from the assets, sent with a Content-Security-Policy that allows only this server."""

    def __init__(self, name: str, style: str = "'self'") -> None:
        self.html = (ASSETS / name).read_text(encoding="utf-8")
        self.headers = {"Content-Security-Policy": policy(self.html, style), "Cache-Control": "no-cache"}

    def response(self) -> HTMLResponse:
        return HTMLResponse(self.html, headers=self.headers)


INSPECTOR = Page("inspect.html")
GRAPHIQL = Page("graphiql.html", style="'self' 'unsafe-inline'")


async def home(request: Request) -> Response:
    return RedirectResponse("/inspect", status_code=302)


async def inspector(request: Request) -> Response:
    return INSPECTOR.response()


ROUTES = [
    Route("/", home),
    Mount("/inspect/assets", StaticFiles(directory=ASSETS), name="assets"),
    Route("/inspect", inspector),
    Route("/inspect/{task}", inspector),
]
