"""The workshop's own frontend, on an origin of its own, reads a repair's tree from agentlog; a page on any other
origin cannot, and no other route opens to other origins."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from graph.app import create_app
from models.settings import load
from tests.servers import start_server
from tests.shop import Client, Shop

FRONTEND = "http://frontend.example"
PREFLIGHT = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type"}


@asynccontextmanager
async def app_client(database: str, origins: str | None) -> AsyncIterator[httpx.AsyncClient]:
    """An app made with AGENTLOG_CORS_ORIGINS set to `origins` (None: unset)."""
    chosen = load(database_url=database, **({"cors_origins": origins} if origins is not None else {}))
    transport = httpx.ASGITransport(app=create_app(chosen))
    async with httpx.AsyncClient(transport=transport, base_url="http://agentlog.test") as http:
        yield http


@pytest.mark.parametrize("path", ["/graphql", "/export/00000000-0000-0000-0000-000000000000", "/v1/traces"])
async def test_a_listed_origins_preflight_is_answered(database, path):
    async with app_client(database, f"{FRONTEND}, http://other.example") as http:
        answer = await http.options(path, headers={"Origin": FRONTEND, **PREFLIGHT})
    assert answer.status_code == 200
    assert answer.headers["access-control-allow-origin"] == FRONTEND
    assert "authorization" in answer.headers["access-control-allow-headers"].lower()
    assert "access-control-allow-credentials" not in answer.headers


async def test_a_listed_origin_reads_and_others_are_not_let_in(database):
    async with app_client(database, FRONTEND) as http:
        shop = Shop(Client(http))
        await shop.setup()
        body = {"query": "{ me { id } }"}
        mine = await http.post("/graphql", json=body, headers={"Origin": FRONTEND, "Authorization": f"Bearer {shop.mia}"})
        theirs = await http.post("/graphql", json=body, headers={"Origin": "http://elsewhere.example"})
        refused = await http.options("/graphql", headers={"Origin": "http://elsewhere.example", **PREFLIGHT})
    assert mine.headers["access-control-allow-origin"] == FRONTEND and mine.json()["data"]["me"]["id"] == "mia"
    assert "access-control-allow-origin" not in theirs.headers
    assert refused.status_code == 400 and "access-control-allow-origin" not in refused.headers


@pytest.mark.parametrize("path", ["/inspect", "/healthz", "/metrics", "/openapi.json"])
async def test_no_other_route_opens_to_other_origins(database, path):
    async with app_client(database, FRONTEND) as http:
        answer = await http.get(path, headers={"Origin": FRONTEND})
    assert "access-control-allow-origin" not in answer.headers


async def test_by_default_no_origin_is_let_in(database):
    async with app_client(database, None) as http:
        answer = await http.options("/graphql", headers={"Origin": FRONTEND, **PREFLIGHT})
    assert "access-control-allow-origin" not in answer.headers


async def test_any_origin_is_never_given_credentials(database):
    async with app_client(database, "*") as http:
        answer = await http.options("/graphql", headers={"Origin": FRONTEND, **PREFLIGHT})
        simple = await http.post("/graphql", json={"query": "{ me { id } }"}, headers={"Origin": FRONTEND, "Cookie": "a=b"})
    assert answer.headers["access-control-allow-origin"] == "*"
    assert simple.headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-credentials" not in {**answer.headers, **simple.headers}


TREE = "query Tree($id: ID!) { task(id: $id) { id agent about children(first: 10) { id agent about } } }"
PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Workshop frontend</title></head><body>
<h1>Repair T-7</h1><ul id="tree"></ul><p id="problem"></p>
<script>
const [agentlog, token, id, hash] = JSON.parse(decodeURIComponent(location.hash.slice(1)));
fetch(agentlog + "/graphql", {
  method: "POST",
  headers: {"Content-Type": "application/json", "Authorization": "Bearer " + token},
  body: JSON.stringify({variables: {id}, extensions: {persistedQuery: {version: 1, sha256Hash: hash}}}),
}).then((r) => r.json()).then(({data}) => {
  const item = (task) => `<li data-testid="task">${task.agent}: ${task.about}</li>`;
  document.getElementById("tree").innerHTML = item(data.task) + data.task.children.map(item).join("");
}).catch((error) => { document.getElementById("problem").textContent = "refused: " + error.message; });
</script></body></html>"""


@contextmanager
def frontend() -> Iterator[str]:
    """A page of the workshop's own, served from an origin of its own."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(PAGE.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://localhost:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


async def test_a_page_on_the_frontends_origin_reads_a_tree_in_chromium(database, browser, monkeypatch, tmp_path):
    documents = tmp_path / "documents.json"
    documents.write_text(json.dumps({hashlib.sha256(TREE.encode()).hexdigest(): TREE}))
    with frontend() as mine, frontend() as stranger:
        monkeypatch.setenv("AGENTLOG_CORS_ORIGINS", mine)
        monkeypatch.setenv("AGENTLOG_TRUSTED_DOCUMENTS", str(documents))
        monkeypatch.setenv("AGENTLOG_ONLY_TRUSTED_DOCUMENTS", "true")
        server = start_server(database)
        try:
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
                shop = Shop(Client(http))
                await shop.setup()
                repair = (await shop.start(about="Repair T-7"))["id"]
                await shop.start(about="Brake pads for T-7", parent=repair)
            seen = {}
            context = await browser.new_context()
            for name, origin in (("mine", mine), ("stranger", stranger)):
                page = await context.new_page()
                said = json.dumps([server.url, shop.mia, repair, hashlib.sha256(TREE.encode()).hexdigest()])
                await page.goto(f"{origin}/#{said}")
                await page.wait_for_function("document.querySelector('#tree li') || document.querySelector('#problem').textContent")
                await page.screenshot(path=str(tmp_path / f"cross-origin-{name}.png"))
                seen[name] = (await page.locator("#tree li").all_inner_texts(), await page.text_content("#problem"))
            await context.close()
        finally:
            server.stop()
    assert seen["mine"] == (["Estimator: Repair T-7", "Estimator: Brake pads for T-7"], "")
    assert seen["stranger"][0] == [] and seen["stranger"][1].startswith("refused:")
