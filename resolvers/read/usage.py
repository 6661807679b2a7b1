"""`usage`: spend, tokens and calls over time, summed from the meter (never from stored totals), and the work that
failed, by agent, model, skill or requester, as the caller may see them.

One grouped statement: the meter's rows in the range, bucketed by hour or day and keyed by the group, beside the
tasks that ended FAILED in the range (by model there is no such count: a failure is a task's, not a model's). A
person without a standing capability sums only the work under the tasks they asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any

from tortoise.transactions import in_transaction

from models.errors import BadInput, Forbidden
from models.record.vocabulary import TaskStatus
from permissions.access import Access, Group, ListScope
from resolvers.read.rows import ReadQuery
from resolvers.read.task_list import TaskFilter, conditions

MAX_BUCKETS = 2000


class UsageBucket(str, Enum):
    HOUR = "HOUR"
    DAY = "DAY"


class UsageGroup(str, Enum):
    AGENT = "AGENT"
    MODEL = "MODEL"
    SKILL = "SKILL"
    REQUESTER = "REQUESTER"


STEP = {UsageBucket.HOUR: timedelta(hours=1), UsageBucket.DAY: timedelta(days=1)}
SECONDS = {UsageBucket.HOUR: 3600, UsageBucket.DAY: 86400}
PLANNED = "SELECT set_config('jit', 'off', true), set_config('plan_cache_mode', 'force_custom_plan', true)"
METER_KEY = {UsageGroup.AGENT: "l.agent", UsageGroup.MODEL: "l.model", UsageGroup.SKILL: "t.skill",
             UsageGroup.REQUESTER: "t.requester_id"}
TASK_KEY = {UsageGroup.AGENT: "agent", UsageGroup.SKILL: "skill", UsageGroup.REQUESTER: "requester_id"}


@dataclass
class UsagePoint:
    at: datetime
    key: str | None
    cost_micros: int
    input_tokens: int
    output_tokens: int
    calls: int
    failures: int | None


def _bucket(q: ReadQuery, column: str, bucket: UsageBucket) -> str:
    """The bucket's number since 1970 in UTC: cheaper to work out and to group by than a formatted time. On
    PostgreSQL in double precision (`date_part`), exact to the microsecond for any time of this era, where
    `extract` works in numeric, which took a quarter of the time of a month of the meter."""
    if q.postgres:
        return f"floor(date_part('epoch', {column}) / {SECONDS[bucket]})::bigint"
    return f"CAST(strftime('%s', {column}) AS INTEGER) / {SECONDS[bucket]}"


def check(start: datetime, end: datetime, bucket: UsageBucket) -> tuple[datetime, datetime]:
    start, end = (t if t.tzinfo else t.replace(tzinfo=UTC) for t in (start, end))
    if end <= start:
        raise BadInput("to: give a time after from.", field="to")
    if (end - start) / STEP[bucket] > MAX_BUCKETS:
        raise BadInput(f"to: a range of at most {MAX_BUCKETS} buckets of a {bucket.value.lower()}; "
                       "ask for days over a longer range.", field="to")
    return start.astimezone(UTC), end.astimezone(UTC)


def _meter(q: ReadQuery, caller: ListScope, group: UsageGroup, bucket: UsageBucket, start: datetime, end: datetime) -> str:
    joined = group in (UsageGroup.SKILL, UsageGroup.REQUESTER)
    sql = (f"SELECT {_bucket(q, 'l.at', bucket)} AS b, {METER_KEY[group]} AS k, SUM(l.cost_micros) AS micros, "
           "SUM(l.input_tokens) AS tin, SUM(l.output_tokens) AS tout, COUNT(*) AS calls, 0 AS failures "
           "FROM llm_call l")
    if joined:
        sql += " LEFT JOIN agent_task t ON t.tenant = l.tenant AND t.id = l.task_id"
    sql += f" WHERE l.tenant = {q.param(caller.tenant)} AND l.at >= {q.param(start)} AND l.at < {q.param(end)}"
    if caller.asker is not None:
        sql += f" AND l.task_id IN (SELECT id FROM agent_task WHERE {conditions(q, caller, TaskFilter())})"
    return sql + " GROUP BY 1, 2"


def _failed(q: ReadQuery, caller: ListScope, group: UsageGroup, bucket: UsageBucket, start: datetime, end: datetime) -> str:
    return (f"SELECT {_bucket(q, 'ended_at', bucket)} AS b, {TASK_KEY[group]} AS k, 0, 0, 0, 0, COUNT(*) "
            f"FROM agent_task WHERE {conditions(q, caller, TaskFilter(status=TaskStatus.FAILED.value))} "
            f"AND ended_at >= {q.param(start)} AND ended_at < {q.param(end)} GROUP BY 1, 2")


async def _rows(q: ReadQuery, sql: str) -> Sequence[Any]:
    """On PostgreSQL without JIT: the subtree scans of a requester's work make the planner's estimate large
    enough to compile the statement, which took seconds where running it takes milliseconds. And planned for its
    own range each time: after five runs a prepared statement may be given a plan for any range, which reads a
    month of the meter through the time index, at twice the time of a scan."""
    if not q.postgres:
        return await q.rows(sql)
    async with in_transaction() as conn:
        await conn.execute_query(PLANNED)
        return await q.rows(sql)


async def read_usage(access: Access, start: datetime, end: datetime, bucket: UsageBucket,
                     group: UsageGroup) -> list[UsagePoint]:
    """The buckets that have anything in them, oldest first, then by key."""
    start, end = check(start, end, bucket)
    if group is UsageGroup.REQUESTER and not await access.may_filter_on(Group.WORDS):
        raise Forbidden("groupBy: you may not read who asked for the work, so you may not group by it.",
                        field="groupBy")
    caller = await access.list_scope()
    if caller is None:
        return []
    q = ReadQuery()
    parts = [_meter(q, caller, group, bucket, start, end)]
    if group in TASK_KEY:
        parts.append(_failed(q, caller, group, bucket, start, end))
    sql = (f"SELECT b, k, SUM(micros), SUM(tin), SUM(tout), SUM(calls), SUM(failures) "
           f"FROM ({' UNION ALL '.join(parts)}) AS u GROUP BY b, k ORDER BY b, k")
    return [
        UsagePoint(at=datetime.fromtimestamp(int(b) * SECONDS[bucket], UTC), key=k, cost_micros=int(micros), input_tokens=int(input_tokens),
                   output_tokens=int(output_tokens), calls=int(calls),
                   failures=int(failures) if group in TASK_KEY else None)
        for b, k, micros, input_tokens, output_tokens, calls, failures in await _rows(q, sql)
    ]
