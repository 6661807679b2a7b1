"""GET /metrics, scraped after known traffic: the counts are the traffic's, in one process or across several."""

import asyncio
import json
import time

import httpx
from prometheus_client.parser import text_string_to_metric_families
from tortoise.transactions import in_transaction

from models import TraceEvent
from permissions.tokens import issue_token
from resolvers import metrics
from resolvers.events import bus
from tests.shop import Shop

START = "mutation($input: StartTaskInput!) { startTask(input: $input) { id } }"


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one series; 0 when it has not been seen yet."""
    for family in text_string_to_metric_families(text):
        for found in family.samples:
            if found.name == name and all(found.labels.get(k) == v for k, v in labels.items()):
                return found.value
    return 0.0


async def scrape(client) -> str:
    response = await client.http.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    return response.text


async def test_requests_latency_and_lines_are_counted(client):
    shop = Shop(client)
    await shop.setup()
    before = await scrape(client)

    await shop.estimate()
    refused = {"agent": "Estimator", "skill": "EstimateRepair", "requester": {"id": "mia"}, "actor": {"id": "e"}}
    await client.error(START, {"input": refused}, shop.mia)
    after = await scrape(client)

    def grew(name: str, **labels: str) -> float:
        return sample(after, name, **labels) - sample(before, name, **labels)

    assert grew("agentlog_requests_total", operation="recordModelCall", outcome="OK") == 3
    assert grew("agentlog_requests_total", operation="startTask", outcome="OK") == 1
    assert grew("agentlog_requests_total", operation="startTask", outcome="FORBIDDEN") == 1
    assert grew("agentlog_requests_total", operation="GET /metrics", outcome="OK") == 1
    assert grew("agentlog_request_duration_seconds_count", operation="recordToolResult") == 2
    assert grew("agentlog_request_duration_seconds_bucket", operation="endTask", le="+Inf") == 1
    assert grew("agentlog_lines_appended_total", tenant="") == 9


async def test_lines_carry_the_tenant_only_when_the_setting_says_so(client, configure):
    shop = Shop(client)
    await shop.setup()
    configure(metrics_tenant_label=True)

    await shop.estimate()

    assert sample(await scrape(client), "agentlog_lines_appended_total", tenant=shop.tenant) == 9


async def test_a_broken_chain_counts_a_verify_failure(client):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()
    before = sample(await scrape(client), "agentlog_verify_failures_total")
    await TraceEvent.filter(task_id=task, seq=3).update(summary="Something else.")

    assert (await shop.verify(task))["intact"] is False
    assert (await shop.verify(task))["intact"] is False
    assert sample(await scrape(client), "agentlog_verify_failures_total") - before == 2


async def test_live_subscribers_are_a_gauge(client, event_bus):
    before = sample(await scrape(client), "agentlog_subscribers")

    async with bus.HUB.subscribe("shop-gauge"), bus.HUB.subscribe("shop-gauge"):
        assert sample(await scrape(client), "agentlog_subscribers") - before == 2
    assert sample(await scrape(client), "agentlog_subscribers") == before


async def test_the_pool_in_use_counts_a_connection_held(client, dialect):
    taken, done = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        async with in_transaction() as conn:
            await conn.execute_query("SELECT 1")
            taken.set()
            await done.wait()

    holder = asyncio.create_task(hold())
    await taken.wait()
    held = sample(await scrape(client), "agentlog_db_pool_in_use")
    done.set()
    await holder

    assert held >= 1 if dialect == "postgres" else held == 0


async def test_otlp_spans_are_counted_taken_and_rejected(client):
    before = await scrape(client)

    metrics.otlp_spans(taken=5, rejected=2)
    after = await scrape(client)

    for outcome, count in (("taken", 5), ("rejected", 2)):
        grew = sample(after, "agentlog_otlp_spans_total", outcome=outcome) - sample(
            before, "agentlog_otlp_spans_total", outcome=outcome
        )
        assert grew == count


def wait_for(condition, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the workers did not start"
        time.sleep(0.1)


def served_by(server) -> list[int]:
    """The process of each request line the server logged for the `me` query."""
    lines = [json.loads(line) for line in list(server.log) if line.startswith("{")]
    return [line["process"] for line in lines if line.get("operation") == "me"]


def test_every_worker_answers_the_sum_of_all_workers(database, monkeypatch):
    from tests.servers import start_server

    monkeypatch.setenv("AGENTLOG_LOG_FORMAT", "json")
    server = start_server(database, "--workers", "2")
    try:
        wait_for(lambda: sum("Application startup complete" in line for line in server.log) == 2)
        token = issue_token("mia", "shop-workers", name="Mia")
        sent = 0
        with httpx.Client(base_url=server.url, timeout=30, headers={"Connection": "close"}) as http:
            while len(set(served_by(server))) < 2 and sent < 400:
                response = http.post("/graphql", json={"query": "{ me { id } }"},
                                     headers={"Authorization": f"Bearer {token}"})
                assert response.status_code == 200
                sent += 1
                wait_for(lambda: len(served_by(server)) == sent)
            answered = [
                sample(http.get("/metrics").text, "agentlog_requests_total", operation="me", outcome="OK")
                for _ in range(8)
            ]
    finally:
        server.stop()

    assert len(set(served_by(server))) == 2
    assert answered == [sent] * 8


async def test_otlp_spans_taken_and_rejected_are_counted(client):
    from tests.otlp_spans import agent, export, new_trace_id, span

    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t)
    unmappable = span(t, "chat", {"gen_ai.operation.name": "chat"}, parent=root.span_id)
    before = await scrape(client)

    response = await client.http.post(
        "/v1/traces", content=export(root, unmappable).SerializeToString(),
        headers={"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {shop.kit}"},
    )
    assert response.status_code == 200
    after = await scrape(client)

    def grew(outcome: str) -> float:
        return sample(after, "agentlog_otlp_spans_total", outcome=outcome) - sample(
            before, "agentlog_otlp_spans_total", outcome=outcome)

    assert grew("taken") == 1
    assert grew("rejected") == 1
