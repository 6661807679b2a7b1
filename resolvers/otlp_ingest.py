"""Spans taken from OTLP exports: stored durably on arrival, then placed in the record through the kit's
write path as soon as their agent parent is known, or under a stand-in task once they have waited long enough.

One trace is one work tree. A span waits in `otlp_span` with its body; once placed, its identity is kept in the
`otlp_placed` row of the pass that placed it. Under the trace's lock a span already waiting or placed is not
taken again, so a span sent twice, or a whole export replayed, appends nothing. A line's `at` is the span's own
time; its `seq` is the order placed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import orjson
from tortoise.connection import get_connection
from tortoise.transactions import in_transaction

from models import AgentTask, fast_json
from models.chain import compact_json
from models.db import placeholders
from resolvers import lines, made_task, sentences, settings
from resolvers.events import publish_tasks
from resolvers.kit import ENDED_EVENTS
from resolvers.made_task import MadeTask
from resolvers.otlp_kept import KEPT
from resolvers.otlp_mapping import AGENT, LLM, OTHER, TOOL, Mapped, drafts_of, map_request
from resolvers.pipeline import Pipeline
from resolvers.withheld import withheld_reason
from resolvers.write_path import (
    LINE_COLUMNS, insert_rows, lock_tree, new_step, seal_steps, settle_head,
)

log = logging.getLogger("agentlog.otlp")

STAND_IN_SPAN = "0" * 16
STAND_IN_AGENT = "unknown"
ROOT, STAND_IN = ("root",), ("stand-in",)
MISSING = object()
SEAL_CHUNK = 250
BREATHE_EVERY = 8
Task = AgentTask | MadeTask
RANKS = {"STARTED": 0, "MODEL_CALL": 1, "TOOL_CALL": 1, "TOOL_RESULT": 2, "ENDED": 3}

SPAN_COLUMNS = ("tenant", "trace_id", "span_id", "parent_span_id", "kind", "body", "received_us")
BODY = SPAN_COLUMNS.index("body")
TRACE_SPANS = (
    'SELECT "span_id","parent_span_id","kind","received_us",NULL AS "spans",0 AS "pass" FROM "otlp_span" '
    'WHERE "tenant"=$1 AND "trace_id"=$2 '
    'UNION ALL SELECT NULL,NULL,NULL,NULL,"spans","id" FROM "otlp_placed" WHERE "tenant"=$3 AND "trace_id"=$4'
)
BODIES = {
    "postgres": 'SELECT "span_id","body" FROM "otlp_span" WHERE "tenant"=$1 AND "trace_id"=$2 AND "span_id"=ANY($3)',
    "sqlite": 'SELECT "span_id","body" FROM "otlp_span" WHERE "tenant"=? AND "trace_id"=? '
              'AND "span_id" IN (SELECT "value" FROM json_each(?))',
}
PLACED = 'INSERT INTO "otlp_placed" ("tenant","trace_id","spans") VALUES ($1,$2,$3)'
NO_LONGER_WAITING = {
    "postgres": 'DELETE FROM "otlp_span" WHERE "tenant"=$1 AND "trace_id"=$2 AND "span_id"=ANY($3)',
    "sqlite": 'DELETE FROM "otlp_span" WHERE "tenant"=? AND "trace_id"=? '
              'AND "span_id" IN (SELECT "value" FROM json_each(?))',
}
NONE_WAITING = 'DELETE FROM "otlp_span" WHERE "tenant"=$1 AND "trace_id"=$2'
WAITING = 'SELECT DISTINCT "tenant","trace_id" FROM "otlp_span" WHERE "received_us"<=$1'
SIBLINGS = 'SELECT "parent_id", COUNT(*) AS "n" FROM "agent_task" WHERE "parent_id" IN ({}) GROUP BY "parent_id"'
LAST_TURNS = 'SELECT "task_id", MAX("turn") AS "last" FROM "llm_call" WHERE "task_id" IN ({}) GROUP BY "task_id"'
LOGGING = 'SELECT "name","logging" FROM "agent" WHERE "tenant"=$1 AND "name" IN ({})'


def micros(at: datetime) -> int:
    return int(at.timestamp() * 1_000_000)


def time_of(ns: int) -> datetime:
    return datetime.fromtimestamp(ns / 1e9, timezone.utc)


@dataclass(frozen=True, slots=True)
class Taken:
    """What one export came to: spans taken (stored, or already stored before) and spans rejected, with why;
    and the task events of its placing, for the caller to tell once the export is answered."""

    taken: int
    rejected: int
    message: str | None = None
    events: tuple[tuple[str, Task], ...] = ()


def waiting_row(tenant: str, span: Mapped, received_us: int) -> tuple:
    """The row of a span that must wait: its body kept whole until it is placed."""
    return (tenant, span.trace_id, span.span_id, span.parent_span_id, span.kind, body_text(span), received_us)


def body_text(span: Mapped) -> str:
    """The span's body as JSON text (mapping leaves in it no number JSON cannot hold)."""
    return fast_json.dumps(span.body()).decode()


