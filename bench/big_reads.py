"""Reading the large trace once it is readable (`bench/big.py`): what a person and an auditor do with it.

Every read is made over HTTP to the same `agentlog serve` process that took the trace, with an auditor's token
(the heaviest reader: figures, words, sentences and content):

- `children`: the root's first page, `children(first: 50)` with the fields the inspector shows for a child;
- `record`: `record(first: 5000)` paged to the end, each line with its own fields as the inspector's step list
  asks them (the step list also asks each line's task and meter row, which this read leaves out);
- `inspector`: /inspect/{root} in Debian's headless Chromium, a fresh browser context each run, until the heading
  and the root's first page of children are painted, and until the waterfall's first bars are drawn (each by the
  page's own clock, from navigation start); then the page is left to finish what it reads next (the tree's cost,
  its chain check and the rest of the waterfall's lines, which for this tree take the server a second or two)
  before its context closes, so that each visit starts on an idle server;
- `export_verify`: `GET /export/{root}` written to a file, then `agentlog verify --file` with the server's
  verifier key as a separate process, one clock over both.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import orjson

from bench.export import auditor, http_export
from bench.ingest import ROOT as REPO

CHROMIUM = "/usr/bin/chromium"
FIRST = 50
CHILDREN = """query($id: ID!) { task(id: $id) { children(first: 50) {
  id agent skill status about startedAt endedAt limitMicros readableGroups childCount } } }"""
LINE = """seq kind at summary payload contentAccess withheldReason erasedAt contentErasedAt
  model tool costMicros inputTokens outputTokens durationMs isError prevHash hash"""
RECORD = f"""query($id: ID!, $after: Int) {{ task(id: $id) {{ record(first: 5000, after: $after) {{
  {LINE} }} }} }}"""
FIRST_PAINT = ("() => !!document.querySelector('h1') && "
               "document.querySelectorAll('[data-testid=tree-node]').length >= NODES")
FIRST_BARS = "() => !!document.querySelector('[data-testid=bar]')"


def spread(values: list[float], unit: str, digits: int = 0) -> str:
    return (f"median {statistics.median(values):,.{digits}f} {unit} "
            f"({min(values):,.{digits}f}–{max(values):,.{digits}f}, {len(values)} runs)")


async def timed(read: Callable, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        await read()
        out.append(time.perf_counter() - start)
    return out


async def graphql(http: httpx.AsyncClient, query: str, **variables) -> dict:
    answer = orjson.loads((await http.post("/graphql", json={"query": query, "variables": variables})).content)
    if answer.get("errors"):
        raise RuntimeError(f"the read failed: {answer['errors']}")
    return answer["data"]


async def children_ms(http: httpx.AsyncClient, root: str, runs: int) -> list[float]:
    async def read() -> None:
        found = (await graphql(http, CHILDREN, id=root))["task"]["children"]
        if not found:
            raise AssertionError("the root has no children")

    return [1000 * s for s in await timed(read, runs)]


async def record_rate(http: httpx.AsyncClient, root: str, lines: int, runs: int) -> list[float]:
    async def read() -> None:
        after, count = None, 0
        while True:
            page = (await graphql(http, RECORD, id=root, after=after))["task"]["record"]
            count += len(page)
            if len(page) < 5000:
                break
            after = page[-1]["seq"]
        if count != lines:
            raise AssertionError(f"the record held {count} lines, not {lines}")

    return [lines / s for s in await timed(read, runs)]


async def first_paint_ms(base: str, token: str, root: str, nodes: int, runs: int) -> tuple[list[float], list[float]]:
    """When the first screen was painted, and when the waterfall's first bars were drawn, in ms since navigation
    start, each run after a first one not counted."""
    from playwright.async_api import async_playwright

    url = f"{base}/inspect/{root}#token={token}"
    moments = {"paint": FIRST_PAINT.replace("NODES", str(nodes)), "bars": FIRST_BARS}
    poll = "() => ({ now: performance.now(), " + ", ".join(f"{m}: ({c})()" for m, c in moments.items()) + " })"
    out: dict[str, list[float]] = {m: [] for m in moments}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for run in range(runs + 1):
                context = await browser.new_context(viewport={"width": 1280, "height": 900})
                try:
                    page = await context.new_page()
                    await page.goto(url, wait_until="commit")
                    found: dict[str, float] = {}
                    while len(found) < len(moments):
                        state = await page.evaluate(poll)
                        found.update({m: state["now"] for m in moments if state[m] and m not in found})
                        await asyncio.sleep(0.01)
                    if run:
                        for moment, ms in found.items():
                            out[moment].append(ms)
                    await page.wait_for_load_state("networkidle", timeout=600_000)
                finally:
                    await context.close()
        finally:
            await browser.close()
    return out["paint"], out["bars"]


def verifier_key() -> str:
    from resolvers.write.signing import signer

    return signer().verifier.key


async def export_verify_rate(base: str, token: str, root: str, lines: int, runs: int) -> list[float]:
    key = verifier_key()
    out = []
    for _ in range(runs):
        file = Path(tempfile.mkdtemp(prefix="agentlog-bench-")) / "export.jsonl"
        try:
            start = time.perf_counter()
            _, count = await http_export(base, token, root, file)
            checked = subprocess.run([str(Path(sys.executable).parent / "agentlog"), "verify", "--file", str(file),
                                      "--key", key], cwd=REPO, capture_output=True, text=True)
            took = time.perf_counter() - start
        finally:
            file.unlink(missing_ok=True)
        if checked.returncode != 0 or count != lines:
            raise AssertionError(f"the export of {count} lines did not verify: {checked.stdout}{checked.stderr}")
        out.append(lines / took)
    return out


async def measure(base: str, root: str, lines: int, children: int, runs: int = 5) -> dict[str, list[float]]:
    token = await auditor(base)
    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=600) as http:
        first = await children_ms(http, root, 1)
        found = {"children_cold_ms": first, "children_ms": await children_ms(http, root, 4 * runs)}
        found["record_lines_per_s"] = await record_rate(http, root, lines, runs)
    found["first_paint_ms"], found["first_bars_ms"] = await first_paint_ms(base, token, root, 1 + min(children, FIRST),
                                                                         runs)
    found["export_verify_lines_per_s"] = await export_verify_rate(base, token, root, lines, runs)
    return found
