"""The Vercel AI SDK under Node: `generateText` with its own mock model (`ai/test`) and two tools, traced by
`experimental_telemetry` and exported by the OpenTelemetry Node SDK's OTLP exporter to a running `agentlog serve`
(`tests/node/generate.mjs`, which ends itself should it try to reach another host)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.frameworks import (
    Tree, Workshop, assert_each_role_reads_what_it_may, assert_every_root_verifies,
    assert_the_inspector_shows_the_request_and_the_answer,
)

NODE_PROJECT = Path(__file__).resolve().parent / "node"
ASKED = "What does a rear brake repair take?"
ANSWER = "One hour of labour, brake pads and a cable."


@pytest.fixture(scope="module")
def node_project() -> Iterator[Path]:
    """tests/node installed from the npm registry into a folder of its own, exactly as its lock file says."""
    folder = Path(tempfile.mkdtemp(prefix="agentlog-ai-sdk-"))
    for name in ("package.json", "package-lock.json", "generate.mjs"):
        shutil.copy(NODE_PROJECT / name, folder / name)
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder, check=True, timeout=300,
                   stdout=subprocess.DEVNULL)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def run(servers, node_project) -> tuple[Workshop, Tree]:
    workshop = Workshop(servers[0])
    done = subprocess.run(["node", "generate.mjs", f"{servers[0].url}/v1/traces", workshop.kit], cwd=node_project,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"text": ANSWER, "steps": 2}
    return workshop, workshop.tree()


def test_the_run_is_the_root_task_named_by_its_telemetry(run):
    _, tree = run

    assert (tree.root.agent, tree.root.skill, tree.root.status) == ("Estimator", "estimate-repair", "DONE")
    assert (tree.root.given, tree.root.result) == (ASKED, ANSWER)
    assert len(tree.tasks) == 1


def test_every_model_call_is_recorded_with_its_model_and_tokens(run):
    _, tree = run

    assert tree.root.model_calls() == [("estimator-mock", 61, 17), ("estimator-mock", 94, 12)]


def test_each_tool_call_has_its_own_arguments_and_result(run):
    _, tree = run

    assert tree.root.tool_calls() == {
        "labourHours": ({"job": "rear brake"}, {"job": "rear brake", "hours": 1}, False),
        "partsFor": ({"fault": "rear brake"}, ["brake pads", "cable"], False),
    }


def test_model_call_content_is_the_sdks_json_messages(run):
    _, tree = run
    asked, answered = (json.loads(line["payload"]) for line in tree.root.kinds("MODEL_CALL"))

    assert asked["messages"] == [{"role": "system", "content": "You estimate bicycle repairs."},
                                 {"role": "user", "content": [{"type": "text", "text": ASKED}]}]
    assert [call["toolName"] for call in asked["response"]] == ["labourHours", "partsFor"]
    assert answered["response"] == ANSWER


def test_each_role_reads_what_it_may(run):
    workshop, tree, *_ = run

    assert_each_role_reads_what_it_may(workshop, tree)


def test_every_root_verifies(run):
    assert_every_root_verifies(run[0])


async def test_the_inspector_shows_the_agent_its_request_and_its_answer(run, browser):
    workshop, tree, *_ = run

    await assert_the_inspector_shows_the_request_and_the_answer(
        browser, workshop, tree.root, heading="Estimator", asked=ASKED, answer=ANSWER,
        screenshot="ai-sdk-estimate-repair")