def placed_entry(span_id: str, parent_span_id: str | None, kind: str, task_id: str | None = None,
                 tool: str | None = None) -> list[str | None]:
    """What `otlp_placed` keeps of a placed span: where it hangs, the task an agent span became, a tool span's
    tool for a model call made inside it that comes later."""
    return [span_id, parent_span_id, kind, task_id, tool]


async def write_placed(conn: Any, tenant: str, trace_id: str, entries: list[list[str | None]]) -> None:
    if entries:
        await conn.execute_query(placeholders(conn, PLACED), [tenant, trace_id, orjson.dumps(entries).decode()])


async def write_unplaced(conn: Any, tenant: str, trace_id: str, waiting: list[tuple],
                         folded: list[list[str | None]]) -> None:
    """Spans taken without a placing: those that must wait, as their rows, and folded spans, placed as they come."""
    if waiting:
        await insert_rows(conn, "otlp_span", SPAN_COLUMNS, waiting)
    await write_placed(conn, tenant, trace_id, folded)


def span_record(span_id: str, parent_span_id: str | None, kind: str, received_us: int | None, placed: bool,
                task_id: str | None = None, tool: str | None = None) -> dict[str, Any]:
    """What placing knows of a span of the trace: where it hangs, whether it is placed (then its task and its
    tool), and when a span still waiting was received."""
    return {"span_id": span_id, "parent_span_id": parent_span_id, "kind": kind, "received_us": received_us,
            "placed": placed, "task_id": task_id, "tool": tool}


async def trace_spans(conn: Any, tenant: str, trace_id: str) -> dict[str, dict[str, Any]]:
    """Every span of the trace taken so far, waiting or placed, by span id; the later pass wins."""
    rows = await conn.execute_query_dict(placeholders(conn, TRACE_SPANS), [tenant, trace_id, tenant, trace_id])
    spans = {}
    passes = []
    for row in rows:
        if row["spans"] is None:
            spans[row["span_id"]] = span_record(row["span_id"], row["parent_span_id"], row["kind"],
                                                row["received_us"], False)
        else:
            passes.append((row["pass"], row["spans"]))
    for _, entries in sorted(passes):
        for span_id, parent_span_id, kind, task_id, tool in orjson.loads(entries):
            spans[span_id] = span_record(span_id, parent_span_id, kind, None, True, task_id, tool)
    return spans


async def store(tenant: str, trace_id: str, spans: dict[str, Mapped], now: datetime) -> None:
    """The spans, durable and waiting, when they could not be placed as they came; a span already taken is left
    as it is."""
    received = micros(now)
    async with in_transaction() as conn:
        await _lock_trace(conn, tenant, trace_id)
        taken = await trace_spans(conn, tenant, trace_id)
        new = [span for span_id, span in spans.items() if span_id not in taken]
        waiting = [waiting_row(tenant, span, received) for span in new if span.kind != OTHER]
        folded = [placed_entry(span.span_id, span.parent_span_id, OTHER) for span in new if span.kind == OTHER]
        await write_unplaced(conn, tenant, trace_id, waiting, folded)


