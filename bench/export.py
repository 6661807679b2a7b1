"""Export and offline verification of a 1,000,000-line chain.

- export: `GET /export/{root}` streamed over HTTP from one `agentlog serve` process, against the same lines streamed
  by a plain Starlette route served the same way (`bench/export_baseline.py`), read by the same client; beside it,
  for information, a raw asyncpg read of the same rows in the same keyset pages in this process; and how far the
  export raised the server's peak resident memory.
- offline verification: `check_export` over the exported file, against hashlib over the same bytes (each line
  parsed with the same JSON parser, its two commitments and its line hash recomputed, nothing else checked).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import asyncpg
import httpx
import orjson

from bench import verify
from bench.common import TENANT, raw_commit, raw_line_hash
from bench.export_baseline import baseline_process
from bench.ingest import SECRET, server_process
from models.record.chain import GENESIS
from models.record.export_check import check_export
from models.line_columns import CHECKED
from models.record.note import new_signer
from permissions.tokens import issue_token
from models.settings import load, using
from resolvers.write.checkpoints import note_for

STREAMED = 1_000_000
RUNS = 3
RAW_PAGE = (f"SELECT {', '.join(CHECKED)} FROM trace_event "
            "WHERE root_id = $1 AND seq > $2 ORDER BY seq LIMIT $3")


def signing_key() -> str:
    """A key file for this run, named to the server and to this process alike (read again in `using(load())`)."""
    path = Path(tempfile.mkdtemp(prefix="agentlog-bench-")) / "signing.key"
    path.write_text(new_signer("agentlog-bench").key + "\n")
    os.environ["AGENTLOG_SIGNING_KEY"] = str(path)
    return str(path)


async def build(url: str, lines: int) -> uuid.UUID:
    """The chain, written with COPY, and the checkpoint over its head."""
    root = await verify.build_chain(url, lines)
    conn = await asyncpg.connect(url)
    try:
        head = await conn.fetchval("SELECT chain_head FROM agent_task WHERE id = $1", root)
        with using(load()):
            note = note_for(TENANT, str(root), lines, head)
        await conn.execute('INSERT INTO "checkpoint" (root_id, tenant, size, head, note) VALUES ($1, $2, $3, $4, $5)',
                           root, TENANT, lines, head, note)
    finally:
        await conn.close()
    return root


def memory_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(field)


async def auditor(base: str) -> str:
    kit = issue_token("bench-kit", TENANT, kit=True, key=SECRET)
    async with httpx.AsyncClient(base_url=base) as http:
        answer = await http.post("/graphql", headers={"Authorization": f"Bearer {kit}"}, json={
            "query": "mutation { definePolicies(input: {auditsAgents: [\"Auditor\"]}) { auditsAgents } }"})
        answer.raise_for_status()
    return issue_token("ada", TENANT, roles=["Auditor"], key=SECRET)


async def http_export(base: str, token: str, root: uuid.UUID, out: Path | None = None) -> tuple[float, int]:
    """Seconds to receive the whole export, and its chain lines.

    The client speaks just enough HTTP/1.1 (one GET, a chunked body) to cost the shared cores little, as the
    ingest clients do; httpx spends more CPU unframing 900 MB than the server spends writing it.
    """
    host, port = base.removeprefix("http://").split(":")
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection(host, int(port), limit=1 << 22)
    try:
        writer.write(f"GET /export/{root} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {token}\r\n"
                     "Connection: close\r\n\r\n".encode())
        status = await reader.readline()
        if b" 200 " not in status:
            raise AssertionError(f"the export answered {status!r}")
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        count = 0
        with open(out or os.devnull, "wb") as sink:
            while size := int((await reader.readline()).split(b";")[0], 16):
                data = await reader.readexactly(size)
                count += data.count(b"\n")
                sink.write(data)
                await reader.readexactly(2)
        return time.perf_counter() - start, count - 1
    finally:
        writer.close()


async def raw_read(conn: asyncpg.Connection, root: uuid.UUID, batch: int = 5000) -> tuple[float, int]:
    """The same rows, read with asyncpg in the same keyset pages on a connection opened before the clock, and
    nothing else done with them."""
    start, after, count = time.perf_counter(), 0, 0
    while True:
        rows = await conn.fetch(RAW_PAGE, root, after, batch)
        count += len(rows)
        if len(rows) < batch:
            break
        after = rows[-1][0]
    return time.perf_counter() - start, count


def offline(path: Path) -> tuple[float, int]:
    """CPU seconds of this process (the machine is shared, and both sides are single-threaded CPU work)."""
    from resolvers.write.signing import signer

    start = time.process_time()
    with open(path, "rb") as lines, using(load()):
        verdict = check_export(lines, signer().verifier)
    if not verdict.intact:
        raise AssertionError(f"the export does not verify: {verdict}")
    return time.process_time() - start, verdict.lines


FIXED_KEYS = ("seq", "kind", "task", "at", "model", "routeRule", "attempts", "costMicros", "inputTokens",
              "outputTokens", "tool", "toolCallId", "isError", "durationMs")


def fixed_bytes(line: dict) -> bytes:
    """The fixed fields' canonical JSON written straight from the exported values, as an outside verifier would."""
    return orjson.dumps({key: line[key] for key in FIXED_KEYS}, option=orjson.OPT_SORT_KEYS)


