"""smolagents traced by OpenInference, with a model of its own that answers from a script in this process, exported
to a running `agentlog serve`: the Estimator (a manager agent) works out the hours, asks its managed PartsClerk
agent for the parts, and answers."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from openai.types.chat import ChatCompletion
from openinference.instrumentation.smolagents import SmolagentsInstrumentor
from smolagents import OpenAIModel, ToolCallingAgent, tool

from tests.frameworks import (
    Tree, Workshop, assert_each_agent_is_a_task_named_by_itself, assert_each_role_reads_what_it_may,
    assert_every_model_call_is_recorded, assert_every_root_verifies,
    assert_the_inspector_shows_the_request_and_the_answer,
)
from tests.loopback_only import loopback_only  # noqa: F401  (a fixture)

ASKED = "What does a rear brake repair take?"
ANSWER = "One hour of labour, brake pads and a cable."
PARTS = "Brake pads and a cable."


class ScriptedModel(OpenAIModel):
    """smolagents' own OpenAI model (so OpenInference traces it as it traces any), whose client answers each call
    with the next tool call of the script, in this process: nothing is sent anywhere."""

    def __init__(self, model_id: str, script: list[tuple[str, dict[str, Any]]]) -> None:
        self.script, self.served, self.ids = list(script), [], itertools.count()
        super().__init__(model_id=model_id, api_key="sk-unused")

    def create_client(self) -> Any:
        return SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=self.answer)))

    def answer(self, **request: Any) -> ChatCompletion:
        tool_name, arguments = self.script.pop(0)
        n = next(self.ids)
        usage = (200 + 10 * len(request["messages"]), 10 + n)
        self.served.append((self.model_id, *usage))
        call = {"id": f"call_{self.model_id}_{n}", "type": "function",
                "function": {"name": tool_name, "arguments": json.dumps(arguments)}}
        return ChatCompletion.model_validate({
            "id": f"chatcmpl_{n}", "object": "chat.completion", "created": 0, "model": self.model_id,
            "choices": [{"index": 0, "finish_reason": "tool_calls",
                         "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
        })


@tool
def labour_hours(job: str) -> float:
    """The hours a job takes.

    Args:
        job: The job, as the customer put it.
    """
    return 1.0


@tool
def parts_for(fault: str) -> list:
    """The parts a repair needs.

    Args:
        fault: What is broken.
    """
    return ["brake pads", "cable"]


def agents() -> tuple[ToolCallingAgent, list[ScriptedModel]]:
    clerk_model = ScriptedModel("clerk-fake", [("parts_for", {"fault": "rear brake"}),
                                               ("final_answer", {"answer": PARTS})])
    estimator_model = ScriptedModel("estimator-fake", [
        ("labour_hours", {"job": "rear brake"}), ("PartsClerk", {"task": "Which parts does a rear brake need?"}),
        ("final_answer", {"answer": ANSWER}),
    ])
    clerk = ToolCallingAgent(tools=[parts_for], model=clerk_model, name="PartsClerk",
                             description="Lists the parts a repair needs.", max_steps=3, verbosity_level=0)
    estimator = ToolCallingAgent(tools=[labour_hours], model=estimator_model, managed_agents=[clerk],
                                 name="Estimator", max_steps=4, verbosity_level=0)
    return estimator, [estimator_model, clerk_model]


@pytest.fixture(scope="module")
def run(servers, loopback_only) -> Iterator[tuple[Workshop, Tree, list[tuple[str, int, int]]]]:  # noqa: F811
    workshop = Workshop(servers[0])
    provider = workshop.tracer_provider()
    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        estimator, models = agents()
        assert estimator.run(ASKED) == ANSWER
    finally:
        instrumentor.uninstrument()
    assert provider.force_flush(60_000)
    provider.shutdown()
    yield workshop, workshop.tree(), sorted(call for model in models for call in model.served)


def test_each_agent_is_a_task_named_by_itself_the_managed_one_under_its_manager(run):
    _, tree, _ = run

    assert_each_agent_is_a_task_named_by_itself(tree, "Estimator", "PartsClerk")


def test_each_task_is_given_its_task_and_holds_its_final_answer(run):
    _, tree, _ = run
    clerk = tree.named("PartsClerk")

    assert (tree.root.given, tree.root.result) == (ASKED, ANSWER)
    assert "Which parts does a rear brake need?" in clerk.given and clerk.result == PARTS


def test_every_model_call_is_recorded_with_its_model_and_tokens(run):
    _, tree, served = run

    assert_every_model_call_is_recorded(tree, served, [(tree.root, ["estimator-fake"] * 3),
                                                       (tree.named("PartsClerk"), ["clerk-fake"] * 2)])


def test_each_tool_call_has_the_calls_own_arguments(run):
    _, tree, _ = run

    assert tree.root.tool_calls() == {
        "labour_hours": ({"job": "rear brake"}, 1.0, False),
        "final_answer": ({"answer": ANSWER}, ANSWER, False),
    }
    assert tree.named("PartsClerk").tool_calls() == {
        "parts_for": ({"fault": "rear brake"}, ["brake pads", "cable"], False),
        "final_answer": ({"answer": PARTS}, PARTS, False),
    }


def test_model_call_content_is_json_messages_never_a_python_repr(run):
    _, tree, _ = run
    payloads = [line["payload"] for task in tree.tasks for line in task.kinds("MODEL_CALL")]
    first = json.loads(payloads[0])

    assert not any("ChatMessage(" in payload or "ChatCompletion(" in payload for payload in payloads)
    assert [message["role"] for message in first["messages"]] == ["system", "user"]
    assert ASKED in first["messages"][1]["contents"][0]["text"]
    assert first["response"] == [{"role": "assistant", "tool_calls": [{
        "id": "call_estimator-fake_0", "function": {"name": "labour_hours", "arguments": {"job": "rear brake"}},
    }]}]


def test_each_role_reads_what_it_may(run):
    workshop, tree, *_ = run

    assert_each_role_reads_what_it_may(workshop, tree)


def test_every_root_verifies(run):
    assert_every_root_verifies(run[0])


async def test_the_inspector_shows_the_agent_its_request_and_its_answer(run, browser):
    workshop, tree, *_ = run

    await assert_the_inspector_shows_the_request_and_the_answer(
        browser, workshop, tree.root, heading="Estimator", asked=ASKED, answer=ANSWER,
        screenshot="smolagents-estimator")