def targets(spans: dict[str, dict[str, Any]], due_us: int) -> dict[str, tuple]:
    """Where each unplaced span goes now: under an existing task ("task", id), under an agent span placed in
    this pass ("span", span id), as a new root, or under the stand-in. Spans that must still wait are left out.
    """
    memo: dict[str, Any] = {}

    def home(span: dict[str, Any]) -> Any:
        parent, steps = span["parent_span_id"], 0
        while parent is not None and steps <= len(spans):
            up = spans.get(parent)
            if up is None:
                return MISSING
            if up["kind"] == AGENT:
                return parent
            parent, steps = up["parent_span_id"], steps + 1
        return None

    def target(span_id: str) -> Any:
        if span_id in memo:
            return memo[span_id]
        memo[span_id] = MISSING
        span = spans[span_id]
        above = home(span)
        if above is MISSING:
            found = STAND_IN if span["received_us"] <= due_us else MISSING
        elif above is None:
            found = ROOT if span["kind"] == AGENT else STAND_IN
        elif spans[above]["placed"]:
            found = ("task", uuid.UUID(str(spans[above]["task_id"])))
        else:
            found = MISSING if target(above) is MISSING else ("span", above)
        memo[span_id] = found
        return found

    placed = {}
    for span_id, span in spans.items():
        if not span["placed"]:
            found = target(span_id)
            if found is not MISSING:
                placed[span_id] = found
    return placed


