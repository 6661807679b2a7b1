"""What every workload shares: a fresh database, the machine, the figures, and the raw v1 hashing the baselines use."""

from __future__ import annotations

import hashlib
import os
import platform
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from json.encoder import encode_basestring
from pathlib import Path

import asyncpg
from tortoise import Tortoise

from models import db

SERVER = os.environ.get("AGENTLOG_BENCH_SERVER", "postgres://postgres@127.0.0.1:5432")
TENANT = "bench-shop"
RESULTS = Path(__file__).parent / "results.json"


@asynccontextmanager
async def fresh_database(server: str = SERVER) -> AsyncIterator[str]:
    """A new database for one run, migrated and open in tortoise, dropped afterwards whatever happens."""
    name = f"agentlog_bench_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(f"{server}/postgres")
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        try:
            url = f"{server}/{name}"
            await db.open_database(url)
            yield url
        finally:
            await Tortoise.close_connections()
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


def machine() -> dict[str, str]:
    cpu = platform.processor() or "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    meminfo = Path("/proc/meminfo").read_text().splitlines()
    kb = next(int(line.split()[1]) for line in meminfo if line.startswith("MemTotal"))
    return {"cores": str(os.cpu_count()), "cpu": cpu, "ram": f"{kb / 1024 / 1024:.1f} GiB",
            "python": platform.python_version()}


@dataclass
class Figure:
    """One workload's row: agentlog's figure, the baseline's from the same run, and whether the target is met."""

    workload: str
    agentlog: float
    baseline: float | None
    unit: str
    target: str
    meets: bool

    @property
    def ratio(self) -> float | None:
        if not self.baseline:
            return None
        return round(self.agentlog / self.baseline, 3)

    def as_json(self) -> dict:
        return {"workload": self.workload, "agentlog": self.agentlog, "baseline": self.baseline, "unit": self.unit, "ratio": self.ratio,
                "target": self.target, "meets": self.meets}


def higher_is_better(
    workload: str, agentlog: float, baseline: float, unit: str, least: float, of_baseline: bool
) -> Figure:
    """`least` is an absolute floor, or a fraction of the baseline when `of_baseline`."""
    floor = least * baseline if of_baseline else least
    target = f">= {least}x baseline" if of_baseline else f">= {least:,.0f} {unit}"
    return Figure(workload, round(agentlog, 3), round(baseline, 3), unit, target, agentlog >= floor)


def informational(workload: str, agentlog: float, baseline: float, unit: str) -> Figure:
    """A ratio shown beside the targets for the reader, against a baseline that is not the target's."""
    return Figure(workload, round(agentlog, 3), round(baseline, 3), unit, "(shown, no target)", True)


def lower_is_better(workload: str, agentlog: float, baseline: float, unit: str, most: float) -> Figure:
    target = f"<= {most}x baseline"
    return Figure(workload, round(agentlog, 3), round(baseline, 3), unit, target, agentlog <= most * baseline)


def table(figures: list[Figure]) -> str:
    head = ("workload", "agentlog", "baseline", "unit", "ratio", "target", "meets")
    rows = [head] + [
        (f.workload, f"{f.agentlog:,.2f}", "-" if f.baseline is None else f"{f.baseline:,.2f}", f.unit,
         "-" if f.ratio is None else f"{f.ratio:.3f}", f.target, "yes" if f.meets else "NO")
        for f in figures
    ]
    return aligned(rows)


def aligned(rows: list[tuple[str, ...]]) -> str:
    """Rows as columns padded to their widest cell, the first row a heading underlined."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


COMMIT_TAG = b"agentlog/commit/v1\x00"
LINE_TAG = b"agentlog/line/v1\x00"


def raw_commit(salt: str, text: str) -> str:
    return hashlib.sha256(COMMIT_TAG + bytes.fromhex(salt) + text.encode()).hexdigest()


def _n(value: int | None) -> str:
    return "null" if value is None else str(value)


def _s(value: str | None) -> str:
    return "null" if value is None else encode_basestring(value)


def raw_fixed(seq: int, kind: str, task: uuid.UUID, at: datetime, model: str | None, route_rule: str | None,
              attempts: int | None, cost_micros: int | None, input_tokens: int | None, output_tokens: int | None,
              tool: str | None, tool_call_id: str | None, is_error: bool | None, duration_ms: int | None) -> str:
    """The canonical JSON of docs/chain.md written out by hand in sorted key order, for rows whose types are known."""
    error = "null" if is_error is None else ("true" if is_error else "false")
    when = at.astimezone(timezone.utc).isoformat(timespec="microseconds")[:-6] + "Z"
    return (f'{{"at":"{when}","attempts":{_n(attempts)},"costMicros":{_n(cost_micros)},"durationMs":{_n(duration_ms)},'
            f'"inputTokens":{_n(input_tokens)},"isError":{error},"kind":"{kind}","model":{_s(model)},'
            f'"outputTokens":{_n(output_tokens)},"routeRule":{_s(route_rule)},"seq":{seq},"task":"{task}",'
            f'"tool":{_s(tool)},"toolCallId":{_s(tool_call_id)}}}')


def raw_line_hash(prev_hash: str, fixed: str, summary_hash: str, payload_hash: str) -> str:
    return hashlib.sha256(
        LINE_TAG + bytes.fromhex(prev_hash) + fixed.encode() + bytes.fromhex(summary_hash) + bytes.fromhex(payload_hash)
    ).hexdigest()
