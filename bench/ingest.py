"""Ingest: 20,000 lines into 20 trees from 8 kit clients over HTTP (the baseline: ingest_raw.py serving the
transactions of ingest_baseline.py).

The server is `agentlog serve` in its own process on 127.0.0.1. Each client takes the next tree from a shared
queue, writes its next step (one line, or one batch), and hands the tree back, so all eight stay busy and
the trees interleave as real agents' work does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.common import TENANT
from permissions.tokens import issue_token

TREES = 20
LINES_PER_TREE = 1000
CLIENTS = 8
BATCH = 250
WORKERS = int(os.environ.get("AGENTLOG_BENCH_WORKERS", "1"))
SECRET = "agentlog-bench-secret-of-at-least-32-bytes"
ROOT = Path(__file__).resolve().parent.parent

SINGLE = {
    "modelCall": ("recordModelCall", "ModelCallInput"),
    "toolCall": ("recordToolCall", "ToolCallInput"),
    "toolResult": ("recordToolResult", "ToolResultInput"),
}
AGENT = {"name": "Estimator", "purpose": "Estimates bicycle repairs.", "roles": ["Helper"]}
START = {
    "agent": "Estimator", "skill": "EstimateRepair", "about": "A repair ticket", "given": "Rear brake does not bite.",
    "requester": {"id": "mia", "name": "Mia"}, "actor": {"id": "estimator", "name": "Estimator"},
}
END = {"status": "DONE", "outcome": "Estimated.", "result": {"hours": 1, "parts": ["brake pads", "cable"]}}


def steps(tree: int) -> list[dict[str, Any]]:
    """The tree's lines between its start and its end: turns of a model call, a tool call and its result."""
    lines: list[dict[str, Any]] = []
    for n in range(LINES_PER_TREE - 2):
        turn, part, call_id = n // 3, n % 3, f"t{tree}-c{n // 3}"
        if part == 0:
            lines.append({"modelCall": {
                "model": "Everyday", "routeRule": "llm:default", "provider": "scripted", "inputTokens": 800 + turn,
                "outputTokens": 60, "costMicros": 210, "durationMs": 900,
                "systemPrompt": "You estimate bicycle repairs for a small workshop.",
                "messages": [{"role": "user", "content": f"Ticket {tree}-{turn}: the rear brake does not bite."}],
                "response": {"text": "Let me look up the parts.", "toolCalls": [{"name": "PartsFor", "id": call_id}]},
            }})
        elif part == 1:
            lines.append({"toolCall": {
                "tool": "PartsFor", "toolCallId": call_id, "input": {"fault": "rear brake", "turn": turn},
            }})
        else:
            lines.append({"toolResult": {"tool": "PartsFor", "toolCallId": call_id, "output": ["brake pads", "cable"],
                                         "durationMs": 12}})
    return lines


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def answering(server: subprocess.Popen, base: str, log: str) -> None:
    """Waits until the server at `base` answers /healthz; fails if it exits or stays silent for 30 s."""
    async with httpx.AsyncClient(base_url=base) as http:
        for _ in range(300):
            if server.poll() is not None:
                raise RuntimeError(f"the server exited; see {log}")
            try:
                if (await http.get("/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError(f"the server did not answer /healthz; see {log}")


AGENTLOG_SERVE = ("graph.cli", "serve")


@asynccontextmanager
async def running(argv: Callable[[int], list[str]], env: dict[str, str], what: str) -> AsyncIterator[tuple[str, int]]:
    """The process `argv(port)` starts, serving HTTP on a free loopback port, stopped on leaving; yields its base
    URL and process id. Its log is kept only when something failed, and then `what` names it."""
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="agentlog-bench-serve-", suffix=".log", delete=False)
    server = subprocess.Popen(argv(port), cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        await answering(server, base, log.name)
        yield base, server.pid
    except BaseException:
        print(f"{what}'s log is in {log.name}", file=sys.stderr)
        raise
    else:
        os.unlink(log.name)
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@asynccontextmanager
async def server_process(
    url: str, workers: int = WORKERS, command: tuple[str, ...] = AGENTLOG_SERVE
) -> AsyncIterator[tuple[str, int]]:
    """`agentlog serve` (or another module's `command` taking the same options) on a free loopback port, stopped
    on leaving; yields its base URL and process id."""
    def argv(port: int) -> list[str]:
        return [sys.executable, "-m", *command, "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)]

    env = {**os.environ, "AGENTLOG_DATABASE_URL": url, "AGENTLOG_JWT_SECRET": SECRET}
    async with running(argv, env, "the server") as served_at:
        yield served_at


@asynccontextmanager
async def served(url: str, command: tuple[str, ...] = AGENTLOG_SERVE) -> AsyncIterator[str]:
    """The benchmark's server: WORKERS processes; yields its base URL."""
    async with server_process(url, command=command) as (base, _):
        yield base


def document(mutation: str, input_type: str, select: str) -> str:
    """The GraphQL document a kit sends for one mutation."""
    return f"mutation($input: {input_type}!) {{ {mutation}(input: $input) {{ {select} }} }}"


class Kit:
    """One kit client on its own keep-alive HTTP/1.1 connection.

    It speaks just enough HTTP for this server, so that the client costs the shared two cores little and
    the figure is the server's: httpx alone spends about a millisecond of CPU per request here.
    """

    def __init__(self, base: str) -> None:
        self.host, _, port = base.removeprefix("http://").partition(":")
        self.port = int(port)
        token = issue_token("bench-kit", TENANT, kit=True, key=SECRET)
        self.head = (
            f"POST /graphql HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {token}\r\nContent-Length: "
        ).encode()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, payload: dict[str, Any]) -> Any:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        body = json.dumps(payload).encode()
        self.writer.write(self.head + str(len(body)).encode() + b"\r\n\r\n" + body)
        status = await self.reader.readline()
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        answer = await self.reader.readexactly(length)
        if not status.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"the server answered {status!r}: {answer[:500]!r}")
        return json.loads(answer)

    async def write(self, mutation: str, input_type: str, input: dict[str, Any], select: str = "seq") -> Any:
        body = await self.post({"query": document(mutation, input_type, select), "variables": {"input": input}})
        if body.get("errors"):
            raise RuntimeError(f"{mutation} failed: {body['errors']}")
        return body["data"][mutation]

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(ConnectionError):
                await self.writer.wait_closed()


@dataclass
class Tree:
    lines: list[dict[str, Any]]
    task: str | None = None
    at: int = 0
    ended: bool = False


@dataclass
class Run:
    lines: int
    seconds: float
    roots: list[str] = field(default_factory=list)

    @property
    def per_second(self) -> float:
        return self.lines / self.seconds


async def next_step(kit: Kit, tree: Tree, batch: int) -> None:
    if tree.task is None:
        tree.task = (await kit.write("startTask", "StartTaskInput", START, "id"))["id"]
    elif tree.at < len(tree.lines):
        chunk = tree.lines[tree.at:tree.at + batch]
        if batch == 1:
            kind, fields = next(iter(chunk[0].items()))
            mutation, input_type = SINGLE[kind]
            await kit.write(mutation, input_type, {"task": tree.task, **fields})
        else:
            await kit.write("recordLines", "RecordLinesInput", {"task": tree.task, "lines": chunk}, "firstSeq lastSeq")
        tree.at += len(chunk)
    else:
        await kit.write("endTask", "EndTaskInput", {"task": tree.task, **END}, "id")
        tree.ended = True


async def ingest(base: str, batch: int) -> Run:
    """Writes every tree with CLIENTS kits, `batch` lines per call (1: the single-line mutations)."""
    trees: asyncio.Queue[Tree | None] = asyncio.Queue()
    for i in range(TREES):
        trees.put_nowait(Tree(steps(i)))
    done: list[Tree] = []
    kits = [Kit(base) for _ in range(CLIENTS)]

    async def client(kit: Kit) -> None:
        while (tree := await trees.get()) is not None:
            await next_step(kit, tree, batch)
            if not tree.ended:
                trees.put_nowait(tree)
                continue
            done.append(tree)
            if len(done) == TREES:
                for _ in kits:
                    trees.put_nowait(None)

    try:
        start = time.perf_counter()
        async with asyncio.TaskGroup() as group:
            for kit in kits:
                group.create_task(client(kit))
        seconds = time.perf_counter() - start
    finally:
        await asyncio.gather(*(kit.close() for kit in kits))
    return Run(TREES * LINES_PER_TREE, seconds, [t.task for t in done if t.task])


WARM_STEPS = (1, 1, 1, 1, 60, 1)


async def warm(base: str) -> None:
    """Before any clock, CLIENTS kits at once each write a short tree (a start, one line of each kind, a batch of
    60, the end), so that the server's pooled connections have prepared their statements and loaded their types."""
    kits = [Kit(base) for _ in range(CLIENTS)]

    async def short_tree(kit: Kit) -> None:
        tree = Tree(steps(0)[:63])
        for size in WARM_STEPS:
            await next_step(kit, tree, size)

    try:
        await asyncio.gather(*(short_tree(kit) for kit in kits))
    finally:
        await asyncio.gather(*(kit.close() for kit in kits))


async def set_up(base: str) -> None:
    kit = Kit(base)
    try:
        await kit.write("registerAgent", "RegisterAgentInput", AGENT, "name")
    finally:
        await kit.close()