class Placing:
    """One pass over one trace, inside one transaction: the tasks made, the lines per tree, the spans placed."""

    def __init__(self, tenant: str, trace_id: str, conn: Any, spans: dict[str, dict[str, Any]],
                 found: dict[str, tuple], ids: dict[str, uuid.UUID]) -> None:
        self.tenant, self.trace_id, self.conn = tenant, trace_id, conn
        self.spans, self.found, self.ids = spans, found, ids
        self.bodies: dict[str, dict[str, Any]] = {}
        self.made: dict[str, MadeTask] = {}
        self.stand_in: Task | None = None
        self.tasks: dict[uuid.UUID, Task] = {}
        self.new_tasks: list[MadeTask] = []
        self.roots: dict[uuid.UUID, Task] = {}
        self.children: dict[uuid.UUID, int] = {}
        self.logging: dict[str, str | None] = {}
        self.reasons: dict[str, str | None] = {}
        self.steps: list[tuple[tuple, Any, dict | None, Task]] = []
        self.folded: list[list[str | None]] = []
        self.waited: list[str] = []
        self.none_left_waiting = False
        self.stand_in_entry: list[str | None] | None = None

    async def read(self, db: Pipeline, known: dict[str, Mapped], waiting: list[tuple]) -> None:
        """What the pass needs from the database: the bodies of spans stored earlier and not `known` as mapped,
        the tasks they hang under, the agents' logging, and the trace's stand-in; a span whose task was forgotten
        goes to the stand-in. The export's spans that must wait, and the spans placed, are sent as soon as the
        reads they must follow are."""
        found = self.found
        stored = db.send(_stored_bodies(self.conn, self.tenant, self.trace_id,
                                        [sid for sid in found if sid not in known]))
        stand_in_span = self.spans.get(STAND_IN_SPAN)
        stand_in_id = None if stand_in_span is None or stand_in_span["task_id"] is None \
            else uuid.UUID(str(stand_in_span["task_id"]))
        existing = {t[1] for t in found.values() if t[0] == "task"} | ({stand_in_id} if stand_in_id else set())
        tasks_read = db.send(self.existing(existing))
        if waiting:
            db.send(insert_rows(self.conn, "otlp_span", SPAN_COLUMNS, waiting))
        self.bodies = {row["span_id"]: json.loads(row["body"]) for row in await stored}
        self.bodies.update((sid, known[sid].body()) for sid in found if sid in known)
        await tasks_read
        for sid, target in found.items():
            if target[0] == "task" and target[1] not in self.tasks:
                found[sid] = STAND_IN
        agents = {b["fields"]["agent"] for sid, b in self.bodies.items() if self.spans[sid]["kind"] == AGENT}
        logging_read = db.send(self.agent_logging(agents | {t.agent for t in self.tasks.values()} | {STAND_IN_AGENT}))
        await logging_read
        self.stand_in = self.tasks.get(stand_in_id) if stand_in_id else None
        waiting = [sid for sid, target in found.items() if target is STAND_IN]
        if waiting and self.stand_in is None:
            at = time_of(min(self.bodies[sid]["start"] for sid in waiting))
            self.stand_in = self.make_task(None, {"agent": STAND_IN_AGENT, "skill": STAND_IN_AGENT}, at, at,
                                           False, None, STAND_IN_AGENT)
            self.stand_in_entry = placed_entry(STAND_IN_SPAN, None, AGENT, str(self.stand_in.id))
        db.send(self._record_placed())

    def parent_of(self, target: tuple) -> Task | None:
        if target is ROOT:
            return None
        if target is STAND_IN:
            return self.stand_in
        if target[0] == "task":
            return self.tasks[target[1]]
        return self.made[target[1]]

    def make_agent(self, sid: str, task_id: uuid.UUID) -> None:
        body = self.bodies[sid]
        f = body["fields"]
        self.made[sid] = self.make_task(self.parent_of(self.found[sid]), f, time_of(body["start"]),
                                        time_of(body["end"]), body["failed"], body["statusMessage"],
                                        f.get("actor") or f["agent"], task_id)

    def tool_lines(self, sid: str, mapped: Mapped | None) -> None:
        body = self.bodies[sid]
        task = self.parent_of(self.found[sid])
        call, result = mapped.drafts if mapped is not None else drafts_of(TOOL, body["fields"])
        self.line(task, call.kind, time_of(body["start"]), call.summary, call.payload, call.figures)
        self.line(task, result.kind, time_of(body["end"]), result.summary, result.payload, result.figures)

    def model_call(self, sid: str, mapped: Mapped | None) -> tuple[Any, datetime, Task]:
        """The model call's draft, its time and its task; a call made inside a tool span is that tool's."""
        body = self.bodies[sid]
        tool = self.tool_above(sid)
        if tool is not None:
            draft = drafts_of(LLM, {**body["fields"], "by_tool": tool})[0]
        else:
            draft = mapped.drafts[0] if mapped is not None else drafts_of(LLM, body["fields"])[0]
        return draft, time_of(body["end"]), self.parent_of(self.found[sid])

    def tool_span_above(self, sid: str) -> str | None:
        """The nearest span above that is not folded away, when it is a tool span."""
        parent = self.spans[sid]["parent_span_id"]
        while parent is not None and parent in self.spans and self.spans[parent]["kind"] == OTHER:
            parent = self.spans[parent]["parent_span_id"]
        return parent if parent is not None and parent in self.spans and self.spans[parent]["kind"] == TOOL else None

    def tool_above(self, sid: str) -> str | None:
        """The tool of the nearest mapped span above, when that span is a tool span: placed in this pass, or
        placed earlier and kept its tool's name."""
        parent = self.tool_span_above(sid)
        if parent is None:
            return None
        return self.bodies[parent]["fields"]["tool"] if parent in self.bodies else self.spans[parent]["tool"]

    def store_tasks(self, db: Pipeline) -> None:
        """Sends the tasks made."""
        if self.new_tasks:
            rows = [made_task.stored_row(task) for task in self.new_tasks]
            db.send(insert_rows(self.conn, "agent_task", made_task.COLUMNS, rows))

    async def existing(self, task_ids: set[uuid.UUID]) -> None:
        if not task_ids:
            return
        for task in await AgentTask.filter(id__in=list(task_ids), tenant=self.tenant).using_db(self.conn):
            self.tasks[task.id] = task
        root_ids = sorted({t.root_id for t in self.tasks.values()})
        for root_id in root_ids:
            self.roots[root_id] = await lock_tree(root_id, self.tenant, self.conn)
        marks = ",".join(f"${i}" for i in range(1, len(task_ids) + 1))
        rows = await self.conn.execute_query_dict(
            placeholders(self.conn, SIBLINGS.format(marks)), [str(t) for t in task_ids]
        )
        for row in rows:
            self.children[uuid.UUID(str(row["parent_id"]))] = row["n"]

    async def agent_logging(self, agents: set[str]) -> None:
        if not agents:
            return
        names = sorted(agents)
        marks = ",".join(f"${i}" for i in range(2, len(names) + 2))
        rows = await self.conn.execute_query_dict(placeholders(self.conn, LOGGING.format(marks)), [self.tenant, *names])
        self.logging = {row["name"]: row["logging"] for row in rows}

    def withheld(self, agent: str) -> str | None:
        """Decided once per agent in a pass: the settings are read from the environment on every call."""
        if agent not in self.reasons:
            self.reasons[agent] = withheld_reason(self.logging.get(agent))
        return self.reasons[agent]

    def make_task(self, parent: Task | None, fields: dict[str, Any], start: datetime,
                  end: datetime, failed: bool, message: str | None, actor: str,
                  task_id: uuid.UUID | None = None) -> MadeTask:
        reason = self.withheld(fields["agent"])
        status = "FAILED" if failed else "DONE"
        task_id = task_id or uuid.uuid4()
        if parent is None:
            parent_id, root_id, depth, sequence, path = None, task_id, 0, 1, str(task_id)
        else:
            sequence = self.children[parent.id] = self.children.get(parent.id, 0) + 1
            parent_id, root_id, depth, path = parent.id, parent.root_id, parent.depth + 1, f"{parent.path}/{task_id}"
        result = fields.get("result")
        task = MadeTask(
            id=task_id, tenant=self.tenant, agent=fields["agent"], skill=fields["skill"],
            cause="SPAWN" if parent else "REQUEST", given=None if reason else fields.get("given"),
            requester_id=fields.get("requester"), actor_id=actor, status=status,
            outcome=message if failed else None, result=None if reason or result is None else compact_json(result),
            started_at=start, ended_at=end, session=fields.get("session") or (parent.session if parent else None),
            parent_id=parent_id, root_id=root_id, depth=depth, sequence=sequence, path=path, withheld=reason,
        )
        if parent is None:
            self.roots[task.id] = task
        self.tasks[task.id] = task
        self.new_tasks.append(task)
        requester = {"id": task.requester_id, "name": None} if task.requester_id else None
        self.line(task, "STARTED", start, sentences.started(task.agent, task.skill, requester, parent is not None),
                  task.given, (None,) * 10)
        self.line(task, "ENDED", end, sentences.ended(status), task.result, (None,) * 10)
        return task

    def line(self, task: Task, kind: str, at: datetime, summary: str | None, payload: str | None,
             figures: tuple, by_tool: str | None = None, call: dict | None = None) -> None:
        reason = self.withheld(task.agent)
        step = (kind, summary, None if reason else payload, figures, reason, by_tool)
        self.steps.append(((task.root_id, at, RANKS[kind], len(self.steps)), step, call, task))

    async def seal(self, db: Pipeline) -> list[tuple[Task, int, str, int]]:
        """Sends the meter rows, then seals each tree's lines in order, a chunk at a time, sending each chunk as
        it is sealed so the database stores one while the next is hashed. Returns each tree's new length and head,
        and the lines added."""
        self.steps.sort(key=lambda s: s[0])
        turns = await self._last_turns(db)
        calls, by_root = [], {}
        ids = {task.id: str(task.id) for task in self.tasks.values()}
        for n, ((root_id, at, _, _), (kind, summary, payload, figures, reason, by_tool), call, task) in enumerate(
                self.steps, 1):
            if n % (BREATHE_EVERY * 8) == 0:
                await db.breathe()
            task_id, call_id = ids[task.id], None
            if call is not None:
                call_id = uuid.uuid4()
                turn = None
                if by_tool is None:
                    turn = turns[task.id] = turns.get(task.id, 0) + 1
                calls.append((
                    str(call_id), self.tenant, task_id, task.path, turn, task.agent, call["model"],
                    call["provider"], call["route_rule"], call["attempts"], call["input_tokens"],
                    call["output_tokens"], call["cost_micros"], call["duration_ms"], at, by_tool,
                    call["cost_source"], call["cached_input_tokens"],
                ))
            step = new_step(kind, task_id, at, summary, payload, figures, reason, call_id, by_tool)
            by_root.setdefault(root_id, []).append(step)
        if calls:
            db.send(insert_rows(self.conn, "llm_call", lines.CALL_COLUMNS, calls))
        heads = []
        for root_id, steps in by_root.items():
            root = self.roots[root_id]
            length, head = root.chain_length, root.chain_head
            rows: list[tuple] = []
            for at in range(0, len(steps), BREATHE_EVERY):
                more, length, head = seal_steps(self.tenant, str(root_id), steps[at:at + BREATHE_EVERY], length,
                                                head)
                rows += more
                if len(rows) >= SEAL_CHUNK or at + BREATHE_EVERY >= len(steps):
                    db.send(insert_rows(self.conn, "trace_event", LINE_COLUMNS, rows))
                    rows = []
                await db.breathe()
            heads.append((root, length, head, len(steps)))
        return heads

    async def _record_placed(self) -> None:
        """The pass's spans placed, in one row: those placed now, the export's folded spans and a new stand-in;
        the spans that waited for this pass wait no more (when none of the trace's is left waiting, they are
        deleted by trace, a range of the index rather than a lookup each)."""
        entries = [placed_entry(sid, self.spans[sid]["parent_span_id"], self.spans[sid]["kind"],
                                str(self.ids[sid]) if sid in self.ids else None,
                                self.bodies[sid]["fields"]["tool"] if self.spans[sid]["kind"] == TOOL else None)
                   for sid in self.found]
        if self.stand_in_entry is not None:
            entries.append(self.stand_in_entry)
        await write_placed(self.conn, self.tenant, self.trace_id, entries + self.folded)
        if self.waited and self.none_left_waiting:
            await self.conn.execute_query(placeholders(self.conn, NONE_WAITING), [self.tenant, self.trace_id])
        elif self.waited:
            await self.conn.execute_query(NO_LONGER_WAITING[self.conn.capabilities.dialect],
                                          [self.tenant, self.trace_id, _span_ids(self.conn, self.waited)])

    async def _last_turns(self, db: Pipeline) -> dict[uuid.UUID, int]:
        old = sorted({task.id for *_, call, task in self.steps if call is not None} - {t.id for t in self.new_tasks})
        if not old:
            return {}
        await db.drain()
        marks = ",".join(f"${i}" for i in range(1, len(old) + 1))
        rows = await self.conn.execute_query_dict(placeholders(self.conn, LAST_TURNS.format(marks)),
                                                  [str(t) for t in old])
        return {uuid.UUID(str(r["task_id"])): r["last"] or 0 for r in rows}


