"""A long mixed load against `agentlog serve --workers 2` on PostgreSQL, with faults if asked.

    python -m bench --only soak --minutes N [--faults] [--pace S]      (or: python -m bench.soak N [--faults] [--pace S])

A primary and one hot standby of the bench's own (tests/pg_replicas.py) hold a stored tree of TREE_TASKS tasks;
the server reads from the standby (AGENTLOG_READ_DATABASE_URLS) and sweeps retention every minute. For N minutes:
KITS kit writers (tasks of LINES tool calls sent in one recordLines batch), EXPORTERS OTLP exporters (a trace of
an agent, a model call and a tool an export), TREE_READERS readers of the whole stored tree, LIST_READERS readers
of the task list, SUBSCRIBERS `taskEvents` subscribers, and once a minute an erasure. Each minute: p50/p99/max of
every operation, the server's RSS (every process of it), the database's connections, and the events delivered
against those the subscribers should have heard. At the end: every acknowledged line and span recorded exactly
once, every chain verifies, every task a writer ended is not RUNNING, every stale tree stored a sweep before the
end is forgotten.

`--faults`: PostgreSQL restarted once (a fourth of the way), one server process SIGKILLed (half-way; uvicorn
starts another), the standby's replay paused for REPLICA_PAUSE_S (at 60 %). `--pace S`: each writer, exporter and
reader rests S seconds on average (exponentially distributed) before its first piece of work and after each, so
the load is a rate the machine can serve from the start and a latency is the work's own rather than its wait in
the queue; without it each sends its next request as soon as the last is answered. The clock starts once every
client has opened its connections. Every loop stops by itself when the time is up; every address is
loopback.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import os
import random
import signal
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from unittest import mock

import asyncpg
import httpx
from tortoise import Tortoise
from websockets.asyncio.client import ClientConnection, connect

from agentlog_kit import AsyncKit, Retry
from agentlog_kit.errors import AgentlogError
from bench import tree_read
from bench.replicas import ready
from models import AgentTask, db
from permissions.tokens import issue_token
from resolvers.read.verify import verify_tree
from tests.otlp_spans import agent, chat, export, new_trace_id, tool
from tests.pg_cluster import children_of
from tests.pg_replicas import Nodes, primary_and_standbys
from tests.servers import Server, start_server

TENANT = "soak-shop"
KIT = issue_token("soak-kit", TENANT, kit=True)
NOOR = issue_token("noor", TENANT, roles=["Auditor"], name="Noor")
ERIN = issue_token("erin", TENANT, roles=["Steward"], name="Erin")
MIA = issue_token("mia", tree_read.TENANT, roles=["Mechanic"], name="Mia")
KITS, EXPORTERS, TREE_READERS, LIST_READERS, SUBSCRIBERS = 8, 4, 8, 8, 4
WORKERS = 2
LINES = 10
TREE_TASKS = 100
STALE_TASKS = 10
STALE_DAYS = 40
SWEPT_WITHIN_S = 10.0
MINUTE_S = 60.0
REPLICA_PAUSE_S = 30.0
PATIENT = Retry(attempts=40, first_delay=0.1, max_delay=2.0)
HEARD_WITHIN_S = 5.0
DRAIN_S = 5.0
LIST_QUERY = "{ tasks(first: 20) { edges { node { id status agent } } } }"
EVENTS = "subscription { taskEvents { event task { id } } }"


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@dataclass
class Window:
    """One subscription: when it first heard an event (from then on, every event committed later reaches it
    unless it is told otherwise: notifications arrive in commit order), what it heard, and why it ended (None when
    it lasted until the soak did)."""

    live_from: float = float("inf")
    ended_at: float = float("inf")
    told: str | None = None
    heard: set[tuple[str, str]] = field(default_factory=set)
    counted: tuple[int, int, int] | None = None
    missed: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Soak:
    seconds: float
    pace: float = 0.0
    began: float = field(default_factory=time.monotonic)
    timings: dict[int, dict[str, list[float]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    codes: Counter = field(default_factory=Counter)
    lines: list[str] = field(default_factory=list)
    traces: list[str] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)
    told: list[tuple[str, str, float, float]] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    minutes: list[dict] = field(default_factory=list)
    stale: list[tuple[str, float]] = field(default_factory=list)
    clients: int = 0
    open: int = 0
    started: asyncio.Event = field(default_factory=asyncio.Event)

    async def opened(self, paced: bool = False) -> None:
        """A client has opened its connections: once every one of them has, the clock starts. Opening a client
        costs this process tens of milliseconds (httpx makes a TLS context for each), which would otherwise be
        counted in the first requests of the clients opened before it. A `paced` client then rests before its
        first piece of work as it does after each, so that paced clients send at their rate from the start
        rather than all at once in its first instant."""
        self.open += 1
        if self.open == self.clients:
            self.began = time.monotonic()
            self.started.set()
        await self.started.wait()
        if paced:
            await self.rest()

    def going(self) -> bool:
        return self.now() < self.seconds

    async def rest(self) -> None:
        """With a pace, a client's pause between two pieces of work: random, `pace` seconds on average (so the
        clients together send at a rate of their own, not as fast as they are answered)."""
        if self.pace > 0:
            await asyncio.sleep(min(random.expovariate(1 / self.pace), max(0.0, self.seconds - self.now())))

    def now(self) -> float:
        return time.monotonic() - self.began

    @asynccontextmanager
    async def timed(self, operation: str) -> AsyncIterator[None]:
        began = time.monotonic()
        try:
            yield
        except AgentlogError as exc:
            self.codes[(operation, exc.code)] += 1
            raise
        self.timings[int(self.now() // MINUTE_S)][operation].append(time.monotonic() - began)
        self.codes[(operation, "OK")] += 1


async def kit_writer(soak: Soak, server: Server, number: int) -> None:
    async with AsyncKit(server.url, KIT, batch_lines=LINES, retry=PATIENT, timeout=30) as kit:
        await soak.opened(paced=True)
        made = 0
        while soak.going():
            made += 1
            try:
                sent = soak.now()
                async with soak.timed("startTask"):
                    task = await kit.start_task(agent="Estimator", skill="EstimateRepair", requester="mia",
                                                given=f"Bike {number}-{made} brakes badly.")
                soak.told.append((task.id, "AgentTaskStarted", sent, soak.now()))
                keys = [f"s{number}-{made}-{n}" for n in range(LINES)]
                for key in keys[:-1]:
                    await task.tool_call("PartsFor", tool_call_id=key, input={"line": key})
                async with soak.timed("recordLines"):
                    await task.tool_call("PartsFor", tool_call_id=keys[-1], input={"line": keys[-1]})
                soak.lines += keys
                sent = soak.now()
                async with soak.timed("endTask"):
                    await task.end("DONE")
                soak.ended.append(task.id)
                soak.told.append((task.id, "AgentTaskFinished", sent, soak.now()))
                await soak.rest()
            except AgentlogError:
                kit.open.clear()
                await asyncio.sleep(0.5)


async def exporter(soak: Soak, server: Server) -> None:
    headers = {"Authorization": f"Bearer {KIT}", "Content-Type": "application/x-protobuf"}
    async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=30) as http:
        await soak.opened(paced=True)
        while soak.going():
            tag = os.urandom(5).hex()
            trace = new_trace_id()
            root = agent(trace, f"A{tag}")
            body = export(root, chat(trace, root.span_id, f"m{tag}"), tool(trace, root.span_id, f"t{tag}"))
            began = time.monotonic()
            status = await send_export(http, body.SerializeToString(), began + 120)
            if status == 200:
                soak.timings[int(soak.now() // MINUTE_S)]["otlp export"].append(time.monotonic() - began)
                soak.traces.append(tag)
            soak.codes[("otlp export", "OK" if status == 200 else f"HTTP {status}")] += 1
            await soak.rest()


async def send_export(http: httpx.AsyncClient, body: bytes, deadline: float) -> int:
    """The export's final status, sent again on a 503 or a dropped connection as an exporter does."""
    while True:
        try:
            response = await http.post("/v1/traces", content=body)
            if response.status_code != 503 or time.monotonic() > deadline:
                return response.status_code
        except httpx.TransportError:
            if time.monotonic() > deadline:
                return 0
        await asyncio.sleep(0.2)


