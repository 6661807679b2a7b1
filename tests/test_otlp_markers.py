"""Start markers (SPEC 9.1): a span announcing that its real span has started, in the form Logfire sends. An agent's
marker opens its task RUNNING at once, the spans below it are placed as they come, and the real span ends it; a
marker for any other span only tells the tree's shape; a repeated or late one changes nothing; a task whose span
never comes is ended FAILED once its trace has been quiet for AGENTLOG_OTLP_WAIT_S."""

from datetime import datetime, timedelta, timezone

import pytest

from models import AgentTask, OtlpOpenTask, TraceEvent
from resolvers.otlp import ingest
from resolvers.otlp.sweep import sweep
from tests.otlp_spans import agent, chat, export, marker, new_span_id, new_trace_id, span, tool
from tests.shop import Shop, work
from tests.test_otlp_ingest import post, roots


@pytest.fixture
def told(monkeypatch) -> list[tuple[str, str]]:
    heard: list[tuple[str, str]] = []

    async def publish(events):
        heard.extend((name, str(task.id)) for name, task in events)

    monkeypatch.setattr("graph.http.otlp.publish_tasks", publish)
    monkeypatch.setattr("resolvers.otlp.unreported.publish_tasks", publish)
    return heard


async def kinds(task_id: str) -> list[str]:
    return [line.kind for line in await TraceEvent.filter(task_id=task_id).order_by("seq")]


async def test_an_agents_marker_opens_its_task_at_once_and_its_span_ends_it(client, told):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator", **{"agentlog.skill": "EstimateRepair", "enduser.id": "mia"})
    call, parts = chat(t, root.span_id), tool(t, root.span_id)

    await post(shop, export(marker(root)))
    [task] = await roots(shop)
    assert (task["agent"], task["skill"], task["status"], task["requester"]) == (
        "Estimator", "EstimateRepair", "RUNNING", {"id": "mia"})
    assert ("AgentTaskStarted", task["id"]) in told

    await post(shop, export(call))
    [task] = await roots(shop)
    assert (task["status"], task["modelCalls"]) == ("RUNNING", 1)
    await post(shop, export(parts))
    [task] = await roots(shop)
    assert (task["status"], task["modelCalls"], task["toolCalls"]) == ("RUNNING", 1, 1)

    await post(shop, export(root))
    [task] = await roots(shop)
    assert (task["status"], task["modelCalls"], task["toolCalls"]) == ("DONE", 1, 1)
    assert await kinds(task["id"]) == ["STARTED", "MODEL_CALL", "TOOL_CALL", "TOOL_RESULT", "ENDED"]
    assert ("AgentTaskFinished", task["id"]) in told
    assert (await shop.verify(task["id"]))["intact"] is True
    assert await OtlpOpenTask.filter(tenant=shop.tenant).count() == 0


async def test_one_agent_is_one_task_however_its_marker_comes(client):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")
    helper = agent(t, "Stockist", parent=root.span_id)
    lookup = chat(t, helper.span_id)

    await post(shop, export(marker(root), marker(helper)))
    await post(shop, export(lookup, marker(helper)))
    await post(shop, export(helper, marker(root), root))
    await post(shop, export(marker(helper), marker(root), root))

    [task] = await roots(shop)
    assert task["status"] == "DONE" and [c["agent"] for c in task["children"]] == ["Stockist"]
    assert await work(shop.tenant).count() == 2
    [child] = task["children"]
    assert await kinds(child["id"]) == ["STARTED", "MODEL_CALL", "ENDED"]
    assert (await shop.verify(task["id"]))["intact"] is True


async def test_a_marker_and_its_span_in_one_export_make_one_task_ended(client):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")

    await post(shop, export(marker(root), root, chat(t, root.span_id)))

    [task] = await roots(shop)
    assert (task["status"], task["modelCalls"]) == ("DONE", 1)
    assert await kinds(task["id"]) == ["STARTED", "MODEL_CALL", "ENDED"]