async def _lock_trace(conn: Any, tenant: str, trace_id: str) -> None:
    """Placers of one trace take turns (on SQLite the single writer already serialises them)."""
    if conn.capabilities.dialect == "postgres":
        await conn.execute_query("SELECT pg_advisory_xact_lock(hashtext($1))", [f"{tenant}/{trace_id}"])


async def _stored_bodies(conn: Any, tenant: str, trace_id: str, span_ids: list[str]) -> list[dict[str, Any]]:
    """The rows holding the stored bodies of spans that came in earlier exports; the spans of the export being
    taken are not read back."""
    if not span_ids:
        return []
    return await conn.execute_query_dict(BODIES[conn.capabilities.dialect],
                                         [tenant, trace_id, _span_ids(conn, span_ids)])


def _span_ids(conn: Any, span_ids: list[str]) -> Any:
    """Span ids as one parameter: an array on PostgreSQL, JSON text for `json_each` on SQLite."""
    return span_ids if conn.capabilities.dialect == "postgres" else compact_json(span_ids)


def _depth(span_id: str, found: dict[str, tuple]) -> int:
    depth, target = 0, found[span_id]
    while target[0] == "span":
        depth, target = depth + 1, found[target[1]]
    return depth


async def place_trace(tenant: str, trace_id: str, now: datetime, wait_s: float,
                      fresh: dict[str, Mapped] | None = None, told: list[tuple[str, Task]] | None = None) -> int:
    """Stores the spans of the export being taken (`fresh`) and places every span of the trace that can be placed
    now, in one transaction; returns how many were placed. A fresh span placed at once is never written to wait;
    one that must wait is stored with its body. Fresh spans, and waiting spans this process keeps
    (`otlp_kept`), are used as mapped; the others as stored. Its task events are told once it has committed,
    or, given `told`, added to it for the caller to tell."""
    fresh = fresh or {}
    received = micros(now)
    placing = None
    async with in_transaction() as conn:
        await _lock_trace(conn, tenant, trace_id)
        spans = await trace_spans(conn, tenant, trace_id)
        new = {sid: span for sid, span in fresh.items() if sid not in spans}
        for sid, span in new.items():
            spans[sid] = span_record(sid, span.parent_span_id, span.kind, received, span.kind == OTHER)
        found = targets(spans, received - int(wait_s * 1_000_000))
        waiting = {sid: waiting_row(tenant, span, received) for sid, span in new.items()
                   if sid not in found and span.kind != OTHER}
        folded = [placed_entry(sid, span.parent_span_id, OTHER) for sid, span in new.items() if span.kind == OTHER]
        if found:
            ids = {sid: uuid.uuid4() for sid in found if spans[sid]["kind"] == AGENT}
            placing = Placing(tenant, trace_id, conn, spans, found, ids)
            placing.folded, placing.waited = folded, [sid for sid in found if sid not in new]
            placing.none_left_waiting = all(sid in found for sid, span in spans.items()
                                            if not span["placed"] and sid not in new)
            await _place(conn, placing, list(waiting.values()), {**KEPT.of(tenant, trace_id), **fresh})
        else:
            await write_unplaced(conn, tenant, trace_id, list(waiting.values()), folded)
    KEPT.keep(tenant, trace_id, [(new[sid], len(row[BODY])) for sid, row in waiting.items()])
    if placing is None:
        return 0
    KEPT.drop(tenant, trace_id, found)
    events = [("AgentTaskStarted", task) for task in placing.new_tasks]
    events += [(ENDED_EVENTS[task.status], task) for task in placing.new_tasks]
    if told is None:
        await publish_tasks(events)
    else:
        told += events
    return len(found)


