"""Placing a trace sends the same statements however many spans it holds, and an export's own spans are not
read back from the database to be placed."""

from models import AgentTask
from resolvers.otlp_kept import KEPT
from tests.otlp_spans import agent, chat, export, new_trace_id, tool
from tests.shop import Shop
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
    assert await AgentTask.filter(tenant=shop.tenant, agent__startswith="Helper").count() >= helpers
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