async def test_a_marker_after_its_span_changes_nothing(client):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")
    await post(shop, export(chat(t, root.span_id), root))
    [before] = await roots(shop)

    await post(shop, export(marker(root)))

    assert await roots(shop) == [before]


async def test_a_marker_for_a_span_that_is_no_agent_adds_no_line_and_tells_the_shape(client):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")
    step = span(t, "plan the repair", {}, parent=root.span_id)
    call = chat(t, step.span_id)

    await post(shop, export(marker(root), marker(step)))
    [task] = await roots(shop)
    assert await kinds(task["id"]) == ["STARTED"]

    await post(shop, export(call))
    [task] = await roots(shop)
    assert (task["status"], task["modelCalls"]) == ("RUNNING", 1)


async def test_a_marker_for_a_model_call_or_tool_adds_nothing_and_their_spans_bring_their_lines(client):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")
    call, parts = chat(t, root.span_id), tool(t, root.span_id)

    await post(shop, export(marker(root), marker(call), marker(parts)))
    [task] = await roots(shop)
    assert await kinds(task["id"]) == ["STARTED"]

    await post(shop, export(call, parts, root))
    [task] = await roots(shop)
    assert (task["modelCalls"], task["toolCalls"]) == (1, 1)


async def test_a_marker_whose_span_never_comes_ends_failed_once_its_trace_is_quiet(client, configure, told):
    configure(otlp_wait_s=60)
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")
    await post(shop, export(marker(root)))
    await post(shop, export(chat(t, root.span_id)))

    await sweep(datetime.now(timezone.utc) + timedelta(seconds=30))
    [task] = await roots(shop)
    assert task["status"] == "RUNNING"

    await sweep(datetime.now(timezone.utc) + timedelta(seconds=61))
    [task] = await roots(shop)
    stored = await AgentTask.get(id=task["id"])
    assert (task["status"], stored.outcome) == ("FAILED", "Its end was never reported.")
    assert await kinds(task["id"]) == ["STARTED", "MODEL_CALL", "ENDED"]
    assert ("AgentTaskFailed", task["id"]) in told
    assert (await shop.verify(task["id"]))["intact"] is True

    await post(shop, export(root))
    assert await work(shop.tenant).count() == 1
    assert await kinds(task["id"]) == ["STARTED", "MODEL_CALL", "ENDED"]


async def test_a_span_of_its_trace_keeps_an_opened_task_waiting(client, configure):
    configure(otlp_wait_s=60)
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")
    await post(shop, export(marker(root)))
    later = datetime.now(timezone.utc) + timedelta(seconds=50)
    await ingest.take_export(shop.tenant, export(chat(t, root.span_id)), now=later)

    await sweep(later + timedelta(seconds=30))

    [task] = await roots(shop)
    assert task["status"] == "RUNNING"


async def test_a_marker_that_names_no_span_is_rejected(client):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    bad = marker(agent(t, "Estimator"))
    bad.parent_span_id = b""

    response = await post(shop, export(bad))

    assert response.status_code == 200 and "start marker" in response.text
    assert await roots(shop) == []


async def test_logfires_own_pending_spans_open_the_task_and_one_agent_is_one_task(client):
    from logfire._internal.tracer import PendingSpanProcessor
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

    shop = Shop(client)
    await shop.setup()
    sent = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(sent))
    provider.add_span_processor(PendingSpanProcessor(RandomIdGenerator(), SimpleSpanProcessor(sent)))
    tracer = provider.get_tracer("workshop")

    with tracer.start_as_current_span("invoke_agent Estimator", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Estimator"}):
        with tracer.start_as_current_span("chat Everyday", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "Everyday"}):
            pass
        for exported in sent.get_finished_spans():
            await post(shop, encode_spans([exported]))
        sent.clear()
        [task] = await roots(shop)
        assert (task["agent"], task["status"], task["modelCalls"]) == ("Estimator", "RUNNING", 1)
    await post(shop, encode_spans(sent.get_finished_spans()))

    [task] = await roots(shop)
    assert (task["agent"], task["status"], task["modelCalls"]) == ("Estimator", "DONE", 1)
    assert await work(shop.tenant).count() == 1
