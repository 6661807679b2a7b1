"""LlamaIndex traced by OpenInference, with LlamaIndex's own mock function-calling model answering from a script in
this process, exported to a running `agentlog serve`: the Estimator (a `FunctionAgent`) looks up the hours and the
parts with its two tools, and answers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, LLMMetadata, MessageRole, ToolCallBlock
from llama_index.core.llms.callbacks import llm_chat_callback
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import FunctionTool
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

from tests.frameworks import (
    Tree, Workshop, assert_each_role_reads_what_it_may, assert_every_model_call_is_recorded,
    assert_every_root_verifies, assert_the_inspector_shows_the_request_and_the_answer,
)
from tests.loopback_only import loopback_only  # noqa: F401  (a fixture)

ASKED = "What does a rear brake repair take?"
ANSWER = "One hour of labour, brake pads and a cable."
SCRIPT = [("labour_hours", {"job": "rear brake"}), ("parts_for", {"fault": "rear brake"}), (None, ANSWER)]


class ScriptedLLM(MockFunctionCallingLLM):
    """LlamaIndex's mock function-calling model, answering each call with the next step of the script and telling
    its usage as a provider's client does; nothing is sent anywhere."""

    served: list[tuple[str, int, int]] = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="estimator-fake", is_function_calling_model=True, is_chat_model=True)

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        tool_name, said = SCRIPT[len(self.served)]
        usage = (200 + 10 * len(messages), 10 + len(self.served))
        self.served.append(("estimator-fake", *usage))
        message = (ChatMessage(role=MessageRole.ASSISTANT, content=said) if tool_name is None else ChatMessage(
            role=MessageRole.ASSISTANT,
            blocks=[ToolCallBlock(tool_call_id=f"call_{len(self.served)}", tool_name=tool_name, tool_kwargs=said)]))
        return ChatResponse(message=message, raw={"usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                                                            "total_tokens": sum(usage)}})


def labour_hours(job: str) -> float:
    """The hours a job takes."""
    return 1.0


def parts_for(fault: str) -> list[str]:
    """The parts a repair needs."""
    return ["brake pads", "cable"]


def estimator(llm: ScriptedLLM) -> FunctionAgent:
    return FunctionAgent(name="Estimator", description="Estimates bicycle repairs.", llm=llm, streaming=False,
                         tools=[FunctionTool.from_defaults(labour_hours), FunctionTool.from_defaults(parts_for)],
                         system_prompt="You estimate bicycle repairs.")


async def ask(agent: FunctionAgent) -> Any:
    return await agent.run(user_msg=ASKED)


@pytest.fixture(scope="module")
def run(servers, loopback_only) -> Iterator[tuple[Workshop, Tree, list[tuple[str, int, int]]]]:  # noqa: F811
    workshop = Workshop(servers[0])
    provider = workshop.tracer_provider()
    instrumentor = LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    llm = ScriptedLLM()
    llm.served = []
    try:
        answer = asyncio.run(ask(estimator(llm)))
        assert str(answer) == ANSWER
    finally:
        instrumentor.uninstrument()
    assert provider.force_flush(60_000)
    provider.shutdown()
    yield workshop, workshop.tree(), sorted(llm.served)


def test_the_run_is_the_root_task_named_by_its_class_with_the_calls_and_tools_under_it(run):
    _, tree, _ = run

    assert (tree.root.agent, tree.root.skill, tree.root.parent, tree.root.status) == (
        "workshop", "FunctionAgent", None, "DONE")
    assert len(tree.tasks) == 1
    assert [line["kind"] for line in tree.root.lines] == [
        "STARTED", "MODEL_CALL", "TOOL_CALL", "TOOL_RESULT", "MODEL_CALL", "TOOL_CALL", "TOOL_RESULT", "MODEL_CALL",
        "ENDED"]


def test_every_model_call_is_recorded_once_with_its_model_and_tokens(run):
    _, tree, served = run

    assert_every_model_call_is_recorded(tree, served, [])


def test_each_tool_call_has_the_calls_own_arguments_and_what_the_tool_returned(run):
    _, tree, _ = run

    assert tree.root.tool_calls() == {
        "labour_hours": ({"job": "rear brake"}, 1.0, False),
        "parts_for": ({"fault": "rear brake"}, ["brake pads", "cable"], False),
    }


def test_model_call_content_is_json_messages_never_a_python_repr(run):
    _, tree, _ = run
    payloads = [json.loads(line["payload"]) for line in tree.root.kinds("MODEL_CALL")]

    assert not any("ChatMessage(" in json.dumps(payload) for payload in payloads)
    assert payloads[0]["messages"] == [{"role": "system", "content": "You estimate bicycle repairs."},
                                       {"role": "user", "content": ASKED}]
    assert payloads[0]["response"] == [{"role": "assistant", "tool_calls": [{
        "id": "call_1", "function": {"name": "labour_hours", "arguments": {"job": "rear brake"}}}]}]
    assert payloads[-1]["response"] == [{"role": "assistant", "content": ANSWER}]


def test_the_run_is_given_the_request_of_its_first_model_call_and_holds_the_answer_of_its_last(run):
    """The run's span holds its workflow's state and a shortened repr of its stop event, never taken for them."""
    _, tree, _ = run

    assert (tree.root.given, tree.root.result) == (ASKED, ANSWER)


def test_each_role_reads_what_it_may(run):
    workshop, tree, *_ = run

    assert_each_role_reads_what_it_may(workshop, tree)


def test_every_root_verifies(run):
    assert_every_root_verifies(run[0])


async def test_the_inspector_shows_the_run_its_request_and_its_answer(run, browser):
    workshop, tree, _ = run

    await assert_the_inspector_shows_the_request_and_the_answer(
        browser, workshop, tree.root, heading="FunctionAgent", asked=ASKED, answer=ANSWER,
        screenshot="llamaindex-function-agent")
