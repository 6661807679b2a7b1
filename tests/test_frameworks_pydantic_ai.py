"""Pydantic AI with its own instrumentation (the GenAI conventions' spans), its own FunctionModel and TestModel, and
`logfire` installed but not configured, exported to a running `agentlog serve`: the Estimator works out hours, asks
the PartsClerk agent for the parts, and answers; asked to read a gauge, its tool breaks."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext, capture_run_messages
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.test import TestModel

from tests.frameworks import (
    ToolArguments, Tree, Workshop, assert_each_agent_is_a_task_named_by_itself, assert_each_role_reads_what_it_may,
    assert_every_model_call_is_recorded, assert_every_root_verifies,
    assert_the_inspector_shows_the_request_and_the_answer,
)
from tests.loopback_only import loopback_only  # noqa: F401  (a fixture)

ASKED = "What does a rear brake repair take?"
ANSWER = "One hour of labour, brake pads and a cable."
PARTS = "Brake pads and a cable."
GAUGE = "Read gauge G-2."


def estimator_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The Estimator's script: for the repair, hours and parts in one turn, then the answer; for the gauge, the
    gauge."""
    asked = messages[0].parts[-1].content
    if asked == GAUGE:
        return ModelResponse(parts=[ToolCallPart("read_gauge", {"gauge": "G-2"})])
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("labour_hours", {"job": "rear brake"}),
                                    ToolCallPart("parts_for", {"fault": "rear brake"})])
    return ModelResponse(parts=[TextPart(ANSWER)])


def agents(provider: Any) -> tuple[Agent, list[ModelMessage]]:
    """The Estimator and its PartsClerk, instrumented as Pydantic AI's docs say; the clerk's messages are kept."""
    instrumented = [Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))]
    clerk = Agent(TestModel(custom_output_text=PARTS, model_name="clerk-test"), name="PartsClerk",
                  instructions="You list the parts a repair needs.", capabilities=instrumented)
    estimator = Agent(FunctionModel(estimator_model, model_name="estimator-function"), name="Estimator",
                      instructions="You estimate bicycle repairs.", capabilities=instrumented)
    clerk_said: list[ModelMessage] = []

    @estimator.tool_plain
    def labour_hours(job: str) -> float:
        """The hours a job takes."""
        return 1.0

    @estimator.tool
    async def parts_for(ctx: RunContext, fault: str) -> list[str]:
        """The parts a repair needs, asked of the PartsClerk."""
        answered = await clerk.run(f"Which parts does a {fault} repair need?", usage=ctx.usage)
        clerk_said.extend(answered.all_messages())
        return [part.strip(" .") for part in answered.output.split(" and ")]

    @estimator.tool_plain
    def read_gauge(gauge: str) -> str:
        """Reads a pressure gauge."""
        raise RuntimeError(f"gauge {gauge} is stuck")

    return estimator, clerk_said


def served(messages: list[ModelMessage]) -> list[tuple[str, int, int]]:
    return [(m.model_name, m.usage.input_tokens, m.usage.output_tokens) for m in messages
            if isinstance(m, ModelResponse)]


@pytest.fixture(scope="module")
def runs(servers, loopback_only) -> Iterator[dict[str, tuple[Workshop, list[tuple[str, int, int]]]]]:  # noqa: F811
    """The repair and the gauge, each a tenant of its own, with every model response either agent gave."""
    assert importlib.util.find_spec("logfire") is not None, "logfire is installed beside Pydantic AI"
    done = {}
    for run, asked in (("repair", ASKED), ("gauge", GAUGE)):
        workshop = Workshop(servers[0])
        provider = workshop.tracer_provider()
        estimator, clerk_said = agents(provider)
        with capture_run_messages() as said:
            if run == "repair":
                assert estimator.run_sync(asked).output == ANSWER
            else:
                with pytest.raises(RuntimeError, match="gauge G-2 is stuck"):
                    estimator.run_sync(asked)
        assert provider.force_flush(60_000)
        provider.shutdown()
        done[run] = workshop, sorted(served(said) + served(clerk_said))
    yield done


