"""The raw OTLP receiver the benchmark measures agentlog against: it reads from an export what the SDK put in it,
and the tree it writes from the exporter's batches, children first, is one agentlog verifies whole."""

import asyncpg
import pytest

from bench.otlp import AGENTS, LINES, LLMS, SPANS, make_spans, root_of, sdk_span, stored
from bench.otlp_raw import KEPT_TABLE, Receiver, bodies, by_trace
from models import AgentTask
from resolvers.read.verify import verify_tree


def test_the_exports_carry_the_spans_the_sdk_made():
    made = make_spans()
    taken = [span for body in bodies(made) for trace in by_trace(body).values() for span in trace]

    assert [(s.span_id, s.parent_id) for s in taken] == [
        (s.span_id.to_bytes(8, "big"), s.parent_id.to_bytes(8, "big") if s.parent_id else None)
        for s in map(sdk_span, made)
    ]
    assert [(s.name, s.start, s.end, dict(s.attributes)) for s in taken] == [
        (s.name, s.start, s.end, dict(s.attributes)) for s in map(sdk_span, made)
    ]
    assert {root_of(trace) for body in bodies(made) for trace in by_trace(body)} == {root_of(made[0].context.trace_id)}


@pytest.mark.postgres_only
async def test_the_tree_waits_for_its_root_and_then_verifies_even_across_a_restart(database):
    made = make_spans()
    first, last = bodies(made)
    root = root_of(made[0].context.trace_id)
    conn = await asyncpg.connect(database)
    try:
        for statement in KEPT_TABLE:
            await conn.execute(statement)
        await Receiver().take(conn, first)
        assert await stored(conn, str(root)) == (0, 0, 0)

        restarted = Receiver()
        await restarted.load(conn)
        await restarted.take(conn, last)

        assert await stored(conn, str(root)) == (AGENTS, LINES, LLMS)
        assert await conn.fetchval("SELECT count(*) FROM otlp_raw_kept") == 0
        check = await verify_tree(await AgentTask.get(id=root))
        assert check.intact and check.lines == LINES and len(made) == SPANS
    finally:
        await conn.execute("DROP TABLE IF EXISTS otlp_raw_kept")
        await conn.close()
