"""The `openai` client traced by the official `opentelemetry-instrumentation-openai-v2`, under agent spans written by
hand and under agent spans made by `opentelemetry-util-genai`, with content capture on and off: Dispatcher answers,
then asks Forecaster, who calls a weather tool."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest
from openai import OpenAI
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.util.genai.handler import TelemetryHandler

from tests.fake_openai import FakeModel, fake_openai
from tests.frameworks import (
    Tree, Workshop, assert_each_role_reads_what_it_may, assert_every_model_call_is_recorded,
    assert_every_root_verifies,
)
from tests.loopback_only import loopback_only  # noqa: F401  (a fixture)

CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
STYLES = ("hand-written", "util-genai")
CAPTURES = {"content on": "SPAN_ONLY", "content off": "NO_CONTENT"}
WEATHER = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}}]


def _agent_spans(style: str, provider: Any, handler: TelemetryHandler) -> Callable[[str], AbstractContextManager]:
    if style == "util-genai":
        return lambda name: handler.invoke_local_agent(agent_name=name, request_model="gpt-fake")
    tracer = provider.get_tracer("workshop")
    return lambda name: tracer.start_as_current_span(f"invoke_agent {name}", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name, "gen_ai.provider.name": "openai",
    })


def _scenario(agent: Callable[[str], AbstractContextManager], handler: TelemetryHandler, client: OpenAI) -> None:
    with agent("Dispatcher"):
        client.chat.completions.create(model="gpt-fake", messages=[{"role": "user", "content": "Who forecasts?"}])
        with agent("Forecaster"):
            messages: list[dict[str, Any]] = [{"role": "user", "content": "What is the weather in Paris?"}]
            asked = client.chat.completions.create(model="gpt-fake-mini", messages=messages, tools=WEATHER)
            call = asked.choices[0].message.tool_calls[0]
            with handler.tool(call.function.name, tool_call_id=call.id) as tool:
                tool.arguments = json.loads(call.function.arguments)
                tool.tool_result = {"sky": "sunny", "celsius": 21}
            messages += [asked.choices[0].message.model_dump(exclude_none=True),
                         {"role": "tool", "tool_call_id": call.id, "content": json.dumps(tool.tool_result)}]
            client.chat.completions.create(model="gpt-fake-mini", messages=messages, tools=WEATHER)


@pytest.fixture(scope="module")
def runs(servers, loopback_only) -> Iterator[dict[tuple[str, str], tuple[Workshop, FakeModel]]]:  # noqa: F811
    """Each style with each capture, a tenant of its own, all exported before the tests read."""
    done = {}
    for style in STYLES:
        for capture, mode in CAPTURES.items():
            workshop, fake = Workshop(servers[0]), FakeModel(arguments={"get_weather": {"city": "Paris"}})
            provider = workshop.tracer_provider()
            with pytest.MonkeyPatch.context() as patch, fake_openai(fake) as url:
                patch.setenv(CAPTURE, mode)
                instrumentor = OpenAIInstrumentor()
                instrumentor.instrument(tracer_provider=provider)
                try:
                    handler = TelemetryHandler(tracer_provider=provider)
                    with OpenAI(base_url=url, api_key="sk-loopback", max_retries=0) as client:
                        _scenario(_agent_spans(style, provider, handler), handler, client)
                finally:
                    instrumentor.uninstrument()
            assert provider.force_flush(60_000)
            provider.shutdown()
            done[style, capture] = workshop, fake
    yield done


@pytest.fixture(scope="module", params=[(s, c) for s in STYLES for c in CAPTURES], ids=" / ".join)
def run(request, runs) -> tuple[Workshop, Tree, FakeModel, str]:
    workshop, fake = runs[request.param]
    return workshop, workshop.tree(), fake, request.param[1]


def test_every_agent_span_is_a_task_under_its_parent(run):
    _, tree, _, _ = run

    assert tree.root.agent == "Dispatcher" and tree.root.parent is None
    assert tree.named("Forecaster").parent == tree.root.id
    assert [task.status for task in tree.tasks] == ["DONE", "DONE"]


def test_every_model_call_is_recorded_with_its_model_and_tokens(run):
    _, tree, fake, _ = run

    assert_every_model_call_is_recorded(tree, fake.calls(), [(tree.root, ["gpt-fake"]),
                                                             (tree.named("Forecaster"), ["gpt-fake-mini"] * 2)])


def test_the_tool_call_has_its_arguments_and_result_when_content_is_captured(run):
    _, tree, _, capture = run
    calls = tree.named("Forecaster").tool_calls()

    if capture == "content on":
        assert calls == {"get_weather": ({"city": "Paris"}, {"sky": "sunny", "celsius": 21}, False)}
    else:
        assert calls == {"get_weather": (None, None, False)}


def test_model_call_content_is_recorded_only_when_captured(run):
    _, tree, _, capture = run
    asked = json.loads(tree.named("Forecaster").kinds("MODEL_CALL")[0]["payload"])

    if capture == "content on":
        assert asked["messages"][0]["parts"][0]["content"] == "What is the weather in Paris?"
        assert asked["response"][0]["parts"][0]["arguments"] == {"city": "Paris"}
    else:
        assert (asked["messages"], asked["response"]) == (None, None)


def test_each_role_reads_what_it_may(run):
    workshop, tree, *_ = run

    assert_each_role_reads_what_it_may(workshop, tree)


def test_every_root_verifies(run):
    assert_every_root_verifies(run[0])
