"""The inspector's first screen for a 10,000-task tree, in Debian's headless Chromium, against the same page for a
one-task tree in the same run.

    python -m bench.inspector [--server postgres://postgres@127.0.0.1:5432] [--runs 5]

Each tree is built by `bench.tree_read.fake_tree` (10 lines and 3 meter rows per task: 100,000 lines for 10,000
tasks) and written with COPY into a fresh PostgreSQL database served by `agentlog serve` in a subprocess. Two
shapes of 10,000 tasks: `deep` (depth 5, about 6 children per task) and `flat` (every task a child of the root,
the worst case for a tree read whole). A run opens /inspect/{root} in a fresh browser context (nothing cached)
with a requester's token and takes, from the page's own clock (ms since navigation start):

- `first screen`: the heading and the root with its first page of children painted (what fits the screen),
  their costs still being summed;
- `costs`: those tasks' own and all-in costs shown (each a sum over the task's whole subtree);
- `badge`: the verifyTrace badge shown (the whole chain walked);
- `steps`: the first rows of the step list shown (its first page of 100 lines read);
- `waterfall`: the first bars of the waterfall drawn (the tree's first 5,000 tasks and 5,000 lines read).

Runs alternate between the trees; each figure is the median of the runs, with min–max. The target is a first
screen under 1 s for both 10,000-task trees.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from unittest import mock

from playwright.async_api import async_playwright

from bench import ingest, tree_read
from bench.common import SERVER, TENANT, fresh_database
from permissions.tokens import issue_token

TASKS = 10_000
CHROMIUM = "/usr/bin/chromium"
FIRST_PAGE = 50
MOMENTS = {
    "first screen": "!!document.querySelector('h1') && document.querySelectorAll('[data-testid=tree-node]').length >= NODES",
    "costs": "document.querySelectorAll('[data-testid=tree-node]').length >= NODES && !document.querySelector('.cost-pending')",
    "badge": "!!document.querySelector('[data-testid=verify-badge]')",
    "steps": "!!document.querySelector('[data-testid=step]')",
    "waterfall": "!!document.querySelector('[data-testid=bar]')",
}
POLL = "() => ({ now: performance.now(), " + ", ".join(f"'{m}': {c}" for m, c in MOMENTS.items()) + " })"
READS = """() => performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/graphql'))
  .map((e) => Math.round(e.responseEnd - e.requestStart))"""


def shaped(tasks: int, depth: int) -> tree_read.Tree:
    sizes = tree_read.level_sizes
    with mock.patch.object(tree_read, "level_sizes", lambda n: sizes(n, depth)):
        return tree_read.fake_tree(tasks)


async def moments(browser, url: str, nodes: int) -> tuple[dict[str, float], list[int]]:
    """When each moment first held, by the page's clock, polled every 10 ms; and how long each GraphQL read took."""
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = await context.new_page()
        await page.goto(url, wait_until="commit")
        poll = POLL.replace("NODES", str(nodes))
        found: dict[str, float] = {}
        while len(found) < len(MOMENTS):
            state = await page.evaluate(poll)
            found.update({m: state["now"] for m in MOMENTS if state[m] and m not in found})
            await asyncio.sleep(0.01)
        return found, await page.evaluate(READS)
    finally:
        await context.close()


async def serve_tree(server: str, tree: tree_read.Tree, stack) -> str:
    """A fresh database, migrated by the server as it starts, then the tree written into it."""
    url = await stack.enter_async_context(fresh_database(server))
    base = await stack.enter_async_context(ingest.served(url))
    await tree_read.store(url, tree)
    return base


async def measure(server: str, runs: int) -> dict:
    from contextlib import AsyncExitStack

    trees = {"one task (baseline)": shaped(1, 5), "deep 10,000": shaped(TASKS, 5), "flat 10,000": shaped(TASKS, 1)}
    token = issue_token("mia", TENANT, roles=["Mechanic"], name="Mia", key=ingest.SECRET)
    results: dict[str, dict[str, list[float]]] = {name: {m: [] for m in MOMENTS} for name in trees}
    async with AsyncExitStack() as stack:
        targets = {}
        for name, tree in trees.items():
            base = await serve_tree(server, tree, stack)
            children = sum(1 for t in tree.tasks if t[19] == tree.root)
            targets[name] = (f"{base}/inspect/{tree.root}#token={token}", 1 + min(children, FIRST_PAGE))
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            for name, (url, nodes) in targets.items():
                await moments(browser, url, nodes)
            for _ in range(runs):
                for name, (url, nodes) in targets.items():
                    found, reads = await moments(browser, url, nodes)
                    for moment, ms in found.items():
                        results[name][moment].append(ms)
                    print(f"{name}: GraphQL reads took {reads} ms", file=sys.stderr)
            await browser.close()
    return results


def report(results: dict) -> dict:
    base = statistics.median(results["one task (baseline)"]["first screen"])
    summary = {}
    for name, found in results.items():
        summary[name] = {
            moment: {"median_ms": round(statistics.median(v)), "min_ms": round(min(v)), "max_ms": round(max(v)),
                     "ratio_to_baseline": round(statistics.median(v) / base, 2) if moment == "first screen" else None}
            for moment, v in found.items()
        }
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.inspector", description=__doc__.splitlines()[0])
    parser.add_argument("--server", default=SERVER)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    summary = report(asyncio.run(measure(args.server, args.runs)))
    for name, found in summary.items():
        for moment, f in found.items():
            ratio = f" ({f['ratio_to_baseline']}x baseline)" if f["ratio_to_baseline"] is not None else ""
            print(f"{name:22} {moment:13} {f['median_ms']:>7} ms  [{f['min_ms']}–{f['max_ms']}]{ratio}")
    meets = all(summary[n]["first screen"]["median_ms"] < 1000 for n in ("deep 10,000", "flat 10,000"))
    print(json.dumps({"inspector_first_screen_under_1s": meets}))


if __name__ == "__main__":
    main()
