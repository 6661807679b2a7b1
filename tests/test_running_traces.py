"""Provisional work (SPEC 9.1): spans that wait are readable as `runningTraces` as soon as the export that carried
them is answered, without content and outside the record, by the tenant's supervisors, auditors, those who read
all agent work, and the kit; once placed, a span leaves it."""

import pytest

from tests.otlp_spans import agent, chat, export, new_trace_id, tool
from tests.shop import ROLES, Shop, work_lines
from tests.test_otlp_ingest import post, roots

RUNNING = """query($first: Int, $after: String) { runningTraces(first: $first, after: $after) {
  totalCount pageInfo { hasNextPage endCursor }
  edges { cursor node { traceId firstSeenAt lastSeenAt spanCount modelCalls toolCalls inputTokens outputTokens
    spans { spanId parentSpanId name kind agent model tool inputTokens outputTokens startedAt endedAt failed } } }
} }"""


async def running(shop: Shop, token: str, **variables) -> dict:
    return (await shop.client.ok(RUNNING, variables, token))["runningTraces"]


def running_estimate(t: bytes):
    """The Estimator still running: a helper sub-agent, a model call of each, and a tool, all ended."""
    root = agent(t, "Estimator")
    helper = agent(t, "Stockist", parent=root.span_id)
    return root, [chat(t, root.span_id, "Everyday"), tool(t, root.span_id, "PartsFor"), helper,
                  chat(t, helper.span_id, "Quick", **{"gen_ai.input.messages": [{"role": "user", "content": "T-7"}]})]


async def test_spans_waiting_are_readable_right_after_the_export_answered_and_leave_once_placed(client):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root, children = running_estimate(t)

    response = await post(shop, export(*children))
    assert response.status_code == 200

    page = await running(shop, shop.noor)
    assert page["totalCount"] == 1 and page["pageInfo"]["hasNextPage"] is False
    [trace] = [edge["node"] for edge in page["edges"]]
    assert trace["traceId"] == t.hex()
    assert (trace["spanCount"], trace["modelCalls"], trace["toolCalls"]) == (4, 2, 1)
    assert (trace["inputTokens"], trace["outputTokens"]) == (240, 60)
    spans = {s["spanId"]: s for s in trace["spans"]}
    helper = spans[children[2].span_id.hex()]
    assert (helper["kind"], helper["agent"], helper["parentSpanId"]) == ("AGENT", "Stockist", root.span_id.hex())
    quick = spans[children[3].span_id.hex()]
    assert (quick["kind"], quick["model"], quick["parentSpanId"], quick["failed"]) == (
        "MODEL_CALL", "Quick", children[2].span_id.hex(), False)
    assert spans[children[1].span_id.hex()]["tool"] == "PartsFor"
    assert "T-7" not in str(page)
    assert await work_lines(shop.tenant).count() == 0

    await post(shop, export(root))

    assert (await running(shop, shop.noor))["edges"] == []
    [task] = await roots(shop)
    assert (task["modelCalls"], task["toolCalls"]) == (1, 1)


@pytest.mark.parametrize("role", ["supervisesAgents", "auditsAgents", "readsAllAgentWork", "kit"])
async def test_those_the_policies_name_and_the_kit_read_running_traces(client, role):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    await post(shop, export(*running_estimate(t)[1]))

    token = shop.kit if role == "kit" else shop.person("reader", ROLES[role])
    [edge] = (await running(shop, token))["edges"]

    assert edge["node"]["traceId"] == t.hex()


@pytest.mark.parametrize("role", ["teachesAgents", "erasesAgentRecords", "asker", "none"])
async def test_anyone_else_reads_no_running_trace(client, role):
    shop = Shop(client)
    await shop.setup()
    await post(shop, export(*running_estimate(new_trace_id())[1]))

    token = {"asker": shop.mia, "none": None}[role] if role in ("asker", "none") else shop.person("o", ROLES[role])
    page = await running(shop, token)

    assert (page["edges"], page["totalCount"]) == ([], 0)


async def test_another_tenants_running_traces_are_not_listed(client):
    shop, other = Shop(client), Shop(client)
    await shop.setup()
    await other.setup()
    await post(other, export(*running_estimate(new_trace_id())[1]))

    assert (await running(shop, shop.noor))["edges"] == []


async def test_running_traces_page_newest_first(client):
    shop = Shop(client)
    await shop.setup()
    sent = []
    for _ in range(3):
        t = new_trace_id()
        await post(shop, export(*running_estimate(t)[1]))
        sent.append(t.hex())

    first = await running(shop, shop.noor, first=2)
    rest = await running(shop, shop.noor, first=2, after=first["pageInfo"]["endCursor"])

    assert [e["node"]["traceId"] for e in first["edges"] + rest["edges"]] == sent[::-1]
    assert (first["pageInfo"]["hasNextPage"], rest["pageInfo"]["hasNextPage"], first["totalCount"]) == (True, False, 3)


async def test_a_bad_page_is_refused_by_field(client):
    shop = Shop(client)
    await shop.setup()

    for variables, field in (({"first": 0}, "first"), ({"after": "nope"}, "after")):
        error = await shop.client.error(RUNNING, variables, shop.noor)
        assert error["extensions"]["field"] == field
