"""An export placing spans under tasks start markers opened (SPEC 9.1) costs the same statements however many spans
it places and however many of those tasks it places under and ends: the tasks are read and their trees' roots locked
in one statement (two on SQLite), how many children each has, its last turn and its agent's logging read in one, and
their ends written in one.

Counted as tests/statements.py counts them (each statement sent through the connection's own methods), the export
of two helpers cost 14 statements and that of six 18 on SQLite (15 and 19 on PostgreSQL): one more for each task it
ended, one for the last turns, read once the pass's writes had drained, and two for the trace's opened tasks, read
and then marked seen. Now both cost 8 on SQLite and 6 on PostgreSQL, where the trace's lock is a statement of its
own, the opened tasks are marked seen in the statement that looks the export's spans up, the tasks are read and their
roots locked in one, the spans placed are kept and the ended tasks' markers let go of in one, and the tree's head is
moved and signed in one."""

from tortoise.connection import get_connection

from models import TraceEvent
from tests.otlp_spans import agent, chat, export, marker, new_trace_id, tool
from tests.shop import Shop
from tests.statements import counted
from tests.test_otlp_ingest import post, roots

CALLS = 10


async def kinds(task_id: str) -> list[str]:
    return [line.kind for line in await TraceEvent.filter(task_id=task_id).order_by("seq")]


async def helpers_under_markers(shop: Shop, helpers: int) -> list[str]:
    """A root and its helpers opened by their markers; then one export with each helper's model calls, its tool
    and its own span, which ends it. Returns the statements of that export."""
    t = new_trace_id()
    root = agent(t, "Estimator")
    made = [agent(t, f"Helper{n}", parent=root.span_id) for n in range(helpers)]
    assert (await post(shop, export(marker(root), *(marker(h) for h in made)))).status_code == 200
    work = []
    for helper in made:
        work += [chat(t, helper.span_id, **{"agentlog.cost_micros": 10}) for _ in range(CALLS)]
        work += [tool(t, helper.span_id), helper]
    with counted() as sent:
        assert (await post(shop, export(*work))).status_code == 200
    return sent


async def test_an_export_under_opened_tasks_costs_the_same_statements_for_two_tasks_or_six(client):
    shop = Shop(client)
    await shop.setup()

    two = await helpers_under_markers(shop, 2)
    six = await helpers_under_markers(shop, 6)

    postgres = get_connection("default").capabilities.dialect == "postgres"
    assert len(six) == len(two) == (6 if postgres else 8)
    [root] = [r for r in await roots(shop) if len(r["children"]) == 6]
    assert root["status"] == "RUNNING"
    for child in root["children"]:
        assert child["status"] == "DONE"
        told = await kinds(child["id"])
        assert (told[0], told[-1]) == ("STARTED", "ENDED")
        assert sorted(told[1:-1]) == sorted(["MODEL_CALL"] * CALLS + ["TOOL_CALL", "TOOL_RESULT"])
    assert (await shop.verify(root["id"]))["intact"] is True