@pytest.fixture(scope="module")
def repair(runs) -> tuple[Workshop, Tree, list[tuple[str, int, int]]]:
    workshop, models = runs["repair"]
    return workshop, workshop.tree(), models


def test_the_agent_is_the_root_named_by_itself_and_the_clerk_a_task_under_it(repair):
    _, tree, _ = repair

    assert_each_agent_is_a_task_named_by_itself(tree, "Estimator", "PartsClerk")


def test_each_task_is_given_its_request_and_holds_its_answer(repair):
    _, tree, _ = repair
    clerk = tree.named("PartsClerk")

    assert (tree.root.given, tree.root.result) == (ASKED, ANSWER)
    assert (clerk.given, clerk.result) == ("Which parts does a rear brake repair need?", PARTS)


def test_every_model_call_is_recorded_with_its_model_and_tokens(repair):
    _, tree, models = repair

    assert_every_model_call_is_recorded(tree, models, [(tree.root, ["estimator-function"] * 2),
                                                       (tree.named("PartsClerk"), ["clerk-test"])])


def test_each_tool_call_has_its_own_arguments_and_result(repair):
    """Pydantic AI sends a result that is no text as its JSON; a number's JSON is kept as the text it is."""
    _, tree, _ = repair

    assert tree.root.tool_calls() == {
        "labour_hours": ({"job": "rear brake"}, "1.0", False),
        "parts_for": ({"fault": "rear brake"}, ["Brake pads", "a cable"], False),
    }
    assert tree.named("PartsClerk").tool_calls() == {}


def test_model_call_content_is_json_structure_with_the_instructions_as_parts(repair):
    _, tree, _ = repair
    first = json.loads(tree.root.kinds("MODEL_CALL")[0]["payload"])

    assert first["systemPrompt"] == [{"type": "text", "content": "You estimate bicycle repairs."}]
    assert first["messages"] == [{"role": "user", "parts": [{"type": "text", "content": ASKED}]}]
    assert [part["name"] for part in first["response"][0]["parts"]] == ["labour_hours", "parts_for"]
    assert first["response"][0]["parts"][0]["arguments"] == {"job": "rear brake"}


REGISTER = "mutation($i: RegisterAgentInput!) { registerAgent(input: $i) { name } }"
TRANSCRIPT = "query($id: ID!) { task(id: $id) { transcript { agent systemPrompt } } }"


def test_the_transcript_shows_the_instructions_as_text(repair):
    workshop, tree, _ = repair
    for agent in ("Estimator", "PartsClerk"):
        workshop.graphql(REGISTER, {"i": {"name": agent, "transcriptReaders": ["Auditor"]}}, workshop.kit)
    turns = workshop.graphql(TRANSCRIPT, {"id": tree.root.id})["task"]["transcript"]

    assert sorted((turn["agent"], turn["systemPrompt"]) for turn in turns) == [
        ("Estimator", "You estimate bicycle repairs."), ("Estimator", "You estimate bicycle repairs."),
        ("PartsClerk", "You list the parts a repair needs."),
    ]


def test_each_role_reads_what_it_may(repair):
    workshop, tree, *_ = repair

    assert_each_role_reads_what_it_may(workshop, tree)


def test_every_root_verifies(repair):
    assert_every_root_verifies(repair[0])


def test_a_tool_that_raises_fails_its_call_and_the_agent(runs):
    workshop, models = runs["gauge"]
    tree = workshop.tree()

    assert (tree.root.agent, tree.root.status, tree.root.given) == ("Estimator", "FAILED", GAUGE)
    assert tree.model_calls() == models
    given, answered, failed = tree.root.tool_calls()["read_gauge"]
    assert (given, answered, failed) == ({"gauge": "G-2"}, None, True)
    assert_every_root_verifies(workshop)


async def test_the_inspector_shows_the_agent_its_request_and_its_answer(repair, browser):
    workshop, tree, _ = repair

    await assert_the_inspector_shows_the_request_and_the_answer(
        browser, workshop, tree.root, heading="Estimator", asked=ASKED, answer=ANSWER,
        screenshot="pydantic-ai-estimator",
        arguments=ToolArguments("parts_for", "fault: rear brake", '{"fault":"rear brake"}'))