def hashlib_baseline(path: Path) -> tuple[float, int]:
    """Each line parsed and its commitments and line hash recomputed with hashlib; no other check. CPU seconds."""
    start, prev, count = time.process_time(), GENESIS, 0
    with open(path, "rb") as lines:
        next(lines)
        for raw in lines:
            line = orjson.loads(raw)
            if (line["prevHash"] != prev
                    or raw_commit(line["summarySalt"], line["summary"]) != line["summaryHash"]
                    or raw_commit(line["payloadSalt"], line["payload"] or "") != line["payloadHash"]
                    or raw_line_hash(prev, fixed_bytes(line).decode(), line["summaryHash"], line["payloadHash"])
                    != line["hash"]):
                raise AssertionError(f"the baseline found line {line['seq']} broken")
            prev, count = line["hash"], count + 1
    return time.process_time() - start, count


def spread(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}"


def same_lines(ours: Path, theirs: Path) -> None:
    """Both exports hold the same bytes after their headers (which differ only in when they were made)."""
    with open(ours, "rb") as a, open(theirs, "rb") as b:
        next(a), next(b)
        for mine, raw in itertools.zip_longest(a, b):
            if mine != raw:
                raise AssertionError(f"agentlog's export and the baseline's differ: {mine!r} against {raw!r}")


async def measure(url: str, lines: int = STREAMED, runs: int = RUNS) -> dict:
    signing_key()
    root = await build(url, lines)
    folder = Path(tempfile.mkdtemp(prefix="agentlog-bench-"))
    out, raw_out = folder / "export.jsonl", folder / "baseline.jsonl"
    try:
        async with server_process(url, workers=1) as (base, pid), baseline_process(url) as raw_base:
            token = await auditor(base)
            async with httpx.AsyncClient(base_url=base) as http:
                await http.get(f"/export/{uuid.uuid4()}", headers={"Authorization": f"Bearer {token}"})
            before = memory_mb(pid, "VmRSS")
            _, count = await http_export(base, token, root, out)
            added = memory_mb(pid, "VmHWM") - before
            if count != lines:
                raise AssertionError(f"the export held {count} lines, not {lines}")
            await http_export(raw_base, token, root, raw_out)
            same_lines(out, raw_out)
            raw_out.unlink()
            ours, theirs, read = [], [], []
            raw = await asyncpg.connect(url)
            try:
                await raw_read(raw, root)
                for _ in range(runs):
                    theirs.append(lines / (await http_export(raw_base, token, root))[0])
                    ours.append(lines / (await http_export(base, token, root))[0])
                    read.append(lines / (await raw_read(raw, root))[0])
            finally:
                await raw.close()
        checked, hashed = [], []
        for _ in range(runs):
            checked.append(offline(out)[0])
            hashed.append(hashlib_baseline(out)[0])
        return {
            "lines": lines, "export_bytes": out.stat().st_size,
            "export_lines_per_s": statistics.median(ours), "baseline_lines_per_s": statistics.median(theirs),
            "raw_read_lines_per_s": statistics.median(read),
            "export_spread": spread(ours), "baseline_spread": spread(theirs), "raw_read_spread": spread(read),
            "memory_added_mb": round(added, 1), "memory_before_mb": round(before, 1),
            "offline_s": statistics.median(checked), "hashlib_s": statistics.median(hashed),
            "offline_spread": spread(checked), "hashlib_spread": spread(hashed),
            "export_ratios": [round(o / t, 3) for o, t in zip(ours, theirs)],
            "raw_read_ratios": [round(o / r, 3) for o, r in zip(ours, read)],
            "offline_ratios": [round(c / h, 3) for c, h in zip(checked, hashed)],
        }
    finally:
        out.unlink(missing_ok=True)
        raw_out.unlink(missing_ok=True)
        folder.rmdir()


if __name__ == "__main__":
    import json

    from bench.common import fresh_database

    async def main() -> dict:
        async with fresh_database() as url:
            from tortoise import Tortoise

            from models import db

            await db.open_database(url)
            await Tortoise.close_connections()
            return await measure(url, int(sys.argv[1]) if len(sys.argv) > 1 else STREAMED)

    print(json.dumps(asyncio.run(main()), indent=2))
