"""Standalone runs: each workload alone in a fresh process on its own fresh database, several times, one
after another; what is recorded is the median run of each figure with the least and the most of every run,
and the machine's load average as each run began.

A run taken while something else ran is no figure to stand behind: the summary goes to `bench/results.json`
only when every run began on a quiet machine (one-minute load average below `quiet_below`); otherwise only
to a file named on purpose, marked as not quiet.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from bench.common import RESULTS, Figure, aligned, machine

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Run:
    workload: str
    load: float
    figures: list[Figure]


def alone(workload: str, server: str, extra: list[str]) -> Run:
    """One run of one workload in a process of its own; its progress goes to this process's stderr."""
    load = os.getloadavg()[0]
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--alone", "--only", workload, "--server", server, *extra],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{workload} did not run (exit code {done.returncode})")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return Run(workload, load, [Figure(f["workload"], f["agentlog"], f["baseline"], f["unit"], f["target"], f["meets"])
                                for f in found])


def median_run(figures: list[Figure]) -> Figure:
    """The run in the middle, by its ratio where the figure has a baseline, by its own value otherwise."""
    ordered = sorted(figures, key=lambda f: f.agentlog if f.ratio is None else f.ratio)
    return ordered[(len(ordered) - 1) // 2]


def summary(runs: list[Run]) -> dict[str, dict]:
    """Per figure: the median run's values, then min and max of each value over all runs."""
    by_name: dict[str, list[Figure]] = {}
    loads: dict[str, list[float]] = {}
    for run in runs:
        loads.setdefault(run.workload, []).append(round(run.load, 2))
        for figure in run.figures:
            by_name.setdefault(figure.workload, []).append(figure)
    found = {}
    for name, figures in by_name.items():
        middle = median_run(figures)
        ratios = [f.ratio for f in figures if f.ratio is not None]
        found[name] = {
            **middle.as_json(),
            "runs": len(figures),
            "agentlog_range": [min(f.agentlog for f in figures), max(f.agentlog for f in figures)],
            "baseline_range": ([min(f.baseline for f in figures), max(f.baseline for f in figures)]
                               if middle.baseline is not None else None),
            "ratio_range": [min(ratios), max(ratios)] if ratios else None,
            "meets_in_runs": sum(f.meets for f in figures),
            "load_average": next(loads[run.workload] for run in runs if name in {f.workload for f in run.figures}),
        }
    return found


def settle(below: float, patience_s: float) -> float:
    """Waits, up to `patience_s`, for the one-minute load average to fall below `below` (the previous run's own
    load fades in about a minute); returns the load the run begins at."""
    deadline = time.monotonic() + patience_s
    while (load := os.getloadavg()[0]) >= below and time.monotonic() < deadline:
        print(f"   waiting for the machine to settle (load average {load:.2f})", file=sys.stderr, flush=True)
        time.sleep(10)
    return load


def quiet(runs: list[Run], below: float) -> bool:
    return all(run.load < below for run in runs)


def record(workloads: tuple[str, ...], times: int, server: str, extra: list[str], quiet_below: float,
           path: Path | None, patience_s: float = 0) -> tuple[dict[str, dict], Path | None]:
    """Runs every workload `times` times standalone; writes the summary as the module's docstring says. Returns
    it and where it was written (None when nowhere)."""
    runs = []
    for workload in workloads:
        for n in range(1, times + 1):
            print(f"== {workload}, standalone run {n}/{times} (load average {settle(quiet_below, patience_s):.2f})",
                  file=sys.stderr, flush=True)
            runs.append(alone(workload, server, extra))
    found = summary(runs)
    still = quiet(runs, quiet_below)
    target = path or (RESULTS if still else None)
    if target is not None:
        write(found, target, still, quiet_below)
    return found, target


def write(found: dict[str, dict], path: Path, still: bool, quiet_below: float) -> None:
    """Merges these figures into the file, keeping the others; the header says when, where and how quiet."""
    kept = json.loads(path.read_text()) if path.exists() else {}
    figures = kept.get("figures", {})
    figures.update(found)
    path.write_text(json.dumps({
        "recorded": {
            "at": f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
            "machine": machine(),
            "quiet": still,
            "quiet_below_load": quiet_below,
            "method": "each workload alone in a fresh process on a fresh database; the median run, min and max",
        },
        "figures": figures,
    }, indent=2) + "\n")


def table(found: dict[str, dict]) -> str:
    head = ("workload", "agentlog", "baseline", "unit", "ratio", "ratio min-max", "target", "met in runs", "load")
    rows = [head] + [
        (name, f"{f['agentlog']:,.2f}", "-" if f["baseline"] is None else f"{f['baseline']:,.2f}", f["unit"],
         "-" if f["ratio"] is None else f"{f['ratio']:.3f}",
         "-" if f["ratio_range"] is None else "{:.3f}-{:.3f}".format(*f["ratio_range"]), f["target"],
         f"{f['meets_in_runs']}/{f['runs']}", ",".join(f"{x:.1f}" for x in f["load_average"]))
        for name, f in found.items()
    ]
    return aligned(rows)
