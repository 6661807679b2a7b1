"""Instructions a workload costs, counted by callgrind, one revision against another: a comparison the machine's
load cannot move (`valgrind --tool=callgrind` counts instructions, not seconds).

    python -m bench.instructions BASE [REV ...]      (e.g. python -m bench.instructions 229742c 70c9fd8 HEAD)

Each revision is checked out in a temporary worktree and run with this checkout's Python environment. Each
workload runs in process on SQLite (the database's own work is counted too) after a warm-up, with the garbage
collector off while counting (its full collections come when an allocation count trips, not with any request):

- `kit`: ten tasks started, each given a model call and a tool call, and ended, through `Shop` (tests/shop.py);
- `tree`: twenty reads of a six-task tree with each task's cost and record;
- `otlp`: five OTLP exports of an agent span with ten model calls and ten tools each.

Prints each revision's count and its ratio to BASE. Counts repeat within 0.1 % (PYTHONHASHSEED is fixed); a
Python-level change shows in them as it would in time, a wait on a lock or the disk does not.
"""

from __future__ import annotations

import asyncio
import gc
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

WORKLOADS = ("kit", "tree", "otlp")
TREE = """query($id: ID!) { task(id: $id) { id status cost { allInMicros } trace { summary kind }
  children { id status cost { allInMicros } trace { summary kind } } } }"""
ROOT = Path(__file__).resolve().parent.parent


def counting(state: str) -> None:
    if state == "on":
        gc.collect()
        gc.disable()
    if os.environ.get("AGENTLOG_BENCH_COUNTING"):
        subprocess.run(["callgrind_control", "-i", state, str(os.getpid())], check=True, capture_output=True)


def app_of(create_app, url: str):
    """The app on `url`, as each revision makes one: from settings, or (before they were read once) from a URL."""
    try:
        from models.settings import load
    except ImportError:
        return create_app(url)
    return create_app(load(database_url=url))


async def workload(name: str) -> None:
    """One run of `name`, counted from its warm-up's end to its own."""
    from tortoise import Tortoise

    from graph.app import create_app
    from models import db
    from tests.otlp_spans import agent, chat, export, new_trace_id, tool
    from tests.shop import Client, Shop

    url = f"sqlite://{Path(tempfile.mkdtemp()) / 'count.db'}"
    await db.open_database(url, create=True)
    transport = httpx.ASGITransport(app=app_of(create_app, url))
    async with httpx.AsyncClient(transport=transport, base_url="http://x") as http:
        shop = Shop(Client(http))
        await shop.setup()
        root = (await shop.start())["id"]
        for _ in range(5):
            child = (await shop.start(parent=root))["id"]
            await shop.model_call(child)
            await shop.tool(child, "PartsFor", {"part": "brake"}, {"price": 12})
            await shop.end(child)
        await shop.end(root)
        counting("on")
        if name == "kit":
            for _ in range(10):
                task = (await shop.start())["id"]
                await shop.model_call(task)
                await shop.tool(task, "PartsFor", {"part": "brake"}, {"price": 12})
                await shop.end(task)
        elif name == "tree":
            for _ in range(20):
                await shop.client.ok(TREE, {"id": root}, shop.mia)
        else:
            for _ in range(5):
                trace = new_trace_id()
                top = agent(trace)
                spans = [top]
                for _ in range(10):
                    spans += [chat(trace, top.span_id), tool(trace, top.span_id)]
                answer = await http.post("/v1/traces", content=export(*spans).SerializeToString(), headers={
                    "content-type": "application/x-protobuf", "authorization": f"Bearer {shop.kit}"})
                answer.raise_for_status()
        counting("off")
    await Tortoise.close_connections()


def counted(checkout: Path, name: str) -> int:
    """The instructions of `name` run in `checkout` under callgrind."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(checkout), "AGENTLOG_BENCH_COUNTING": "1"}
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}/callgrind.out",
             sys.executable, "-c", f"import asyncio, sys; sys.path.insert(0, {str(checkout)!r}); "
             f"from bench.instructions import workload; asyncio.run(workload({name!r}))"],
            cwd=checkout, env=env, capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{name} at {checkout}: callgrind ended {done.returncode}\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main(revisions: list[str]) -> int:
    if not revisions:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    here = Path(__file__).resolve()
    with tempfile.TemporaryDirectory() as trees:
        checkouts = []
        for n, revision in enumerate(revisions):
            path = Path(trees) / f"r{n}"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(path), revision],
                           check=True)
            (path / "bench" / "instructions.py").write_text(here.read_text())
            checkouts.append(path)
        try:
            print(f"{'workload':<8} " + " ".join(f"{r:>14}" for r in revisions) + "   ratio to " + revisions[0])
            for name in WORKLOADS:
                counts = [counted(path, name) for path in checkouts]
                ratios = " ".join(f"{c / counts[0]:.3f}" for c in counts[1:])
                print(f"{name:<8} " + " ".join(f"{c:>14,}" for c in counts) + f"   {ratios}", flush=True)
        finally:
            for path in checkouts:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