async def _place(conn: Any, placing: Placing, waiting: list[tuple], known: dict[str, Mapped]) -> None:
    """The pass itself, given the rows of the export's spans that must still wait: once what it reads is read,
    its writes go out through a pipeline while the tasks and lines are made and sealed, so the database stores
    one part while Python makes the next."""
    tenant, spans, found, ids = placing.tenant, placing.spans, placing.found, placing.ids
    async with Pipeline() as db:
        await placing.read(db, known, waiting)
        agents = sorted(ids, key=lambda s: _depth(s, found))
        for n, sid in enumerate(agents, 1):
            placing.make_agent(sid, ids[sid])
            if n % BREATHE_EVERY == 0:
                await db.breathe()
        placing.store_tasks(db)
        priced = []
        for n, (sid, target) in enumerate(found.items(), 1):
            if spans[sid]["kind"] == TOOL:
                placing.tool_lines(sid, known.get(sid))
            elif spans[sid]["kind"] == LLM:
                priced.append(placing.model_call(sid, known.get(sid)))
            if n % BREATHE_EVERY == 0:
                await db.breathe()
        if any(draft.call["cost_micros"] is None for draft, _, _ in priced):
            await db.drain()
            await lines.price_drafts(tenant, [(draft, at) for draft, at, _ in priced], conn)
        for draft, at, task in priced:
            placing.line(task, draft.kind, at, draft.summary, draft.payload, draft.figures, draft.by_tool,
                         draft.call)
        heads = await placing.seal(db)
    for root, length, head, added in heads:
        await settle_head(root, length, head, added, conn)


