"""What the framework tests share: a tenant whose framework exports through the OpenTelemetry SDK's own OTLP/HTTP
exporter to a running `agentlog serve`, the work trees it then reads back as Noor, who audits, and the checks every
framework's record must pass whatever the framework: how its agents are named, that every model call is recorded,
what each role reads of it, that every root verifies, and what the inspector shows of it."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any

import httpx
from playwright.async_api import Browser, Page, expect
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from permissions.tokens import issue_token
from tests.browser import visit
from tests.servers import Server
from tests.shop import ROLES

SETTLE_SECONDS = 30
LINE = "seq kind tool toolCallId summary payload isError model inputTokens outputTokens"
TASK = f"id agent skill status given result parent {{ id }} trace {{ {LINE} }}"
TREE = f"query($id: ID!) {{ task(id: $id) {{ {TASK} subtree {{ {TASK} }} }} }}"
ROOTS = "{ tasks(filter: { rootsOnly: true }, first: 50) { edges { node { id skill status chainLength } } } }"
WORDS = "given result trace { summary payload }"
SEEN = f"query($id: ID!) {{ task(id: $id) {{ {WORDS} subtree {{ {WORDS} }} }} }}"


@dataclass
class Task:
    id: str
    agent: str
    skill: str
    status: str
    parent: str | None
    lines: list[dict[str, Any]]
    given: str | None = None
    result: Any = None

    def kinds(self, kind: str) -> list[dict[str, Any]]:
        return [line for line in self.lines if line["kind"] == kind]

    def tool_calls(self) -> dict[str, tuple[Any, Any, bool]]:
        """Tool -> (input, output, whether it failed), pairing each call with its result."""
        calls = {line["toolCallId"] or line["tool"]: line for line in self.kinds("TOOL_CALL")}
        results = {line["toolCallId"] or line["tool"]: line for line in self.kinds("TOOL_RESULT")}
        return {
            call["tool"]: (_json(call["payload"]), _json(results[key]["payload"]), results[key]["isError"])
            for key, call in calls.items()
        }

    def model_calls(self) -> list[tuple[str, int, int]]:
        return [(line["model"], line["inputTokens"], line["outputTokens"]) for line in self.kinds("MODEL_CALL")]


def _json(payload: str | None) -> Any:
    return None if payload is None else json.loads(payload)


@dataclass
class Tree:
    root: Task
    tasks: list[Task]

    def named(self, agent: str) -> Task:
        found = [task for task in self.tasks if task.agent == agent]
        assert len(found) == 1, f"{len(found)} tasks of {agent}: {[t.agent for t in self.tasks]}"
        return found[0]

    def model_calls(self) -> list[tuple[str, int, int]]:
        return sorted(call for task in self.tasks for call in task.model_calls())


class Workshop:
    """A tenant of its own on the server: a kit that exports spans, and Noor, a manager who audits."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.name = f"shop-{os.urandom(4).hex()}"
        self.kit = issue_token("agent-kit", self.name, kit=True)
        self.noor = issue_token("noor", self.name, roles=["Manager", "Auditor"], name="Noor")
        self.manager = issue_token("sam", self.name, roles=["Manager"], name="Sam")
        self.graphql("mutation($i: PoliciesInput!) { definePolicies(input: $i) { auditsAgents } }",
                     {"i": {cap: [role] for cap, role in ROLES.items()}}, self.kit)

    def graphql(self, query: str, variables: dict | None = None, token: str | None = None) -> dict:
        response = httpx.post(f"{self.server.url}/graphql", json={"query": query, "variables": variables or {}},
                              headers={"Authorization": f"Bearer {token or self.noor}"}, timeout=60)
        body = response.json()
        assert not body.get("errors"), body
        return body["data"]

    def exporter(self, server: Server | None = None) -> OTLPSpanExporter:
        """The OpenTelemetry SDK's OTLP/HTTP exporter, sending as the kit to this server (or another)."""
        return OTLPSpanExporter(endpoint=f"{(server or self.server).url}/v1/traces",
                                headers={"Authorization": f"Bearer {self.kit}"}, compression=Compression.Gzip,
                                timeout=60)

    def tracer_provider(self) -> TracerProvider:
        """A provider exporting to the server, as docs/frameworks.md tells users to make one."""
        provider = TracerProvider(resource=Resource.create({"service.name": "workshop"}))
        provider.add_span_processor(BatchSpanProcessor(self.exporter(), schedule_delay_millis=100))
        return provider

    def root(self, skill: str | None = None) -> str:
        """The id of the root task (of this skill, when the tenant has more than one), once it has ended."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            roots = self.roots()
            ended = [root["id"] for root in roots if skill in (None, root["skill"]) and root["status"] != "RUNNING"]
            if ended:
                assert len(ended) == 1, roots
                return ended[0]
            assert time.monotonic() < deadline, f"no ended root {skill or ''} among {roots}"
            time.sleep(0.2)

    def tree(self, skill: str | None = None) -> Tree:
        root = self.graphql(TREE, {"id": self.root(skill)})["task"]
        tasks = [_task(found) for found in [root, *root["subtree"]]]
        return Tree(tasks[0], tasks)

    def seen_by(self, token: str, task_id: str) -> dict[str, Any]:
        """What a reader sees of a tree's words: the root's `given` and `result`, its tasks', and its lines'."""
        found = self.graphql(SEEN, {"id": task_id}, token)["task"]
        tasks = [found, *found["subtree"]]
        return {
            "given": [task["given"] for task in tasks],
            "result": [task["result"] for task in tasks],
            "summaries": [line["summary"] for task in tasks for line in task["trace"]],
            "payloads": [line["payload"] for task in tasks for line in task["trace"]],
        }

    def verify(self, task_id: str) -> dict[str, Any]:
        return self.graphql("query($id: ID!) { verifyTrace(task: $id) { intact lines problem } }",
                            {"id": task_id})["verifyTrace"]

    def roots(self) -> list[dict[str, Any]]:
        return [edge["node"] for edge in self.graphql(ROOTS)["tasks"]["edges"]]


def assert_each_role_reads_what_it_may(workshop: Workshop, tree: Tree) -> None:
    """Noor, who audits, reads every sentence and the content; Sam, a manager, the same sentences and none of the
    words (no task's `given` or `result`, no line's content); the kit only figures, no words and no sentences."""
    auditor = workshop.seen_by(workshop.noor, tree.root.id)
    manager = workshop.seen_by(workshop.manager, tree.root.id)
    kit = workshop.seen_by(workshop.kit, tree.root.id)

    assert auditor["summaries"] and all(auditor["summaries"]) and any(auditor["payloads"]), auditor
    assert manager["summaries"] == auditor["summaries"], manager
    assert set(manager["given"] + manager["result"] + manager["payloads"]) == {None}, manager
    assert set(kit["given"] + kit["result"] + kit["summaries"] + kit["payloads"]) == {None}, kit


def assert_every_root_verifies(workshop: Workshop) -> None:
    """Every tree the tenant's spans made, the stand-ins' too, verifies over its whole chain."""
    roots = workshop.roots()
    assert roots, "the spans made no tree"
    for root in roots:
        assert workshop.verify(root["id"]) == {"intact": True, "lines": root["chainLength"], "problem": None}, root


def assert_each_agent_is_a_task_named_by_itself(tree: Tree, root: str, under: str) -> None:
    """The root is the agent `root`'s task, its skill its name, under nothing; `under` is the one other task, its
    skill its name, under the root; both ended well."""
    other = tree.named(under)

    assert (tree.root.agent, tree.root.skill, tree.root.parent) == (root, root, None)
    assert (other.skill, other.parent) == (under, tree.root.id)
    assert [task.status for task in tree.tasks] == ["DONE", "DONE"]


def assert_every_model_call_is_recorded(tree: Tree, served: list[tuple[str, int, int]],
                                        models: list[tuple[Task, list[str]]]) -> None:
    """Every call the models served, as (model, input tokens, output tokens), is recorded once; and each task given
    holds its own calls, of the models named, in order."""
    assert tree.model_calls() == sorted(served)
    for task, named in models:
        assert [model for model, _, _ in task.model_calls()] == named, task.agent


@dataclass(frozen=True)
class ToolArguments:
    """A tool's arguments as the inspector's step that asks for the tool shows them: in words, and as JSON in its
    title."""

    tool: str
    words: str
    json: str


async def assert_the_step_shows_the_arguments(page: Page, arguments: ToolArguments) -> None:
    content = page.get_by_test_id("step").filter(has_text=f"It asked for {arguments.tool}").get_by_test_id(
        "step-content")
    await expect(content).to_have_text(arguments.words)
    await expect(content).to_have_attribute("title", arguments.json)


async def assert_the_inspector_shows_the_request_and_the_answer(
        browser: Browser, workshop: Workshop, task: Task, heading: str, asked: str, answer: str, screenshot: str,
        arguments: ToolArguments | None = None) -> None:
    """Noor's inspector page of the task: headed by `heading`, its first step holding the request and its last the
    answer (and a tool's arguments, when given, in its step), loading nothing from elsewhere and raising no problem;
    kept as the screenshot `screenshot`."""
    async with visit(browser, workshop.server.url) as seen:
        page = await seen.open(f"/inspect/{task.id}", workshop.noor)
        await expect(page.locator("h1, h2").first).to_contain_text(heading)
        await expect(page.get_by_test_id("step-content").first).to_contain_text(asked)
        if arguments is not None:
            await assert_the_step_shows_the_arguments(page, arguments)
        await expect(page.get_by_test_id("step").last).to_contain_text(answer)
        await seen.screenshot(screenshot)
        assert seen.elsewhere == [] and seen.problems == []


def _task(found: dict[str, Any]) -> Task:
    parent = found["parent"]["id"] if found["parent"] else None
    return Task(found["id"], found["agent"], found["skill"], found["status"], parent, found["trace"], found["given"],
                found["result"])
