"""`python -m bench`: every workload alone on a fresh PostgreSQL database, agentlog beside the raw baseline of the same run.

Each workload runs `--runs` times, each time alone in a fresh process (bench/standalone.py); the table shows
the median run with the spread of the ratio and the load average as each run began, and bench/results.json
gets them when the machine was quiet throughout. Run by hand; it takes several minutes and needs a
PostgreSQL server (AGENTLOG_BENCH_SERVER or --server, default postgres://postgres@127.0.0.1:5432).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from bench import (
    big, citus, export, ingest, ingest_baseline, ingest_kit, ingest_raw, live, otlp, otlp_raw, paging, replicas,
    standalone, verify, verify_under_load,
)
from bench.common import (
    SERVER,
    Figure,
    fresh_database,
    higher_is_better,
    informational,
    lower_is_better,
    machine,
    table,
)
from graph.app import settle_heap
from models.settings import current
from models import AgentTask
from resolvers.read.verify import verify_tree

WORKLOADS = ("ingest", "verify", "verify_under_load", "tree_read", "otlp", "live", "export", "paging", "replicas", "big",
             "citus", "soak")
REPEATS = 5
TREE_READ = """
import asyncio, inspect, json, sys
from bench.tree_read import measure
result = measure(tasks=1000, runs=20, server=sys.argv[1], frozen=True)
print(json.dumps(asyncio.run(result) if inspect.isawaitable(result) else result))
"""


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def intact(roots: list[str], lines: int) -> None:
    """Every tree written, by agentlog or by the baseline, verifies whole: the same bytes were hashed."""
    for root_id in roots:
        check = await verify_tree(await AgentTask.get(id=root_id))
        if not check.intact or check.lines != lines:
            raise AssertionError(f"tree {root_id} does not verify: {check}")


async def ingest_figures(url: str) -> list[Figure]:
    """agentlog and its baseline both served over HTTP (bench/ingest_raw.py), the same kits writing to each. The
    batch and its baseline take a second or two, so each runs several times, alternately; the median counts. The
    client's run and the batch's swap order every time, so neither always runs on a warmer server. The same
    writes from asyncpg in this process, with no HTTP, are kept as figures for information."""
    raws, batches, kits, unserved = [], [], [], []
    async with ingest.served(url) as base, ingest.served(url, ingest_raw.COMMAND) as raw_base:
        await ingest.set_up(base)
        await ingest.warm(base)
        await ingest.warm(raw_base)
        say(f"ingest: single-line mutations and their baseline over HTTP, then without, {ingest.CLIENTS} clients "
            f"each…")
        single_raw = await ingest.ingest(raw_base, 1)
        single = await ingest.ingest(base, 1)
        single_unserved = await ingest_baseline.baseline(url, 1)
        for n in range(1, REPEATS + 1):
            say(f"ingest ({n}/{REPEATS}): the baseline over HTTP and without (COPY, {ingest.CLIENTS} clients), "
                f"recordLines with {ingest.BATCH} lines a call, and the same through agentlog_kit.AsyncKit…")
            raws.append(await ingest.ingest(raw_base, ingest.BATCH))
            unserved.append(await ingest_baseline.baseline(url))
            if n % 2:
                batches.append(await ingest.ingest(base, ingest.BATCH))
                kits.append(await ingest_kit.ingest(base))
            else:
                kits.append(await ingest_kit.ingest(base))
                batches.append(await ingest.ingest(base, ingest.BATCH))
    runs = (single_raw, single, single_unserved, *raws, *unserved, *batches, *kits)
    await intact([root for run in runs for root in run.roots], ingest.LINES_PER_TREE)
    raw = statistics.median(run.per_second for run in raws)
    raw_unserved = statistics.median(run.per_second for run in unserved)
    batched = statistics.median(run.per_second for run in batches)
    through_kit = statistics.median(run.per_second for run in kits)
    say("ingest: recordLines / baseline over HTTP, run by run: "
        + ", ".join(f"{b.per_second / r.per_second:.3f}" for b, r in zip(batches, raws)))
    say("ingest: baseline over HTTP / without, run by run: "
        + ", ".join(f"{r.per_second / u.per_second:.3f}" for r, u in zip(raws, unserved)))
    say("ingest: AsyncKit / recordLines, run by run: "
        + ", ".join(f"{k.per_second / b.per_second:.3f}" for k, b in zip(kits, batches)))
    return [
        higher_is_better("ingest_single", single.per_second, single_raw.per_second, "lines/s", 0.5, of_baseline=True),
        higher_is_better("ingest_batch", batched, raw, "lines/s", 0.5, of_baseline=True),
        higher_is_better("ingest_kit", through_kit, batched, "lines/s", 0.8, of_baseline=True),
        informational("ingest_single_no_http", single.per_second, single_unserved.per_second, "lines/s"),
        informational("ingest_batch_no_http", batched, raw_unserved, "lines/s"),
    ]


async def verify_figures(url: str) -> list[Figure]:
    say(f"verify: writing a chain of {verify.CHAIN:,} lines…")
    root = await verify.build_chain(url, verify.CHAIN)
    ours, theirs = await verify.timings(url, root)
    say(f"verify: writing a chain of {verify.STREAMED:,} lines for the memory check…")
    big = await verify.build_chain(url, verify.STREAMED)
    ours_mb = verify.peak_rss_added(url, big, "agentlog")
    theirs_mb = verify.peak_rss_added(url, big, "baseline")
    memory = Figure("verify_memory", ours_mb["added_mb"], theirs_mb["added_mb"], "MB peak RSS added",
                    "< 100 MB", ours_mb["added_mb"] < 100 and ours_mb["lines"] == verify.STREAMED)
    return [lower_is_better("verify", ours, theirs, "s", 1.5), memory]


async def verify_under_load_figure(url: str) -> Figure:
    say(f"verify under load: a tree of {verify_under_load.CHAIN:,} lines, checked idle, then while "
        f"{verify_under_load.WRITERS} writers append…")
    found = await verify_under_load.measure(url)
    say("verify under load: idle {:.3f} s ({:.3f}–{:.3f}), loaded {:.3f} s ({:.3f}–{:.3f}), {:.0f} lines/s appended, "
        "up to {} lines past the head read before a check".format(
            found["idle_s"], *found["idle_range"], found["loaded_s"], *found["loaded_range"], found["lines_per_s"],
            found["grew_during_check"]))
    return lower_is_better("verify_under_load", found["loaded_s"], found["idle_s"], "s", 3)


async def otlp_figures(url: str, repeats: int = 9) -> list[Figure]:
    """agentlog and its baseline both take the same exports over HTTP (bench/otlp_raw.py), each run a new copy of
    the trace; they alternate, swapping order every run, and the medians count. The same rows written from the
    spans in memory with no HTTP are kept as a figure for information. Every tree written over HTTP is then
    verified by agentlog and counted: both sides stored as many tasks, lines and meter rows."""
    ours, raws, unserved, roots = [], [], [], []
    conn = await otlp.warm(url)
    try:
        async with ingest.served(url) as base, ingest.served(url, otlp_raw.COMMAND) as raw_base:
            await asyncio.to_thread(otlp.ingest, base, otlp.make_spans())
            await asyncio.to_thread(otlp.exported, raw_base, otlp.make_spans())
            for n in range(1, repeats + 1):
                say(f"otlp ({n}/{repeats}): {otlp.SPANS} spans by the OTLP exporter to agentlog and to the raw "
                    f"receiver, then the baseline with no HTTP…")
                for side in ("agentlog", "raw") if n % 2 else ("raw", "agentlog"):
                    spans = otlp.make_spans()
                    if side == "agentlog":
                        seconds, root = await asyncio.to_thread(otlp.ingest, base, spans)
                        ours.append(otlp.SPANS / seconds)
                    else:
                        raws.append(otlp.SPANS / await asyncio.to_thread(otlp.exported, raw_base, spans))
                        root = str(otlp.root_of(spans[0].context.trace_id))
                    roots.append(root)
                unserved.append(otlp.SPANS / await otlp.baseline(conn, otlp.make_spans()))
        await intact(roots, otlp.LINES)
        counts = {await otlp.stored(conn, root) for root in roots}
        if len(counts) != 1:
            raise AssertionError(f"the trees stored differ in tasks, lines and meter rows: {counts}")
    finally:
        await conn.close()
    say(f"otlp: agentlog {min(ours):,.0f}-{max(ours):,.0f} spans/s, raw receiver over HTTP "
        f"{min(raws):,.0f}-{max(raws):,.0f}, without HTTP {min(unserved):,.0f}-{max(unserved):,.0f}; each tree "
        f"{counts.pop()} tasks, lines, meter rows")
    say("otlp: agentlog / raw receiver, run by run: " + ", ".join(f"{o / r:.3f}" for o, r in zip(ours, raws)))
    mine, raw, raw_unserved = statistics.median(ours), statistics.median(raws), statistics.median(unserved)
    return [
        higher_is_better("otlp_ingest", mine, raw, "spans/s", 3300, of_baseline=False),
        higher_is_better("otlp_ingest_vs_raw", mine, raw, "spans/s", 0.5, of_baseline=True),
        informational("otlp_ingest_no_http", mine, raw_unserved, "spans/s"),
    ]


async def export_figures(url: str) -> list[Figure]:
    say(f"export: writing a chain of {export.STREAMED:,} lines, then exporting it over HTTP and verifying it offline…")
    found = await export.measure(url)
    say(f"export: {found}")
    memory = Figure("export_memory", found["memory_added_mb"], None, "MB server peak RSS added", "< 100 MB",
                    found["memory_added_mb"] < 100)
    return [
        higher_is_better("export_stream", found["export_lines_per_s"], found["baseline_lines_per_s"], "lines/s", 0.5,
                         of_baseline=True),
        Figure("export_stream_vs_raw_read", round(found["export_lines_per_s"], 3),
               round(found["raw_read_lines_per_s"], 3), "lines/s", "information only", True),
        memory,
        lower_is_better("verify_offline", found["offline_s"], found["hashlib_s"], "CPU s", 1.5),
    ]


def tree_read_figure(server: str) -> Figure | None:
    say("tree read: bench.tree_read.measure(tasks=1000, runs=20)…")
    done = subprocess.run([sys.executable, "-c", TREE_READ, server], cwd=ingest.ROOT, capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        say(f"tree read did not run:\n{done.stderr.strip()[-2000:]}")
        return None
    result = json.loads(done.stdout.strip().splitlines()[-1])
    say(f"tree read: {result.get('statements')} statements per request")
    return lower_is_better("tree_read", result["agentlog_ms"], result["baseline_ms"], "ms", 3)


async def run(server: str, workloads: tuple[str, ...], paging_tasks: int = 100_000) -> list[Figure]:
    figures: list[Figure] = []
    export.signing_key()
    async with fresh_database(server) as url:
        if "ingest" in workloads:
            figures += await ingest_figures(url)
        if "verify" in workloads:
            figures += await verify_figures(url)
        if "verify_under_load" in workloads:
            figures.append(await verify_under_load_figure(url))
        if "otlp" in workloads:
            figures += await otlp_figures(url)
        if "live" in workloads:
            figures += await live.figures(url)
        if "export" in workloads:
            figures += await export_figures(url)
        if "big" in workloads:
            figures += await big.figures(url)
    if "tree_read" in workloads and (figure := tree_read_figure(server)) is not None:
        figures.append(figure)
    if "paging" in workloads:
        say(f"paging: {paging_tasks:,} tasks and a 1,000,000-line record (bench.paging)…")
        figures += (await paging.run(server, paging_tasks, 1_000_000, 20))[0]
    if "replicas" in workloads:
        figures += await replicas.run()
    if "citus" in workloads:
        figures += await citus.run(server)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--server", default=SERVER, help="a PostgreSQL server URL, without a database name")
    parser.add_argument("--only", nargs="+", choices=WORKLOADS, default=list(WORKLOADS[:-1]), metavar="WORKLOAD",
                        help=f"some of {', '.join(WORKLOADS)} (default: all but the soak)")
    parser.add_argument("--paging-tasks", type=int, default=100_000, metavar="N",
                        help="tasks (ten lines each) the paging workload stores (default 100,000)")
    parser.add_argument("--runs", type=int, default=3, metavar="N", help="standalone runs of each workload (default 3)")
    parser.add_argument("--quiet-below", type=float, default=1.0, metavar="LOAD",
                        help="bench/results.json is written only when every run began below this one-minute load "
                             "average (default 1.0)")
    parser.add_argument("--settle", type=float, default=180, metavar="S",
                        help="before each run, wait up to S seconds for the load average to fall below --quiet-below "
                             "(default 180)")
    parser.add_argument("--results", type=Path, metavar="FILE",
                        help="write the summary here, quiet or not, instead of bench/results.json")
    parser.add_argument("--citus-source", metavar="DIR",
                        help="Citus's source, built when Citus is not installed (the citus workload)")
    parser.add_argument("--minutes", type=float, default=10, metavar="N",
                        help="how long the soak runs (default 10); it runs once, not --runs times (bench/soak.py)")
    parser.add_argument("--faults", action="store_true",
                        help="during the soak: PostgreSQL restarted, a server process killed, the replica paused")
    parser.add_argument("--pace", type=float, default=0.0, metavar="S",
                        help="during the soak: each client rests S seconds on average between two pieces of work "
                             "(default 0: as fast as it is answered)")
    parser.add_argument("--alone", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if "soak" in args.only:
        from bench import soak

        soaked = soak.main([str(args.minutes), *(["--faults"] if args.faults else []), "--pace", str(args.pace)])
        args.only = [workload for workload in args.only if workload != "soak"]
        if not args.only:
            return soaked
    if args.citus_source:
        os.environ["AGENTLOG_BENCH_CITUS_SOURCE"] = args.citus_source
    workloads = tuple(args.only)
    start = time.perf_counter()
    if args.alone:
        settle_heap(current().gc_young)
        figures = asyncio.run(run(args.server, workloads, args.paging_tasks))
        print(table(figures), file=sys.stderr)
        print(json.dumps([f.as_json() for f in figures]))
        return 0 if all(f.meets for f in figures) else 1
    found, written = standalone.record(workloads, args.runs, args.server, ["--paging-tasks", str(args.paging_tasks)],
                                       args.quiet_below, args.results, args.settle)
    about = machine()
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {about['cores']} cores, {about['cpu']}, "
          f"{about['ram']} RAM, Python {about['python']}; {args.runs} standalone runs a workload; "
          f"{time.perf_counter() - start:.0f} s")
    print(standalone.table(found))
    print(f"written to {written}" if written else
          f"not written: some run began at a load average of {args.quiet_below} or more; name a file with --results")
    return 0 if all(f["meets"] for f in found.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
