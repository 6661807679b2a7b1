"""The kit against a running `agentlog serve`: Noor asks the Estimator's work to stop, and the agent stops at its
next step, its task ended STOPPED, whether it writes often, rarely, in a `@traced` sub-task, or asynchronously."""

from __future__ import annotations

import httpx
import pytest

from agentlog_kit import AsyncKit, Kit, StopAsked
from permissions.tokens import issue_token
from tests.kit_reads import LiveShop

MIA = {"id": "mia", "name": "Mia"}
REASON = "The customer collected the bike."
STOP = "mutation($input: StopTaskInput!) { stopTask(input: $input) { id } }"
READ = "query($id: ID!) { task(id: $id) { status outcome modelCalls record { kind } } }"


def noor(shop: LiveShop) -> str:
    return issue_token("noor", shop.tenant, roles=["Manager"], name="Noor")


def graphql(shop: LiveShop, query: str, variables: dict, token: str) -> dict:
    body = httpx.post(shop.url + "/graphql", json={"query": query, "variables": variables},
                      headers={"Authorization": f"Bearer {token}"}, timeout=30).json()
    assert not body.get("errors"), body
    return body["data"]


def stop(shop: LiveShop, task: str) -> None:
    graphql(shop, STOP, {"input": {"task": task, "reason": REASON}}, noor(shop))


def read(shop: LiveShop, task: str) -> dict:
    return graphql(shop, READ, {"id": task}, noor(shop))["task"]


@pytest.fixture
def shop(servers) -> LiveShop:
    shop = LiveShop(servers[0])
    with Kit(shop.url, shop.kit) as kit:
        kit.register_agent("Estimator", purpose="Estimates bicycle repairs.")
        kit.define_policies(supervises_agents=["Manager"])
    return shop


def test_the_write_after_a_stop_raises_stop_asked_and_the_task_ends_stopped(shop):
    steps = []
    with Kit(shop.url, shop.kit, batch_lines=1) as kit:
        with pytest.raises(StopAsked) as raised:
            with kit.task("Estimator", "EstimateRepair", requester=MIA) as t:
                for step in range(5):
                    t.model_call("Everyday", input_tokens=120, output_tokens=30, cost_micros=200)
                    steps.append(step)
                    if step == 1:
                        stop(shop, t.id)

    assert steps == [0, 1]
    assert (raised.value.by, raised.value.reason) == ({"id": "noor", "name": "Noor"}, REASON)
    task = read(shop, t.id)
    assert (task["status"], task["outcome"], task["modelCalls"]) == (
        "STOPPED", f"Noor asked the work to stop: {REASON}", 3)
    assert [line["kind"] for line in task["record"]] == [
        "STARTED", "MODEL_CALL", "MODEL_CALL", "STOP_ASKED", "MODEL_CALL", "ENDED"]


def test_a_loop_that_writes_rarely_asks_whether_it_was_asked_to_stop(shop):
    with Kit(shop.url, shop.kit) as kit:
        with kit.task("Estimator", "EstimateRepair", requester=MIA) as t:
            t.model_call("Everyday", input_tokens=120, output_tokens=30, cost_micros=200)
            assert t.stop_asked() is None
            stop(shop, t.id)
            asked = t.stop_asked()
            assert asked is not None and asked.reason == REASON
            t.end("STOPPED", outcome=str(asked))

    assert read(shop, t.id)["status"] == "STOPPED"


def test_work_below_a_stop_learns_it_too_and_a_traced_step_under_it_ends_stopped(shop):
    with Kit(shop.url, shop.kit, batch_lines=1) as kit:

        @kit.traced("Estimator", "FindParts")
        def find_parts(fault: str) -> list[str]:
            return ["brake pads"]

        with pytest.raises(StopAsked):
            with kit.task("Estimator", "EstimateRepair", requester=MIA) as t:
                with t.sub_task("Estimator", "CheckStock") as below:
                    stop(shop, t.id)
                    assert below.stop_asked().reason == REASON
                find_parts("rear brake does not bite")

    children = graphql(shop, "query($id: ID!) { task(id: $id) { status children { skill status } } }",
                       {"id": t.id}, noor(shop))["task"]
    assert children == {"status": "STOPPED", "children": [{"skill": "CheckStock", "status": "DONE"},
                                                          {"skill": "FindParts", "status": "STOPPED"}]}


async def test_the_async_kit_raises_it_from_the_next_write_too(shop):
    async with AsyncKit(shop.url, shop.kit, batch_lines=1) as kit:
        with pytest.raises(StopAsked):
            async with kit.task("Estimator", "EstimateRepair", requester=MIA) as t:
                await t.model_call("Everyday", input_tokens=120, output_tokens=30, cost_micros=200)
                stop(shop, t.id)
                call = await t.tool_call("PartsFor", input={"fault": "rear brake"})
                await call.result(["brake pads"])

    task = read(shop, t.id)
    assert task["status"] == "STOPPED"
    assert [line["kind"] for line in task["record"]] == ["STARTED", "MODEL_CALL", "STOP_ASKED", "TOOL_CALL", "ENDED"]