async def sweep(now: datetime | None = None, everything: bool = False) -> int:
    """Places the spans that have waited long enough; with `everything` (on start), every trace with spans not
    yet placed, so nothing acknowledged before a crash stays unplaced. Returns the traces tried."""
    when = now or datetime.now(timezone.utc)
    due = micros(when) - (0 if everything else int(settings.otlp_wait_s() * 1_000_000))
    conn = get_connection("default")
    rows = await conn.execute_query_dict(placeholders(conn, WAITING), [due])
    for row in rows:
        try:
            await place_trace(row["tenant"], row["trace_id"], when, settings.otlp_wait_s())
        except Exception:
            log.exception("could not place trace %s yet; it stays stored and is tried again", row["trace_id"])
    return len(rows)


async def take_export(tenant: str, request: Any, now: datetime | None = None) -> Taken:
    """Maps the export's spans, then per trace stores them and places what can be placed, durably before the
    export is acknowledged. Should placing fail, the spans are stored to wait for the sweep; should storing fail
    too, the export is refused. The count of spans taken and rejected is the export's answer; the task events
    of what was placed are the caller's to tell, after answering."""
    mapped, rejected, message = map_request(request)
    when = now or datetime.now(timezone.utc)
    traces: dict[str, dict[str, Mapped]] = {}
    for span in mapped:
        traces.setdefault(span.trace_id, {}).setdefault(span.span_id, span)
    told: list[tuple[str, Task]] = []
    for trace_id in sorted(traces):
        try:
            await place_trace(tenant, trace_id, when, settings.otlp_wait_s(), traces[trace_id], told)
        except Exception:
            await store(tenant, trace_id, traces[trace_id], when)
            log.exception("could not place trace %s yet; its spans are stored and tried again", trace_id)
    return Taken(len(mapped), rejected, message, tuple(told))


@asynccontextmanager
async def sweeping() -> AsyncIterator[None]:
    """While the server runs: on start, every trace with spans not yet placed; then, over and over, the spans
    that have waited AGENTLOG_OTLP_WAIT_S."""

    async def loop() -> None:
        everything = True
        while True:
            try:
                await sweep(everything=everything)
                everything = False
            except Exception:
                log.exception("the sweep of waiting spans failed; it runs again")
            await asyncio.sleep(min(5.0, max(0.05, settings.otlp_wait_s() / 4)))

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
