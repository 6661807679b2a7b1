"""The OpenAI Agents SDK, traced by OpenInference, run against a fake OpenAI on loopback and exported to a running
`agentlog serve`: Triage looks up the weather, reads a gauge that breaks, and hands the work to Reporter."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import pytest
from playwright.async_api import expect
from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, RunConfig, Runner, function_tool
from openai import AsyncOpenAI, InternalServerError
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

from tests.browser import SCREENSHOTS, visit
from tests.fake_openai import FakeModel, fake_openai
from tests.frameworks import (
    ToolArguments, Tree, Workshop, assert_each_role_reads_what_it_may, assert_every_model_call_is_recorded,
    assert_every_root_verifies, assert_the_step_shows_the_arguments,
)
from tests.loopback_only import loopback_only, refusing_other_hosts  # noqa: F401  (a fixture)

APIS = {"chat_completions": OpenAIChatCompletionsModel, "responses": OpenAIResponsesModel}


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}, 21 degrees."


@function_tool
def read_gauge(gauge: str) -> str:
    """Reads a pressure gauge."""
    raise RuntimeError(f"gauge {gauge} is stuck")


@pytest.fixture(scope="module")
def runs(servers, loopback_only) -> Iterator[tuple[Workshop, dict[str, FakeModel]]]:  # noqa: F811
    """One run per API, each its own trace, all exported before the tests read."""
    workshop = Workshop(servers[0])
    provider = workshop.tracer_provider()
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider, exclusive_processor=True)
    fakes = {}
    try:
        for api, model in APIS.items():
            fakes[api] = FakeModel(arguments={"get_weather": {"city": "Paris"}, "read_gauge": {"gauge": "G-2"}})
            with fake_openai(fakes[api]) as url:
                asyncio.run(_run(api, model, AsyncOpenAI(base_url=url, api_key="sk-loopback", max_retries=0)))
            with fake_openai(FakeModel(down=True)) as url, pytest.raises(InternalServerError):
                asyncio.run(_run(f"{api} down", model, AsyncOpenAI(base_url=url, api_key="sk-loopback", max_retries=0)))
        assert provider.force_flush(60_000)
        yield workshop, fakes
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


async def _run(api: str, model: type, client: AsyncOpenAI) -> None:
    reporter = Agent(name="Reporter", instructions="Report the weather.",
                     model=model(model="gpt-fake-mini", openai_client=client))
    triage = Agent(name="Triage", instructions="Look the weather up, then hand over.", tools=[get_weather, read_gauge],
                   handoffs=[reporter], model=model(model="gpt-fake", openai_client=client))
    try:
        result = await Runner.run(triage, "What is the weather in Paris?",
                                  run_config=RunConfig(workflow_name=f"Weather {api}"))
        assert result.final_output == "Sunny in Paris, 21 degrees."
    finally:
        await client.close()


@pytest.fixture(scope="module", params=list(APIS))
def run(request, runs) -> tuple[Workshop, Tree, FakeModel]:
    workshop, fakes = runs
    return workshop, workshop.tree(f"Weather {request.param}"), fakes[request.param]


def test_every_agent_span_is_a_task_under_its_parent(run):
    _, tree, _ = run
    triage, reporter = tree.named("Triage"), tree.named("Reporter")

    assert tree.root.agent == "workshop" and tree.root.parent is None
    assert triage.parent == tree.root.id and reporter.parent == tree.root.id
    assert [task.status for task in tree.tasks] == ["DONE"] * 3


def test_every_model_call_is_recorded_with_its_model_and_tokens(run):
    _, tree, fake = run

    assert_every_model_call_is_recorded(tree, fake.calls(), [(tree.named("Triage"), ["gpt-fake"] * 3),
                                                             (tree.named("Reporter"), ["gpt-fake-mini"])])


def test_every_tool_call_has_its_real_arguments_and_result(run):
    _, tree, _ = run
    calls = tree.named("Triage").tool_calls()

    assert calls["get_weather"] == ({"city": "Paris"}, "Sunny in Paris, 21 degrees.", False)
    gauge_input, gauge_output, gauge_failed = calls["read_gauge"]
    assert gauge_input == {"gauge": "G-2"} and gauge_failed is True and "error" in gauge_output


def test_the_handoff_is_a_line_of_triage_naming_reporter(run):
    _, tree, _ = run
    handoff = [line for line in tree.named("Triage").kinds("TOOL_CALL") if line["tool"] == "handoff to Reporter"]

    assert [line["summary"] for line in handoff] == ["It handed the work to Reporter."]
    assert not any(line["tool"] for task in (tree.root, tree.named("Reporter")) for line in task.lines)


def test_each_role_reads_what_it_may(run):
    workshop, tree, *_ = run

    assert_each_role_reads_what_it_may(workshop, tree)


def test_every_root_verifies(run):
    assert_every_root_verifies(run[0])


@pytest.mark.parametrize("api", APIS)
def test_a_model_that_is_down_fails_the_agent_and_its_call_is_recorded(runs, api):
    workshop, _ = runs
    tree = workshop.tree(f"Weather {api} down")
    triage = tree.named("Triage")
    model = "gpt-fake" if api == "chat_completions" else "unknown"

    assert triage.status == "FAILED"
    assert triage.model_calls() == [(model, 0, 0)]
    assert [line["summary"] for line in triage.kinds("MODEL_CALL")] == [f"The call to {model} failed."]
    assert workshop.verify(tree.root.id)["intact"] is True


def test_a_connection_to_another_host_is_refused_and_remembered():
    with pytest.MonkeyPatch.context() as patch, refusing_other_hosts(patch) as refused:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("192.0.2.1", 443), timeout=1)

    assert refused == ["('192.0.2.1', 443)"]


async def test_the_inspector_shows_the_handoff_and_the_tools_arguments(runs, browser):
    workshop, _ = runs
    triage = workshop.tree("Weather responses").named("Triage")

    async with visit(browser, workshop.server.url) as seen:
        page = await seen.open(f"/inspect/{triage.id}", workshop.noor)
        steps = page.get_by_test_id("step")
        await expect(steps.filter(has_text="It handed the work to Reporter.")).to_have_count(1)
        await expect(steps.filter(has_text="Reporter took the work over.")).to_have_count(1)
        await assert_the_step_shows_the_arguments(page, ToolArguments("get_weather", "city: Paris", '{"city":"Paris"}'))
        weather = steps.filter(has_text="It asked for get_weather")
        await expect(weather.get_by_test_id("step-content")).not_to_contain_text("get_weather_args")
        await seen.screenshot("agents-sdk-triage")
        await steps.filter(has_text="It handed the work to Reporter.").scroll_into_view_if_needed()
        await page.locator(".steps-box").screenshot(path=str(SCREENSHOTS / "agents-sdk-handoff.png"))
        assert seen.elsewhere == [] and seen.problems == []
