"""Recording model calls, tool calls and tool results: each checked as a draft, then appended in one transaction.

The single mutations record one line and `recordLines` many, through the same code: the tree is
locked once, each line is sealed after the one before it, and the head moves once.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from models import AgentTask, TraceEvent
from models.db import placeholders
from models.line_columns import UUID_COLUMNS
from models.record.vocabulary import LineKind
from permissions.principal import Principal
from resolvers.write import checks, prices, sentences
from resolvers.control import budgets, stop_asks
from resolvers.write.one_statement import Statement, insert
from resolvers.read.rows import LineRow
from resolvers.write.withheld import withheld_reason
from resolvers.write.append import (
    LINE_COLUMNS,
    append_many,
    insert_rows,
    kit_unit,
    new_step,
    now,
    running_task,
    stored_at_once,
)
from resolvers.write.draft import CALL_COLUMNS, CallDraft, LineDraft, MeterRow, meter_row


@dataclass(frozen=True, slots=True)
class Recorded:
    """Where a batch landed in its tree's chain."""

    tenant: str
    task_id: uuid.UUID
    root_id: uuid.UUID
    first: int
    last: int
    last_hash: str
    rows: tuple[tuple, ...] = ()


def model_call(data: dict[str, Any], at: str = "") -> LineDraft:
    model = checks.name(f"{at}model", data.get("model"), required=True)
    attempts = checks.count(f"{at}attempts", 1 if data.get("attempts") is None else data["attempts"], least=1)
    input_tokens = checks.count(f"{at}inputTokens", data.get("input_tokens"))
    output_tokens = checks.count(f"{at}outputTokens", data.get("output_tokens"))
    cached_input_tokens = checks.count(f"{at}cachedInputTokens", data.get("cached_input_tokens"))
    cost = checks.count(f"{at}costMicros", data.get("cost_micros"))
    duration = checks.count(f"{at}durationMs", data.get("duration_ms"))
    by_tool = checks.name(f"{at}byTool", data.get("by_tool"))
    route_rule = checks.name(f"{at}routeRule", data.get("route_rule"))
    provider = checks.name(f"{at}provider", data.get("provider"))
    classification = checks.name(f"{at}classification", data.get("classification"))
    system_prompt = data.get("system_prompt")
    content = {
        "systemPrompt": checks.text(f"{at}systemPrompt", system_prompt, checks.TEXT_CHARS)
        if system_prompt is None or isinstance(system_prompt, str) else system_prompt,
        "messages": data.get("messages"),
        "response": data.get("response"),
    }
    if data.get("evaluations"):
        content["evaluations"] = data["evaluations"]
    payload = checks.json_object(at, content)
    summary = checks.text(f"{at}summary", data.get("summary"))
    if not summary and cost is not None:
        summary = sentences.model_call(model, route_rule, cost, content["response"], by_tool)
    return LineDraft(
        kind=LineKind.MODEL_CALL, summary=summary, payload=payload, model=model, route_rule=route_rule,
        attempts=attempts, cost_micros=cost, input_tokens=input_tokens, output_tokens=output_tokens,
        duration_ms=duration, by_tool=by_tool, classification=classification,
        call=CallDraft(provider=provider, cached_input_tokens=cached_input_tokens, cost_source=prices.KIT,
                       response=content["response"]),
    )


def tool_call(data: dict[str, Any], at: str = "") -> LineDraft:
    tool = checks.name(f"{at}tool", data.get("tool"), required=True)
    tool_call_id = checks.name(f"{at}toolCallId", data.get("tool_call_id"))
    payload = checks.json_text(f"{at}input", data.get("input"))
    summary = checks.text(f"{at}summary", data.get("summary"))
    return LineDraft(
        kind=LineKind.TOOL_CALL, summary=summary or sentences.tool_call(tool, data.get("effect") == "CHANGE"),
        payload=payload, tool=tool, tool_call_id=tool_call_id,
    )


def tool_result(data: dict[str, Any], at: str = "") -> LineDraft:
    tool = checks.name(f"{at}tool", data.get("tool"), required=True)
    tool_call_id = checks.name(f"{at}toolCallId", data.get("tool_call_id"))
    payload = checks.json_text(f"{at}output", data.get("output"))
    duration = checks.count(f"{at}durationMs", data.get("duration_ms"))
    is_error = bool(data.get("is_error") or False)
    summary = checks.text(f"{at}summary", data.get("summary"))
    return LineDraft(
        kind=LineKind.TOOL_RESULT, summary=summary or sentences.tool_result(tool, is_error, duration),
        payload=payload, tool=tool, tool_call_id=tool_call_id, is_error=is_error, duration_ms=duration,
    )


async def _reload(tenant: str, rid: str) -> Recorded:
    """A replayed answer; it answers a stop asked since, as the first answer would now (a kit whose first answer
    was lost learns the stop from the resend)."""
    root_id, first, last = rid.split(":")
    line = await TraceEvent.get(tenant=tenant, root_id=uuid.UUID(root_id), seq=int(last))
    root = await AgentTask.get(id=line.root_id, tenant=tenant)
    if root.stops:
        task = root if line.task_id == root.id else await AgentTask.get(id=line.task_id, tenant=tenant)
        stop_asks.heard(root, task)
    return Recorded(tenant, line.task_id, line.root_id, int(first), int(last), line.hash)


