"""On PostgreSQL a pass leaves what it placed in one statement (`resolvers/otlp/store.py`, `placed_now`): the spans
placed kept, their waiting rows deleted, the tasks start markers opened kept and those ended let go of. Tried against
the four statements one after another, in the same pass on the same connection (the one statement undone to a
savepoint first): for exports of any trace, with markers, in any order and replayed (the scenarios of
tests/test_otlp_nothing_lost.py), both leave the trace's rows alike."""

from __future__ import annotations

import pytest
from hypothesis import given

from resolvers.otlp import store
from tests.otlp_spans import agent, chat, export, marker, new_trace_id
from tests.shop import Shop
from tests.test_otlp_ingest import post
from tests.test_otlp_nothing_lost import IN_PROCESS, posted, scenarios

pytestmark = pytest.mark.postgres_only

ROWS = (
    'SELECT "span_id","parent_span_id","kind","task_id","tool" FROM "otlp_placed_span" '
    'WHERE "tenant"=$1 AND "trace_id"=$2 ORDER BY "span_id"',
    'SELECT "span_id","task_id","seen_us" FROM "otlp_open_task" WHERE "tenant"=$1 AND "trace_id"=$2 ORDER BY "span_id"',
    'SELECT "span_id","parent_span_id","kind","body","received_us" FROM "otlp_span" '
    'WHERE "tenant"=$1 AND "trace_id"=$2 ORDER BY "span_id"',
)


async def rows_of(conn, tenant: str, trace_id: str) -> list[list[dict]]:
    return [await conn.execute_query_dict(sql, [tenant, trace_id]) for sql in ROWS]


def comparing(agreed: list[bool], at_once: list[bool]):
    """`placed_now` as a pass calls it: in one statement, the trace's rows read and the statement undone; then one
    statement after another. Each call adds whether both left the same rows, and whether it had one statement."""
    original = store.placed_now

    async def both(conn, tenant, trace_id, spans, waited, opening, seen_us, closing):
        await conn.execute_query("SAVEPOINT placed_now")
        await original(conn, tenant, trace_id, spans, waited, opening, seen_us, closing)
        one = await rows_of(conn, tenant, trace_id)
        await conn.execute_query("ROLLBACK TO SAVEPOINT placed_now")
        below, store.AT_ONCE_BELOW = store.AT_ONCE_BELOW, 0
        try:
            await original(conn, tenant, trace_id, spans, waited, opening, seen_us, closing)
        finally:
            store.AT_ONCE_BELOW = below
        agreed.append(one == await rows_of(conn, tenant, trace_id))
        at_once.append(len(spans) < below and bool(opening or closing or waited))

    return both


@given(scenario=scenarios())
@IN_PROCESS
async def test_a_pass_leaves_its_spans_alike_in_one_statement_or_four(client, scenario):
    shop = Shop(client)
    await shop.setup()
    agreed: list[bool] = []
    at_once: list[bool] = []
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(store, "placed_now", comparing(agreed, at_once))
        await posted(shop, scenario, "o")
    assert all(agreed)


async def test_each_part_of_the_one_statement_is_tried(client):
    """A root opened by its marker, a model call that waits for its helper, the helper (the call waited no more),
    then the root's span, which ends the task its marker opened: each pass has one statement, and it agrees."""
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")
    helper = agent(t, "Helper", parent=root.span_id)
    agreed: list[bool] = []
    at_once: list[bool] = []
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(store, "placed_now", comparing(agreed, at_once))
        for sent in ([marker(root)], [chat(t, helper.span_id)], [helper], [root]):
            assert (await post(shop, export(*sent))).status_code == 200
    assert agreed == [True, True, True]
    assert at_once == [True, True, True]
