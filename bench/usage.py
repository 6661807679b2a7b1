"""Usage over time on the 100,000-task shop (`python -m bench.usage`): 100,000 finished tasks of 8 agents, 20
skills and 50 requesters, with 300,000 model calls on 5 models spread over 30 days, made in the database by
generate_series; then each `usage` grouping of the last 30 days by day, and of the last 7 days by hour, timed as
a manager (the whole tenant) and as one requester (the trees they asked for): first fresh, as written (analysed,
not yet vacuumed: every row's visibility is read from the table), then settled, after VACUUM ANALYZE (as
autovacuum leaves a table that is only inserted into). Prints the median of five runs of each, in ms, with the
slowest run."""

from __future__ import annotations

import asyncio
import statistics
import time
from datetime import UTC, datetime, timedelta

from tortoise.connection import get_connection

from bench.common import TENANT, fresh_database
from models import TenantPolicies
from permissions.access import Access
from permissions.principal import Principal
from resolvers.read.usage import UsageBucket, UsageGroup, read_usage

TASKS, CALLS, RUNS = 100_000, 300_000, 5

SEED = f"""
INSERT INTO agent_task (id, tenant, agent, skill, cause, requester_id, actor_id, status, started_at, ended_at,
  root_id, depth, sequence, path, chain_length, chain_head)
SELECT id, '{TENANT}', 'Agent' || (n % 8), 'Skill' || (n % 20), 'REQUEST', 'person' || (n % 50), 'agent',
  CASE WHEN n % 17 = 0 THEN 'FAILED' ELSE 'DONE' END, at, at + interval '40 seconds', id, 0, 0, id::text, 3,
  repeat('0', 64)
FROM (SELECT n, md5(n::text)::uuid AS id, now() - (n % 720) * interval '1 hour' AS at
      FROM generate_series(1, {TASKS}) AS n) AS s;
INSERT INTO llm_call (id, tenant, task_id, task_path, agent, model, attempts, input_tokens, output_tokens,
  cost_micros, cost_source, at)
SELECT md5('c' || n::text)::uuid, '{TENANT}', t.id, t.path, t.agent, 'Model' || (n % 5), 1, 120, 30, 200, 'KIT',
  t.started_at + interval '5 seconds'
FROM generate_series(1, {CALLS}) AS n JOIN agent_task t ON t.id = md5((1 + n % {TASKS})::text)::uuid;
ANALYZE agent_task; ANALYZE llm_call;
"""


async def timed(access: Access, start: datetime, end: datetime, bucket: UsageBucket,
                group: UsageGroup) -> list[float]:
    times = []
    for _ in range(RUNS):
        began = time.perf_counter()
        await read_usage(access, start, end, bucket, group)
        times.append((time.perf_counter() - began) * 1000)
    return times


async def every_grouping(state: str) -> None:
    now = datetime.now(UTC)
    readers = {"manager": Principal("noor", TENANT, roles=frozenset({"Manager"})),
               "requester": Principal("person7", TENANT, roles=frozenset({"Mechanic"}))}
    for who, principal in readers.items():
        for days, bucket in ((30, UsageBucket.DAY), (7, UsageBucket.HOUR)):
            for group in UsageGroup:
                ms = await timed(Access(principal), now - timedelta(days=days), now, bucket, group)
                print(f"{state:7} {who:9} {days:2} d by {bucket.value.lower():4} {group.value:9} "
                      f"{statistics.median(ms):7.1f} ms (slowest {max(ms):.1f})")


async def main() -> None:
    async with fresh_database():
        conn = get_connection("default")
        await conn.execute_script(SEED)
        await TenantPolicies.create(tenant=TENANT, supervises_agents=["Manager"])
        await every_grouping("fresh")
        for table in ("agent_task", "llm_call"):
            await conn.execute_script(f"VACUUM ANALYZE {table}")
        await every_grouping("settled")


if __name__ == "__main__":
    asyncio.run(main())