def _written(row: tuple) -> LineRow:
    """A row as stored, read as the row a read of the line gives (a model instance costs ten times more)."""
    fields = dict(zip(LINE_COLUMNS, row))
    for name in UUID_COLUMNS:
        if fields[name] is not None:
            fields[name] = uuid.UUID(fields[name])
    return LineRow(**fields)


async def lines_of(recorded: Recorded) -> list[TraceEvent | LineRow]:
    """The lines as written, or, for a replayed answer, as they stand now."""
    if recorded.rows:
        return [_written(row) for row in recorded.rows]
    return await TraceEvent.filter(
        tenant=recorded.tenant, root_id=recorded.root_id, seq__gte=recorded.first, seq__lte=recorded.last
    ).order_by("seq")


def _result_id(recorded: Recorded) -> str:
    return f"{recorded.root_id}:{recorded.first}:{recorded.last}"


LAST_TURN = 'SELECT MAX("turn") AS "last" FROM "llm_call" WHERE "tenant" = $1 AND "task_id" = $2'
AFTER_LAST_TURN = 'COALESCE(MAX("turn"), 0) + ${}'
TURN = CALL_COLUMNS.index("turn")


async def _next_turn(task: AgentTask, conn: Any) -> int:
    """The agent's turns are numbered 1, 2, … per task on the meter; the next is one past the last (indexed)."""
    rows = await conn.execute_query_dict(placeholders(conn, LAST_TURN), [task.tenant, str(task.id)])
    return (rows[0]["last"] or 0) + 1


@lru_cache(maxsize=1)
def _numbered_sql() -> str:
    values = [AFTER_LAST_TURN.format(at + 1) if at == TURN else f"${at + 1}" for at in range(len(CALL_COLUMNS))]
    names = ",".join(f'"{c}"' for c in CALL_COLUMNS)
    n = len(CALL_COLUMNS)
    return (f'INSERT INTO "llm_call" ({names}) SELECT {",".join(values)} FROM "llm_call" '
            f'WHERE "tenant" = ${n + 1} AND "task_id" = ${n + 2}')


def numbered_as_stored(call: MeterRow) -> Statement:
    """One meter row whose `turn` is given as how many turns after the task's last it comes (1, or None for a
    tool's call): the last is read by the statement itself, under the tree's lock, so it costs no round trip of
    its own. One row only: Citus runs each WITH of a statement as a step of its own, so a second row would see
    the first."""
    return Statement(_numbered_sql(), [*call.row(), call.tenant, call.task_id])


async def record(
    principal: Principal | None, operation: str, data: dict[str, Any], check: Callable[[], list[LineDraft]]
) -> Recorded:
    """Checks every line first, then locks the tree once, appends them in order and moves the head once."""
    crossed: list[budgets.Crossing] = []
    async with kit_unit(principal, operation, data) as unit:
        if unit.first is None:
            recorded = await _record(unit.writer, data, check(), unit.conn, crossed)
            unit.answered(_result_id(recorded))
    if unit.first is not None:
        return await _reload(unit.writer.tenant, unit.first)
    await budgets.tell_crossed(unit.writer.tenant, crossed)
    return recorded


async def _record(kit: Principal, data: dict[str, Any], checked: list[LineDraft], conn: Any,
                  crossed: list[budgets.Crossing]) -> Recorded:
    """The checked lines appended to the task, their meter rows beside them; the budgets they cross are added to
    `crossed`, to be told once the write has committed."""
    metered = any(d.call is not None for d in checked)
    running = await running_task(kit.tenant, "task", data.get("task"), conn, metered=metered)
    task, root, logging = running.task, running.root, running.logging
    at_once = stored_at_once(conn, len(checked))
    numbered_as_written = at_once and sum(d.call is not None for d in checked) == 1
    own_turns = any(d.call and d.by_tool is None for d in checked)
    turn = 1 if numbered_as_written else await _next_turn(task, conn) if own_turns else 0
    every_line = withheld_reason(logging)
    task_id = str(task.id)
    at = now()
    await prices.price_drafts(kit.tenant, [(d, at) for d in checked], conn)
    steps, calls = [], []
    for d in checked:
        at = now()
        reason = every_line or (withheld_reason(logging, d.classification) if d.classification else None)
        call_id = None
        if d.call is not None:
            call_id = uuid.uuid4()
            calls.append(meter_row(d, call_id, task, task_id, None if d.by_tool else turn, at))
            turn += d.by_tool is None
        steps.append(new_step(d, task_id, at, reason, call_id))
    cost = sum(c.cost_micros or 0 for c in calls)
    spend = budgets.Spend(running.limits, tuple(c.id for c in calls)) if running.limits and cost else None
    if at_once:
        if numbered_as_written:
            beside = [numbered_as_stored(calls[0])]
        else:
            beside = [insert("llm_call", CALL_COLUMNS, [c.row() for c in calls])] if calls else []
        rows = await append_many(root, steps, conn, beside=beside, spend=spend)
    else:
        if calls:
            await insert_rows(conn, "llm_call", CALL_COLUMNS, [c.row() for c in calls])
        rows = await append_many(root, steps, conn, spend=spend)
    if spend is not None:
        crossed[:] = budgets.weigh(spend, cost)
        await budgets.owe_crossed(conn, kit.tenant, running.hooks, crossed)
    first, last = steps[0].line, steps[-1].line
    return Recorded(task.tenant, task.id, root.id, first.seq, last.seq, last.hash, tuple(rows))
