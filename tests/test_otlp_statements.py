"""Placing a trace sends the same statements however many spans it holds, an export's own spans are not read
back from the database to be placed, and an export costs what it carries, not what its trace already holds."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tortoise.connection import get_connection

from models import OtlpSpan
from resolvers.otlp.kept import KEPT
from tests.otlp_spans import agent, chat, export, new_trace_id, tool
from tests.shop import Shop, work
from tests.statements import counted
from tests.test_otlp_ingest import post


def helpers_then_root(helpers: int):
    """Helpers with a model call and a tool each, sent before the root agent they hang under, as exporters do."""
    t = new_trace_id()
    root = agent(t, "Estimator")
    waiting = []
    for n in range(helpers):
        helper = agent(t, f"Helper{n}", parent=root.span_id)
        waiting += [chat(t, helper.span_id, **{"agentlog.cost_micros": 10}), tool(t, helper.span_id), helper]
    return export(*waiting), export(chat(t, root.span_id, **{"agentlog.cost_micros": 10}), root)


async def placing_statements(shop: Shop, helpers: int, kept: bool = True) -> list[str]:
    """The statements of the export that completes the trace; with `kept` false this process has no copy of the
    spans that waited, as another process or this one after a restart."""
    first, last = helpers_then_root(helpers)
    assert (await post(shop, first)).status_code == 200
    if not kept:
        KEPT.clear()
    with counted() as sent:
        assert (await post(shop, last)).status_code == 200
    assert await work(shop.tenant).filter(agent__startswith="Helper").count() >= helpers
    return sent


def body_reads(sent: list[str]) -> int:
    return sum('"body"' in sql and sql.lstrip().upper().startswith("SELECT") for sql in sent)


async def test_placing_a_trace_takes_the_same_statements_for_three_spans_or_three_hundred(client):
    shop = Shop(client)
    await shop.setup()

    small = await placing_statements(shop, 1)
    large = await placing_statements(shop, 100)

    assert len(large) == len(small)
    assert body_reads(large) == 0


async def test_spans_that_waited_in_another_process_are_read_back_in_one_statement(client):
    shop = Shop(client)
    await shop.setup()

    small = await placing_statements(shop, 1, kept=False)
    large = await placing_statements(shop, 100, kept=False)

    assert len(large) == len(small)
    assert body_reads(large) == 1


async def test_an_export_placed_at_once_reads_no_span_body_back(client):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")

    with counted() as sent:
        response = await post(shop, export(chat(t, root.span_id, **{"agentlog.cost_micros": 10}), tool(t, root.span_id),
                                           root))

    assert response.status_code == 200
    assert body_reads(sent) == 0


@contextmanager
def rows_read() -> Iterator[list[int]]:
    """The rows each statement sent through the tortoise connection answered while the block runs."""
    cls = type(get_connection("default"))
    originals = {name: getattr(cls, name) for name in ("execute_query", "execute_query_dict")}
    answered: list[int] = []

    async def query(self: Any, sql: str, values: Any = None) -> Any:
        result = await originals["execute_query"](self, sql, values)
        answered.append(len(result[1]))
        return result

    async def query_dict(self: Any, sql: str, values: Any = None) -> Any:
        result = await originals["execute_query_dict"](self, sql, values)
        answered.append(len(result))
        return result

    cls.execute_query, cls.execute_query_dict = query, query_dict
    try:
        yield answered
    finally:
        for name, original in originals.items():
            setattr(cls, name, original)


async def costs_of_exports(shop: Shop, root_first: bool, exports: int) -> list[tuple[int, int]]:
    """(statements, rows read) of each export of one growing trace: a helper with a model call and a tool each,
    under a root agent sent first (each export placed at once) or never sent (every export waits)."""
    t = new_trace_id()
    root = agent(t, "Estimator")
    if root_first:
        assert (await post(shop, export(root))).status_code == 200
    costs = []
    for n in range(exports):
        helper = agent(t, f"Helper{n}", parent=root.span_id)
        spans = export(chat(t, helper.span_id, **{"agentlog.cost_micros": 10}), tool(t, helper.span_id), helper)
        with counted() as sent, rows_read() as answered:
            assert (await post(shop, spans)).status_code == 200
        costs.append((len(sent), sum(answered)))
    return costs


async def test_the_thirtieth_export_of_a_trace_costs_what_the_third_does(client):
    shop = Shop(client)
    await shop.setup()

    placed = await costs_of_exports(shop, root_first=True, exports=30)
    waiting = await costs_of_exports(shop, root_first=False, exports=30)

    assert placed[29] == placed[2] and waiting[29] == waiting[2]
    assert await work(shop.tenant).filter(agent="Helper29").count() == 1
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 30 * 3
