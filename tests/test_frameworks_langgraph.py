"""LangGraph, traced by OpenInference's LangChain instrumentation: a graph whose model node calls ChatOpenAI
(pointed at a fake OpenAI on loopback) and whose tool node runs a weather tool, exported to a running server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from openinference.instrumentation.langchain import LangChainInstrumentor

from tests.fake_openai import FakeModel, fake_openai
from tests.frameworks import (
    Tree, Workshop, assert_each_role_reads_what_it_may, assert_every_model_call_is_recorded,
    assert_every_root_verifies,
)
from tests.loopback_only import loopback_only  # noqa: F401  (a fixture)


@tool
def get_weather(city: str, unit: str) -> str:
    """The weather in a city, in celsius or fahrenheit."""
    return f"Sunny in {city}, 21 degrees {unit}."


def weather_graph(url: str):
    model = ChatOpenAI(model="gpt-fake", base_url=url, api_key="sk-loopback", max_retries=0).bind_tools([get_weather])

    def agent(state: MessagesState) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([get_weather]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(name="Weather agent")


@pytest.fixture(scope="module")
def run(servers, loopback_only) -> Iterator[tuple[Workshop, Tree, FakeModel]]:  # noqa: F811
    workshop, fake = Workshop(servers[0]), FakeModel(arguments={"get_weather": {"city": "Paris", "unit": "celsius"}},
                                                answer="Sunny in Paris, 21 degrees celsius.")
    provider = workshop.tracer_provider()
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with fake_openai(fake) as url:
            answer = weather_graph(url).invoke({"messages": [("user", "What is the weather in Paris?")]})
        assert answer["messages"][-1].content == "Sunny in Paris, 21 degrees celsius."
    finally:
        instrumentor.uninstrument()
    assert provider.force_flush(60_000)
    provider.shutdown()
    yield workshop, workshop.tree(), fake


def test_the_graph_is_a_task_and_each_run_of_its_agent_node_a_task_under_it(run):
    _, tree, _ = run

    assert (tree.root.skill, tree.root.parent) == ("Weather agent", None)
    assert [(task.skill, task.parent) for task in tree.tasks[1:]] == [("agent", tree.root.id)] * 2
    assert [task.status for task in tree.tasks] == ["DONE"] * 3


def test_every_model_call_is_recorded_with_its_model_and_tokens(run):
    _, tree, fake = run

    assert_every_model_call_is_recorded(tree, fake.calls(), [])
    assert [len(task.model_calls()) for task in tree.tasks] == [0, 1, 1]


def test_the_tool_node_call_has_its_arguments_and_result(run):
    _, tree, _ = run
    given, answered, failed = tree.root.tool_calls()["get_weather"]

    assert given == {"city": "Paris", "unit": "celsius"} and failed is False
    assert answered["data"]["content"] == "Sunny in Paris, 21 degrees celsius."


def test_each_role_reads_what_it_may(run):
    workshop, tree, *_ = run

    assert_each_role_reads_what_it_may(workshop, tree)


def test_every_root_verifies(run):
    assert_every_root_verifies(run[0])
