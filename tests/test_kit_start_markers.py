"""`agentlog_kit.otel.StartMarkers` beside the exporter a framework already uses, against a running `agentlog
serve`: while an agent runs, its task reads RUNNING with the lines of what it has done so far; once it ends, it is
one task, ended, as without markers. Plain OpenTelemetry SDK spans, a Pydantic AI agent with its own
instrumentation and its TestModel, and the OpenAI Agents SDK traced by OpenInference against a fake OpenAI on
loopback."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool
from openai import AsyncOpenAI
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.test import TestModel
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agentlog_kit.otel import StartMarkers
from tests.fake_openai import FakeModel, fake_openai
from tests.frameworks import Workshop
from tests.loopback_only import loopback_only, refusing_other_hosts  # noqa: F401  (a fixture)

RUNNING = """{ tasks(filter: { status: RUNNING }, first: 50) { edges { node {
  id agent skill status depth modelCalls toolCalls trace { kind } } } } }"""
ALL = "{ tasks(first: 50) { edges { node { id agent skill status depth } } } }"


def live(workshop: Workshop) -> TracerProvider:
    """The provider docs/frameworks.md shows, with the one line docs/otlp.md adds."""
    provider = TracerProvider(resource=Resource.create({"service.name": "workshop"}))
    exporter = workshop.exporter()
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=100))
    provider.add_span_processor(StartMarkers(exporter))
    return provider


def running(workshop: Workshop) -> list[dict[str, Any]]:
    return [edge["node"] for edge in workshop.graphql(RUNNING)["tasks"]["edges"]]


def until(workshop: Workshop, seen: Callable[[list[dict[str, Any]]], bool], seconds: float = 10) -> list[dict]:
    deadline = time.monotonic() + seconds
    while not seen(tasks := running(workshop)):
        assert time.monotonic() < deadline, tasks
        time.sleep(0.05)
    return tasks


def test_plain_sdk_agents_are_running_tasks_with_their_lines_while_they_run(servers):
    workshop = Workshop(servers[0])
    provider = live(workshop)
    tracer = provider.get_tracer("workshop")
    try:
        with tracer.start_as_current_span("invoke_agent Estimator", attributes={
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Estimator"}):
            assert [t["agent"] for t in until(workshop, lambda ts: len(ts) == 1)] == ["Estimator"]
            with tracer.start_as_current_span("chat Everyday", attributes={
                    "gen_ai.operation.name": "chat", "gen_ai.request.model": "Everyday",
                    "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 30}):
                pass
            [estimator] = until(workshop, lambda ts: ts and ts[0]["modelCalls"] == 1)
            assert [line["kind"] for line in estimator["trace"]] == ["STARTED", "MODEL_CALL"]
            with tracer.start_as_current_span("plan the parts"):
                with tracer.start_as_current_span("invoke_agent Stockist", attributes={
                        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Stockist"}):
                    with tracer.start_as_current_span("execute_tool PartsFor", attributes={
                            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "PartsFor"}):
                        pass
                    tasks = until(workshop, lambda ts: any(t["toolCalls"] for t in ts))
                    stockist = next(t for t in tasks if t["agent"] == "Stockist")
                    assert (stockist["depth"], stockist["status"], stockist["toolCalls"]) == (1, "RUNNING", 1)
        assert provider.force_flush(30_000)
    finally:
        provider.shutdown()

    tree = workshop.tree()
    assert [(t.agent, t.status) for t in tree.tasks] == [("Estimator", "DONE"), ("Stockist", "DONE")]
    assert [line["kind"] for line in tree.root.lines][-1] == "ENDED"
    assert workshop.verify(tree.root.id)["intact"] is True


def test_a_pydantic_ai_run_is_running_with_its_lines_while_it_runs_and_one_tree_once_done(servers):
    """The tool waits until the test has read the running task: the agent is RUNNING, its first model call read."""
    workshop = Workshop(servers[0])
    provider = live(workshop)
    estimator = PydanticAgent(TestModel(custom_output_text="Two pads in stock.", model_name="estimator-test"),
                              name="Estimator", instructions="You check the stock.",
                              capabilities=[Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))])
    seen: list[list[dict]] = []

    @estimator.tool_plain
    def stock_of(item: str) -> str:
        """How many of an item the shop has."""
        seen.append(until(workshop, lambda ts: any(t["agent"] == "Estimator" and t["modelCalls"] for t in ts)))
        return "two"

    try:
        assert estimator.run_sync("Any brake pads?").output == "Two pads in stock."
        assert provider.force_flush(30_000)
    finally:
        provider.shutdown()

    [[running_estimator]] = seen
    assert running_estimator["status"] == "RUNNING"
    assert [line["kind"] for line in running_estimator["trace"]] == ["STARTED", "MODEL_CALL"]
    tree = workshop.tree()
    assert [(t.agent, t.status) for t in tree.tasks] == [("Estimator", "DONE")]
    assert tree.root.id == running_estimator["id"]
    assert [line["kind"] for line in tree.root.lines] == ["STARTED", "MODEL_CALL", "TOOL_CALL", "TOOL_RESULT",
                                                          "MODEL_CALL", "ENDED"]
    assert len(workshop.graphql(ALL)["tasks"]["edges"]) == 1
    assert running(workshop) == []
    assert workshop.verify(tree.root.id)["intact"] is True


@function_tool
def look_in_the_shop(item: str) -> str:
    """Whether the shop has an item."""
    return _looked_up(item)


_looked_up: Callable[[str], str] = lambda item: "yes"  # noqa: E731


def test_an_agents_sdk_run_is_running_with_its_lines_while_it_runs(servers, loopback_only):  # noqa: F811
    global _looked_up
    workshop = Workshop(servers[0])
    provider = live(workshop)
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider, exclusive_processor=True)
    seen: list[list[dict]] = []

    def looked_up(item: str) -> str:
        seen.append(until(workshop, lambda ts: any(t["agent"] == "Clerk" and t["modelCalls"] for t in ts)))
        return f"{item}: two in stock"

    _looked_up = looked_up
    fake = FakeModel(arguments={"look_in_the_shop": {"item": "brake pads"}}, answer="Two in stock.")
    try:
        with fake_openai(fake) as url:
            client = AsyncOpenAI(base_url=url, api_key="sk-loopback", max_retries=0)
            clerk = Agent(name="Clerk", instructions="Look it up.", tools=[look_in_the_shop],
                          model=OpenAIChatCompletionsModel(model="gpt-fake", openai_client=client))
            result = asyncio.run(Runner.run(clerk, "Any brake pads?", run_config=RunConfig(workflow_name="Stock")))
        assert result.final_output == "Two in stock."
        assert provider.force_flush(30_000)
    finally:
        instrumentor.uninstrument()
        provider.shutdown()

    [tasks] = seen
    clerk_task = next(t for t in tasks if t["agent"] == "Clerk")
    assert clerk_task["status"] == "RUNNING" and clerk_task["trace"][0]["kind"] == "STARTED"
    assert any(t["skill"] == "Stock" and t["depth"] == 0 for t in tasks)
    tree = workshop.tree("Stock")
    assert [t.status for t in tree.tasks] == ["DONE", "DONE"]
    assert len(tree.named("Clerk").model_calls()) == 2
    assert len(workshop.graphql(ALL)["tasks"]["edges"]) == 2


def test_the_kit_imports_without_opentelemetry():
    import subprocess
    import sys

    blocked = "import sys; sys.modules['opentelemetry'] = None; import agentlog_kit; print(agentlog_kit.Kit.__name__)"
    done = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, timeout=60)

    assert (done.returncode, done.stdout.strip()) == (0, "Kit"), done.stderr