async def reader(soak: Soak, server: Server, operation: str, body: dict, token: str) -> None:
    async with httpx.AsyncClient(base_url=server.url, headers={"Authorization": f"Bearer {token}"},
                                 timeout=30) as http:
        await soak.opened(paced=True)
        while soak.going():
            began = time.monotonic()
            try:
                response = await http.post("/graphql", json=body)
            except httpx.TransportError:
                soak.codes[(operation, "transport")] += 1
                await asyncio.sleep(0.2)
                continue
            answer = response.json() if response.headers.get("content-type", "").startswith("application/json") \
                else {}
            errors = answer.get("errors") or []
            code = errors[0].get("extensions", {}).get("code", "?") if errors else "OK"
            soak.codes[(operation, code)] += 1
            if code == "OK":
                soak.timings[int(soak.now() // MINUTE_S)][operation].append(time.monotonic() - began)
                await soak.rest()
            else:
                await asyncio.sleep(0.2)


async def subscriber(soak: Soak, server: Server) -> None:
    """Subscribes, hears events, and when its subscription ends (told FELL_BEHIND or FEED_LOST, or the connection
    dropped) subscribes again. Once the soak is over it reads what is still on its way, until DRAIN_S of quiet."""
    await soak.opened()
    while soak.going():
        window = Window()
        soak.windows.append(window)
        try:
            async with connect(server.ws_url, subprotocols=["graphql-transport-ws"], open_timeout=15) as ws:
                await ws.send(json.dumps({"type": "connection_init", "payload": {"Authorization": f"Bearer {NOOR}"}}))
                await asyncio.wait_for(ws.recv(), 15)
                await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": EVENTS}}))
                window.told = await hear(soak, ws, window)
        except Exception as exc:
            window.told = window.told or f"connection: {type(exc).__name__}"
        if window.told is not None:
            window.ended_at = soak.now()
        await asyncio.sleep(0.5)


async def hear(soak: Soak, ws: ClientConnection, window: Window) -> str | None:
    """Events into `window` until the subscription ends (what it was told) or the soak has ended and DRAIN_S pass
    without a message (None)."""
    quiet_since = None
    while soak.going() or quiet_since is None or time.monotonic() - quiet_since < DRAIN_S:
        try:
            async with asyncio.timeout(1):
                message = json.loads(await ws.recv())
        except TimeoutError:
            quiet_since = quiet_since or time.monotonic()
            continue
        quiet_since = None if soak.going() else time.monotonic()
        payload = message.get("payload")
        errors = payload.get("errors") if isinstance(payload, dict) else payload
        if message["type"] == "next" and not errors:
            event = payload["data"]["taskEvents"]
            window.live_from = min(window.live_from, soak.now())
            window.heard.add((event["task"]["id"], event["event"]))
        elif message["type"] in ("next", "error", "complete"):
            return str(errors[0].get("extensions", {}).get("code")) if errors else message["type"]
    return None


def should_hear(soak: Soak, window: Window, until: float) -> set[tuple[str, str]]:
    """The events of the kits' tasks `window` should have heard: written after it first heard something, answered
    before `until` and before it ended. `told` is in the order the writes were answered, so only the stretch
    answered while the window was open is read."""
    limit = min(until, window.ended_at)
    low = bisect.bisect_left(soak.told, window.live_from, key=lambda told: told[3])
    high = bisect.bisect_right(soak.told, limit, key=lambda told: told[3])
    return {(task, event) for task, event, sent, _ in soak.told[low:high] if window.live_from <= sent}


def missed(soak: Soak, until: float) -> tuple[int, int, int]:
    """(events of the kits' tasks a subscription should have heard, of them heard, missed by a subscription that
    was never told why). A window that ended before `until` is counted once and kept."""
    expected = heard = silent_misses = 0
    for window in soak.windows:
        counted = window.counted if window.ended_at <= until else None
        if counted is None:
            should = should_hear(soak, window, until)
            unheard = should - window.heard
            counted = (len(should), len(should) - len(unheard), 0 if window.told is not None else len(unheard))
            window.missed = sorted(unheard) if window.told is None else []
            if window.ended_at <= until:
                window.counted = counted
        expected += counted[0]
        heard += counted[1]
        silent_misses += counted[2]
    return expected, heard, silent_misses


def silent_windows(soak: Soak) -> list[dict]:
    """Each subscription that missed events without being told why: when it was live, and when the writes of the
    events it missed were answered."""
    acked = {(task, event): at for task, event, _, at in soak.told}
    found = []
    for window in soak.windows:
        if window.told is None and window.missed:
            times = sorted(acked[event] for event in window.missed)
            found.append({"live_from_s": round(window.live_from, 1), "ended_at_s": round(min(window.ended_at,
                          soak.seconds), 1), "missed": len(times), "first_missed_acked_s": round(times[0], 1),
                          "last_missed_acked_s": round(times[-1], 1), "heard": len(window.heard)})
    return found


async def eraser(soak: Soak, server: Server) -> None:
    """Once a minute: a task of its own written, ended, and its content erased by the steward."""
    async with AsyncKit(server.url, KIT, retry=PATIENT, timeout=30) as kit, \
            httpx.AsyncClient(base_url=server.url, headers={"Authorization": f"Bearer {ERIN}"}, timeout=60) as http:
        await soak.opened()
        while soak.going():
            try:
                async with kit.task(agent="Estimator", skill="Scrap", requester="mia") as task:
                    await task.tool_call("Shred", input={"note": "to be erased"})
                began = time.monotonic()
                response = await http.post("/graphql", json={
                    "query": "mutation($t: ID!) { eraseAgentWorkContent(task: $t, why: \"soak\") }",
                    "variables": {"t": task.id}})
                errors = response.json().get("errors")
                code = errors[0]["extensions"]["code"] if errors else "OK"
                soak.codes[("erasure", code)] += 1
                if code == "OK":
                    soak.timings[int(soak.now() // MINUTE_S)]["erasure"].append(time.monotonic() - began)
            except (AgentlogError, httpx.TransportError, ValueError) as exc:
                soak.codes[("erasure", type(exc).__name__)] += 1
            await pause(soak, MINUTE_S)


async def stale_trees(soak: Soak, nodes: Nodes) -> None:
    """Once a minute: a finished tree of STALE_TASKS tasks that ended STALE_DAYS ago, stored as it would have been
    written then, for the retention sweep (every minute, `retainDays` 30) to forget."""
    await soak.opened()
    while soak.going():
        tree = tree_read.fake_tree(STALE_TASKS, TENANT, datetime.now(timezone.utc) - timedelta(days=STALE_DAYS))
        try:
            conn = await asyncpg.connect(nodes.url, timeout=5)
            try:
                async with conn.transaction():
                    await conn.copy_records_to_table("agent_task", records=tree.tasks, columns=tree_read.TASK_COLUMNS)
                    await conn.copy_records_to_table("trace_event", records=tree.lines, columns=tree_read.INSERTED)
                    await conn.copy_records_to_table("llm_call", records=tree.calls, columns=tree_read.CALL_COLUMNS)
                    await conn.copy_records_to_table("agent_help", records=tree.helps, columns=tree_read.HELP_COLUMNS)
                soak.stale.append((str(tree.root), soak.now()))
            finally:
                await conn.close()
        except (OSError, asyncpg.PostgresError, TimeoutError):
            soak.codes[("stale tree", "not stored")] += 1
        await pause(soak, MINUTE_S)


async def pause(soak: Soak, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while soak.going() and time.monotonic() < deadline:
        await asyncio.sleep(0.5)


def rss_mb(server: Server) -> float:
    """The resident memory of every process of the server (its process group)."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) != server.process.pid:
                continue
            status = (entry / "status").read_text()
        except (OSError, ProcessLookupError):
            continue
        total += next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
    return total / 1024


async def connections(nodes: Nodes) -> int | None:
    try:
        conn = await asyncpg.connect(nodes.url, timeout=5)
    except (OSError, asyncpg.PostgresError, TimeoutError):
        return None
    try:
        return await conn.fetchval("SELECT count(*) FROM pg_stat_activity WHERE datname = 'agentlog'")
    finally:
        await conn.close()


def quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"n": len(ordered), "p50_ms": 1000 * statistics.median(ordered),
            "p99_ms": 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], "max_ms": 1000 * ordered[-1]}


async def reporter(soak: Soak, server: Server, nodes: Nodes) -> None:
    await soak.opened()
    minute = 0
    while soak.going():
        await asyncio.sleep(max(0.0, (minute + 1) * MINUTE_S - soak.now()))
        expected, heard, _ = missed(soak, soak.now() - HEARD_WITHIN_S)
        row = {"minute": minute + 1, "load": round(os.getloadavg()[0], 1), "rss_mb": round(rss_mb(server), 1),
               "db_connections": await connections(nodes),
               "events_expected": expected, "events_heard": heard,
               "operations": {op: quantiles(values) for op, values in sorted(soak.timings[minute].items())}}
        soak.minutes.append(row)
        say(f"minute {row['minute']}: load {row['load']}, RSS {row['rss_mb']} MB, {row['db_connections']} connections, "
            f"events {heard}/{expected} heard so far")
        for op, q in row["operations"].items():
            say(f"    {op:<12} n={q['n']:>5}  p50 {q['p50_ms']:7.1f} ms  p99 {q['p99_ms']:7.1f} ms  "
                f"max {q['max_ms']:7.1f} ms")
        minute += 1


async def faults(soak: Soak, server: Server, nodes: Nodes) -> None:
    await soak.opened()
    await pause(soak, soak.seconds * 0.25)
    if not soak.going():
        return
    soak.faults.append(f"{soak.now():.0f} s: PostgreSQL restarted (fast)")
    say(soak.faults[-1])
    await asyncio.to_thread(nodes.primary.stop, "fast")
    await asyncio.sleep(1)
    await asyncio.to_thread(nodes.primary.start)
    await pause(soak, soak.seconds * 0.25)
    workers = [pid for parent in children_of(server.process.pid) for pid in children_of(parent)
               if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    if soak.going() and workers:
        soak.faults.append(f"{soak.now():.0f} s: server process {workers[-1]} SIGKILLed")
        say(soak.faults[-1])
        os.kill(workers[-1], signal.SIGKILL)
    await pause(soak, soak.seconds * 0.1)
    if soak.going():
        soak.faults.append(f"{soak.now():.0f} s: replica paused {REPLICA_PAUSE_S:.0f} s")
        say(soak.faults[-1])
        await nodes.standbys[0].pause()
        await asyncio.sleep(REPLICA_PAUSE_S)
        await nodes.standbys[0].resume()


async def set_up(server: Server) -> None:
    """The shop's agent, and its policies: Noor audits, Erin erases, work is kept 30 days (so the sweep that runs
    every minute finds nothing to forget, but runs)."""
    async with AsyncKit(server.url, KIT, retry=PATIENT) as kit:
        await kit.register_agent("Estimator", roles=["Helper"])
        await kit.query('mutation { definePolicies(input: {auditsAgents: ["Auditor"], '
                        'erasesAgentRecords: ["Steward"], retainDays: 30, '
                        'retentionBasis: "The soak forgets what it wrote as stale."}) { retainDays } }')


async def end_checks(soak: Soak, nodes: Nodes) -> dict:
    """What the primary holds against what was acknowledged, and every chain checked by the one checker."""
    deadline = time.monotonic() + 60
    conn = await asyncpg.connect(nodes.url)
    try:
        while time.monotonic() < deadline and await conn.fetchval(
                "SELECT count(*) FROM otlp_span WHERE tenant = $1", TENANT):
            await asyncio.sleep(0.5)
        found = dict(await conn.fetch("SELECT tool_call_id, count(*) FROM trace_event WHERE tenant = $1 "
                                      "AND kind = 'TOOL_CALL' AND tool = 'PartsFor' GROUP BY tool_call_id", TENANT))
        agents = dict(await conn.fetch("SELECT agent, count(*) FROM agent_task WHERE tenant = $1 AND agent LIKE 'A%' "
                                       "GROUP BY agent", TENANT))
        running = await conn.fetchval("SELECT count(*) FROM agent_task WHERE id = ANY($1::uuid[]) "
                                      "AND status = 'RUNNING'", soak.ended)
        swept = [root for root, at in soak.stale if at < soak.seconds - MINUTE_S - SWEPT_WITHIN_S]
        left = await conn.fetchval("SELECT count(DISTINCT root_id) FROM agent_task WHERE root_id = ANY($1::uuid[])",
                                   swept)
    finally:
        await conn.close()
    await db.open_database(nodes.url)
    try:
        broken = [str(root.id) for root in await AgentTask.filter(tenant=TENANT, depth=0)
                  if not (await verify_tree(root)).intact]
        roots = await AgentTask.filter(tenant=TENANT, depth=0).count()
    finally:
        await Tortoise.close_connections()
    return {
        "lines_acknowledged": len(soak.lines), "lines_lost": sum(1 for key in soak.lines if key not in found),
        "lines_twice": sum(1 for n in found.values() if n > 1),
        "traces_acknowledged": len(soak.traces),
        "traces_lost": sum(1 for tag in soak.traces if f"A{tag}" not in agents),
        "traces_twice": sum(1 for n in agents.values() if n > 1),
        "ended_but_running": running, "chains_checked": roots, "chains_broken": len(broken),
        "stale_trees_due": len(swept), "stale_trees_left": left,
    }


async def soak(minutes: float, with_faults: bool, pace: float = 0.0) -> dict:
    async with primary_and_standbys(1) as nodes:
        start_server(nodes.url).stop()
        await tree_read.store(nodes.url, tree := tree_read.fake_tree(TREE_TASKS))
        await nodes.caught_up()
        settings = {"AGENTLOG_READ_DATABASE_URLS": nodes.read_urls(), "AGENTLOG_RETENTION_SWEEP_S": "60"}
        with mock.patch.dict(os.environ, settings):
            server = start_server(nodes.url, "--workers", str(WORKERS))
        try:
            await ready(server)
            await set_up(server)
            run = Soak(seconds=minutes * MINUTE_S, pace=pace)
            say(f"soak: {minutes:g} minutes, {KITS} kits, {EXPORTERS} exporters, {TREE_READERS + LIST_READERS} "
                f"readers, {SUBSCRIBERS} subscribers, an erasure a minute{', faults' if with_faults else ''}"
                f"{f', each client resting {pace:g} s on average between two pieces of work' if pace else ''}…")
            tree_body = {"query": tree_read.nested_query(), "variables": {"id": str(tree.root)}}
            work = [kit_writer(run, server, n) for n in range(KITS)]
            work += [exporter(run, server) for _ in range(EXPORTERS)]
            work += [reader(run, server, "tree read", tree_body, MIA) for _ in range(TREE_READERS)]
            work += [reader(run, server, "task list", {"query": LIST_QUERY}, NOOR) for _ in range(LIST_READERS)]
            work += [subscriber(run, server) for _ in range(SUBSCRIBERS)]
            work += [eraser(run, server), stale_trees(run, nodes), reporter(run, server, nodes)]
            if with_faults:
                work.append(faults(run, server, nodes))
            run.clients = len(work)
            await asyncio.wait_for(asyncio.gather(*work), run.seconds + 300)
            internal = sum(n for (_, code), n in run.codes.items() if code in ("INTERNAL", "HTTP 500"))
        finally:
            server.stop()
        checks = await end_checks(run, nodes)
    expected, heard, silent = missed(run, run.seconds)
    return {"minutes": run.minutes, "faults": run.faults, "outcomes": {f"{op} {code}": n for (op, code), n in
                                                                       sorted(run.codes.items())},
            "internal": internal, "events": {"expected": expected, "heard": heard, "missed_untold": silent,
                                             "subscriptions_told": Counter(w.told for w in run.windows if w.told),
                                             "missed_untold_by": silent_windows(run)},
            "checks": checks}


def verdict(found: dict) -> list[str]:
    """The issue's targets, each met or not."""
    minutes = found["minutes"]
    rss = [row["rss_mb"] for row in minutes]
    said = []
    if len(rss) >= 4:
        growth = (rss[-1] - rss[2]) / rss[2]
        said.append(f"RSS from minute 3 to the end: {rss[2]} -> {rss[-1]} MB ({growth:+.1%}; target within 10 %)")
    else:
        said.append(f"RSS each minute: {rss} MB (too short to judge growth after minute 3)")
    for op, target in (("recordLines", 100), ("tree read", 250)):
        p99 = max((row["operations"][op]["p99_ms"] for row in minutes if op in row["operations"]), default=None)
        said.append(f"worst minute's p99 of {op}: {p99:.1f} ms (target < {target} ms)" if p99 is not None
                    else f"{op}: not measured")
    checks = found["checks"]
    said.append(f"INTERNAL answers: {found['internal']} (target 0)")
    said.append(f"lost: {checks['lines_lost']} of {checks['lines_acknowledged']} lines, {checks['traces_lost']} of "
                f"{checks['traces_acknowledged']} traces; recorded twice: {checks['lines_twice']} lines, "
                f"{checks['traces_twice']} traces (target 0)")
    said.append(f"chains broken: {checks['chains_broken']} of {checks['chains_checked']}; ended tasks RUNNING: "
                f"{checks['ended_but_running']}")
    said.append(f"stale trees the sweep should have forgotten: {checks['stale_trees_due']}, left: "
                f"{checks['stale_trees_left']}")
    events = found["events"]
    said.append(f"events: {events['heard']} of {events['expected']} heard; missed by a subscriber not told why: "
                f"{events['missed_untold']} (target 0); subscriptions ended: {dict(events['subscriptions_told'])}")
    for window in events.get("missed_untold_by", []):
        said.append(f"    a subscription live {window['live_from_s']}-{window['ended_at_s']} s missed {window['missed']} "
                    f"untold (answered {window['first_missed_acked_s']}-{window['last_missed_acked_s']} s), heard "
                    f"{window['heard']}")
    return said


def main(argv: list[str]) -> int:
    minutes = float(argv[0]) if argv and not argv[0].startswith("--") else 10
    pace = float(argv[argv.index("--pace") + 1]) if "--pace" in argv else 0.0
    found = asyncio.run(soak(minutes, "--faults" in argv, pace))
    for line in [*found["faults"], *verdict(found)]:
        print(line)
    print(json.dumps(found, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
