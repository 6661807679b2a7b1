"""Strands Agents with its own OpenTelemetry spans (the GenAI conventions' latest, content in their details event),
with a model of the test's own answering from a script in this process, exported to a running `agentlog serve`: the
Estimator works out the hours, asks the PartsClerk (an agent as a tool) for the parts, and answers."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from opentelemetry import trace
from strands import Agent, tool
from strands.models import Model

from tests.frameworks import (
    Tree, Workshop, assert_each_agent_is_a_task_named_by_itself, assert_each_role_reads_what_it_may,
    assert_every_model_call_is_recorded, assert_every_root_verifies,
    assert_the_inspector_shows_the_request_and_the_answer,
)
from tests.loopback_only import loopback_only  # noqa: F401  (a fixture)

ASKED = "What does a rear brake repair take?"
ANSWER = "One hour of labour, brake pads and a cable."
PARTS = "Brake pads and a cable."
CLERK_ASKED = "Which parts does a rear brake repair need?"


class ScriptedModel(Model):
    """A Strands model answering each call with the next step of its script (a tool call, or the answer) and
    telling its usage as a provider does; nothing is sent anywhere."""

    def __init__(self, model_id: str, script: list[tuple[str | None, Any]]) -> None:
        self.config = {"model_id": model_id}
        self.script, self.served = list(script), []

    def update_config(self, **config: Any) -> None:
        self.config.update(config)

    def get_config(self) -> dict[str, Any]:
        return self.config

    def structured_output(self, output_model: Any, prompt: Any, system_prompt: str | None = None,
                          **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the script answers in words and tool calls only")

    async def stream(self, messages: list[Any], tool_specs: Any = None, system_prompt: str | None = None,
                     **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        tool_name, said = self.script.pop(0)
        usage = (200 + 10 * len(messages), 10 + len(self.served))
        self.served.append((self.config["model_id"], *usage))
        yield {"messageStart": {"role": "assistant"}}
        if tool_name is None:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": said}}}
        else:
            use = {"name": tool_name, "toolUseId": f"call_{self.config['model_id']}_{len(self.served)}"}
            yield {"contentBlockStart": {"start": {"toolUse": use}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(said)}}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn" if tool_name is None else "tool_use"}}
        yield {"metadata": {"usage": {"inputTokens": usage[0], "outputTokens": usage[1], "totalTokens": sum(usage)},
                            "metrics": {"latencyMs": 1}}}


@tool
def labour_hours(job: str) -> float:
    """The hours a job takes.

    Args:
        job: The job, as the customer put it.
    """
    return 1.0


@tool
def parts_for(fault: str) -> list[str]:
    """The parts a repair needs.

    Args:
        fault: What is broken.
    """
    return ["brake pads", "cable"]


def agents() -> tuple[Agent, list[ScriptedModel]]:
    clerk_model = ScriptedModel("clerk-fake", [("parts_for", {"fault": "rear brake"}), (None, PARTS)])
    estimator_model = ScriptedModel("estimator-fake", [
        ("labour_hours", {"job": "rear brake"}), ("PartsClerk", {"input": CLERK_ASKED}), (None, ANSWER)])
    clerk = Agent(name="PartsClerk", description="Lists the parts a repair needs.", model=clerk_model,
                  tools=[parts_for], system_prompt="You list the parts a repair needs.", callback_handler=None)
    estimator = Agent(name="Estimator", model=estimator_model, tools=[labour_hours, clerk.as_tool()],
                      system_prompt="You estimate bicycle repairs.", callback_handler=None)
    return estimator, [estimator_model, clerk_model]


@pytest.fixture(scope="module")
def run(servers, loopback_only) -> Iterator[tuple[Workshop, Tree, list[tuple[str, int, int]]]]:  # noqa: F811
    """Strands traces through the global tracer provider, and reads the conventions it writes when its tracer is
    first made: both are set here as docs/frameworks.md tells users to set them."""
    workshop = Workshop(servers[0])
    provider = workshop.tracer_provider()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
        trace.set_tracer_provider(provider)
        assert trace.get_tracer_provider() is provider, "nothing else in the process set a global tracer provider"
        estimator, models = agents()
        assert str(estimator(ASKED)).strip() == ANSWER
    assert provider.force_flush(60_000)
    provider.shutdown()
    yield workshop, workshop.tree(), sorted(call for model in models for call in model.served)


def test_each_agent_is_a_task_named_by_itself_the_one_asked_as_a_tool_under_the_asker(run):
    _, tree, _ = run

    assert_each_agent_is_a_task_named_by_itself(tree, "Estimator", "PartsClerk")


def test_each_task_is_given_its_request_and_holds_its_answer_as_strands_words_it(run):
    """Strands tells an agent's answer as `str()` of its result: the answer's text and a newline."""
    _, tree, _ = run
    clerk = tree.named("PartsClerk")

    assert (tree.root.given, tree.root.result) == (ASKED, f"{ANSWER}\n")
    assert (clerk.given, clerk.result) == (CLERK_ASKED, f"{PARTS}\n")


def test_every_model_call_is_recorded_with_its_model_and_tokens(run):
    _, tree, served = run

    assert_every_model_call_is_recorded(tree, served, [(tree.root, ["estimator-fake"] * 3),
                                                       (tree.named("PartsClerk"), ["clerk-fake"] * 2)])


def test_each_tool_call_has_its_own_arguments_and_result(run):
    _, tree, _ = run

    assert tree.root.tool_calls() == {
        "labour_hours": ({"job": "rear brake"}, "1.0", False),
        "PartsClerk": ({"input": CLERK_ASKED}, f"{PARTS}\n", False),
    }
    assert tree.named("PartsClerk").tool_calls() == {
        "parts_for": ({"fault": "rear brake"}, ["brake pads", "cable"], False),
    }


def test_model_call_content_is_the_conventions_json_messages(run):
    _, tree, _ = run
    first = json.loads(tree.root.kinds("MODEL_CALL")[0]["payload"])

    assert first["systemPrompt"] == [{"type": "text", "content": "You estimate bicycle repairs."}]
    assert first["messages"] == [{"role": "user", "parts": [{"type": "text", "content": ASKED}]}]
    assert first["response"][0]["parts"] == [{"type": "tool_call", "name": "labour_hours",
                                              "id": "call_estimator-fake_1", "arguments": {"job": "rear brake"}}]


def test_each_role_reads_what_it_may(run):
    workshop, tree, _ = run

    assert_each_role_reads_what_it_may(workshop, tree)


def test_every_root_verifies(run):
    assert_every_root_verifies(run[0])


async def test_the_inspector_shows_the_agent_its_request_and_its_answer(run, browser):
    workshop, tree, _ = run

    await assert_the_inspector_shows_the_request_and_the_answer(
        browser, workshop, tree.root, heading="Estimator", asked=ASKED, answer=ANSWER,
        screenshot="strands-estimator")
