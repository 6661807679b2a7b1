"""What the inspector shows of spans that came late: a model call outside any agent under its stand-in, ended
last, and a call exported after its agent's span in a late-work task of that agent, below its ended record."""

from __future__ import annotations

import httpx
import pytest
from playwright.async_api import expect

from tests.browser import visit
from tests.frameworks import Workshop
from tests.otlp_spans import agent, chat, export, new_trace_id

PROTOBUF = {"Content-Type": "application/x-protobuf"}
ROOTS = "{ tasks(filter: { rootsOnly: true }, first: 10) { edges { node { id agent status children { id skill status } } } } }"


def send(workshop: Workshop, *spans) -> None:
    response = httpx.post(f"{workshop.server.url}/v1/traces", content=export(*spans).SerializeToString(),
                          headers={**PROTOBUF, "Authorization": f"Bearer {workshop.kit}"}, timeout=60)
    assert response.status_code == 200, response.text


@pytest.fixture(scope="module")
def late(servers) -> tuple[Workshop, dict[str, dict]]:
    workshop = Workshop(servers[0])
    t = new_trace_id()
    estimator = agent(t, "Estimator")
    send(workshop, chat(t, b"", "Stray"))
    send(workshop, chat(t, estimator.span_id, "OnTime"), estimator)
    send(workshop, chat(t, estimator.span_id, "Late"))
    roots = {edge["node"]["agent"]: edge["node"] for edge in workshop.graphql(ROOTS)["tasks"]["edges"]}
    return workshop, roots


async def started_called_ended(seen, workshop: Workshop, task_id: str, model: str, shot: str) -> None:
    """The task's page shows three steps: its start, the call to `model`, and its end, last."""
    page = await seen.open(f"/inspect/{task_id}", workshop.noor)
    steps = page.get_by_test_id("step")
    await expect(steps).to_have_count(3)
    await expect(steps.nth(1)).to_contain_text(model)
    await expect(steps.last).to_contain_text("The work is done.")
    await seen.screenshot(shot)


async def test_a_stand_in_and_late_work_read_as_ended_last(late, browser):
    workshop, roots = late
    estimator, stand_in = roots["Estimator"], roots["unknown"]
    assert [(c["skill"], c["status"]) for c in estimator["children"]] == [("late work", "DONE")]

    async with visit(browser, workshop.server.url) as seen:
        await started_called_ended(seen, workshop, stand_in["id"], "Stray", "otlp-stand-in")

        page = await seen.open(f"/inspect/{estimator['id']}", workshop.noor)
        steps = page.get_by_test_id("step")
        await expect(steps.filter(has_text="OnTime")).to_have_count(1)
        await expect(steps.last).to_contain_text("The work is done.")
        await expect(page.get_by_text("late work")).not_to_have_count(0)
        await seen.screenshot("otlp-late-work")

        await started_called_ended(seen, workshop, estimator["children"][0]["id"], "Late", "otlp-late-work-task")
        assert seen.elsewhere == [] and seen.problems == []

    for task in (estimator["id"], stand_in["id"], estimator["children"][0]["id"]):
        assert workshop.verify(task)["intact"] is True
