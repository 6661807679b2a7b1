"""The kit client (`agentlog_kit`) against a running `agentlog serve`: the shop's story, failures, sub-tasks,
the background send, and the contract's refusals as typed exceptions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from agentlog_kit import BadInput, Conflict, Forbidden, Kit, NotFound
from tests.kit_reads import LiveShop

MIA = {"id": "mia", "name": "Mia"}


@pytest.fixture
def shop(servers) -> LiveShop:
    shop = LiveShop(servers[0])
    with Kit(shop.url, shop.kit) as kit:
        kit.register_agent("Estimator", purpose="Estimates bicycle repairs.", roles=["Helper"])
        kit.register_agent("PartsFinder", purpose="Finds parts.")
    return shop


def kinds(record: list[dict]) -> list[str]:
    return [line["kind"] for line in record]


def test_the_shop_story_recorded_with_the_client(servers):
    shop = LiveShop(servers[0])
    with Kit(shop.url, shop.kit) as kit:
        agent = kit.register_agent("Estimator", purpose="Estimates bicycle repairs.", roles=["Helper"],
                                   transcript_readers=["Manager"])
        policies = kit.define_policies(supervises_agents=["Manager"])
        with kit.task(agent="Estimator", skill="EstimateRepair", actor={"id": "estimator", "name": "Estimator"},
                      requester=MIA, given="Rear brake does not bite.", limit_micros=50_000,
                      about="Ticket T-7") as t:
            t.model_call("Everyday", input_tokens=120, output_tokens=30, cost_micros=200, route_rule="llm:default",
                         messages=[{"role": "user", "content": "Estimate T-7"}],
                         response={"toolCalls": [{"id": "c1", "name": "PartsFor"}]})
            call = t.tool_call("PartsFor", tool_call_id="c1", input={"fault": "rear brake"})
            call.result(["brake pads", "cable"], duration_ms=12)
            help = t.ask_for_help("May I order a new cable?", asked_of=MIA)
            kit.send_back(help.id, "Yes, order it.", by=MIA)
            t.model_call("Everyday", input_tokens=200, output_tokens=40, cost_micros=200,
                         response={"text": "One hour."})
            t.result = {"hours": 1}
            t.outcome = "Estimated one hour."
    assert agent.transcript_readers == ["Manager"] and policies.supervises_agents == ["Manager"]
    read = shop.read(t.id)
    task = read["task"]
    assert kinds(task["record"]) == ["STARTED", "MODEL_CALL", "TOOL_CALL", "TOOL_RESULT", "ASKED_FOR_HELP",
                                     "SENT_BACK", "MODEL_CALL", "ENDED"]
    assert task["status"] == "DONE" and task["outcome"] == "Estimated one hour."
    assert task["given"] == "Rear brake does not bite." and task["result"] == {"hours": 1}
    assert task["spentMicros"] == 400 and task["modelCalls"] == 2 and task["toolCalls"] == 1
    assert task["record"][3]["payload"] == '["brake pads","cable"]' and task["record"][3]["toolCallId"] == "c1"
    assert read["verifyTrace"] == {"intact": True, "lines": 8, "brokenAt": None, "problem": None}


def test_an_exception_in_the_block_fails_the_task_with_its_message_and_escapes(shop):
    with Kit(shop.url, shop.kit) as kit:
        with pytest.raises(ValueError, match="no cable in stock"):
            with kit.task("Estimator", "EstimateRepair", requester=MIA) as t:
                t.model_call("Everyday", input_tokens=10, output_tokens=5, cost_micros=20)
                raise ValueError("no cable in stock")
    task = shop.read(t.id)["task"]
    assert task["status"] == "FAILED" and task["outcome"] == "no cable in stock"
    assert kinds(task["record"]) == ["STARTED", "MODEL_CALL", "ENDED"]


def test_sub_tasks_nest_and_their_lines_keep_the_order_they_were_made_in(shop):
    with Kit(shop.url, shop.kit) as kit:
        with kit.task("Estimator", "EstimateRepair", requester=MIA) as root:
            root.model_call("Everyday", input_tokens=10, output_tokens=5, cost_micros=20)
            with root.sub_task("PartsFinder", "FindParts", given="rear brake") as parts:
                parts.tool_call("Catalogue", input={"part": "cable"}).result({"cable": 3})
                with parts.sub_task("PartsFinder", "CheckStock") as stock:
                    stock.model_call("Small", input_tokens=3, output_tokens=1, cost_micros=1)
            root.model_call("Everyday", input_tokens=10, output_tokens=5, cost_micros=20)
    read = shop.read(root.id)
    record = read["task"]["record"]
    owners = [line["task"]["id"] for line in record]
    assert kinds(record) == ["STARTED", "MODEL_CALL", "STARTED", "TOOL_CALL", "TOOL_RESULT", "STARTED",
                             "MODEL_CALL", "ENDED", "ENDED", "MODEL_CALL", "ENDED"]
    assert owners == [root.id, root.id, parts.id, parts.id, parts.id, stock.id, stock.id, stock.id, parts.id,
                      root.id, root.id]
    assert read["task"]["children"] == [{"id": parts.id, "skill": "FindParts", "status": "DONE"}]
    stock_read = shop.read(stock.id)["task"]
    assert stock_read["depth"] == 2 and stock_read["parent"] == {"id": parts.id}
    assert read["verifyTrace"]["intact"]


def test_traced_records_a_call_with_its_arguments_and_result_and_nests(shop):
    with Kit(shop.url, shop.kit) as kit:

        @kit.traced(agent="PartsFinder", skill="FindParts")
        def find_parts(fault: str, urgent: bool = False) -> list[str]:
            kit.current_task().model_call("Small", input_tokens=3, output_tokens=1, cost_micros=1)
            return ["brake pads", "cable"]

        @kit.traced(agent="Estimator", skill="EstimateRepair", requester=MIA)
        def estimate(ticket: str) -> dict:
            return {"ticket": ticket, "parts": find_parts("rear brake")}

        assert estimate("T-7") == {"ticket": "T-7", "parts": ["brake pads", "cable"]}
        outer = kit.current_task()
    assert outer is None
    roots = httpx.post(shop.url + "/graphql", headers={"Authorization": f"Bearer {shop.mia}"}, json={
        "query": "{ tasks(filter: {rootsOnly: true}) { edges { node { id } } } }"}).json()
    root_id = roots["data"]["tasks"]["edges"][0]["node"]["id"]
    root = shop.read(root_id)["task"]
    assert json.loads(root["given"]) == {"ticket": "T-7"}
    assert root["result"] == {"ticket": "T-7", "parts": ["brake pads", "cable"]}
    child = shop.read(root["children"][0]["id"])["task"]
    assert json.loads(child["given"]) == {"fault": "rear brake", "urgent": False}
    assert child["result"] == ["brake pads", "cable"] and child["modelCalls"] == 1


def test_lines_are_sent_after_the_pause_without_waiting_for_the_end(shop):
    with Kit(shop.url, shop.kit, flush_after=0.2) as kit:
        with kit.task("Estimator", "EstimateRepair", requester=MIA) as t:
            t.model_call("Everyday", input_tokens=10, output_tokens=5, cost_micros=20)
            deadline = time.monotonic() + 10
            while shop.read(t.id)["task"]["chainLength"] < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert shop.read(t.id)["task"]["chainLength"] == 2


def test_a_full_batch_is_sent_at_once(shop):
    with Kit(shop.url, shop.kit, batch_lines=4, flush_after=60) as kit:
        with kit.task("Estimator", "EstimateRepair", requester=MIA) as t:
            for n in range(9):
                t.model_call("Everyday", input_tokens=n, output_tokens=1, cost_micros=1)
            assert shop.read(t.id)["task"]["chainLength"] == 1 + 8
    assert shop.read(t.id)["task"]["chainLength"] == 1 + 9 + 1


def test_a_batch_refused_in_the_background_surfaces_on_the_next_call_with_its_lines(shop):
    with Kit(shop.url, shop.kit, flush_after=0.1) as kit:
        with pytest.raises(BadInput) as refused:
            with kit.task("Estimator", "EstimateRepair", requester=MIA) as t:
                t.model_call("Everyday", input_tokens=-1, output_tokens=5, cost_micros=20)
                deadline = time.monotonic() + 10
                while t.task.batches.refused is None and time.monotonic() < deadline:
                    time.sleep(0.05)
                t.model_call("Everyday", input_tokens=1, output_tokens=5, cost_micros=20)
    assert refused.value.code == "BAD_INPUT"
    assert (refused.value.field, refused.value.path, refused.value.line) == (
        "input_tokens", "lines[0].modelCall.inputTokens", 0)
    assert refused.value.http_status == 200 and refused.value.request_id
    assert refused.value.lines == [{"modelCall": {"model": "Everyday", "inputTokens": -1, "outputTokens": 5,
                                                  "costMicros": 20}}]
    task = shop.read(t.id)["task"]
    assert task["status"] == "FAILED" and "inputTokens" in task["outcome"]
    assert kinds(task["record"]) == ["STARTED", "ENDED"]


def test_a_batch_refused_at_the_end_fails_the_task_and_raises(shop):
    with Kit(shop.url, shop.kit, flush_after=60) as kit:
        with pytest.raises(BadInput):
            with kit.task("Estimator", "EstimateRepair", requester=MIA) as t:
                t.tool_call("", input={})
    assert shop.read(t.id)["task"]["status"] == "FAILED"


def test_refusals_are_typed_with_their_code_and_field(shop):
    person = LiveShop(shop.server, shop.tenant).mia
    with Kit(shop.url, shop.kit) as kit:
        with pytest.raises(BadInput) as unregistered:
            kit.start_task("Nobody", "Anything")
        assert unregistered.value.code == "BAD_INPUT" and unregistered.value.field == "agent"
        with pytest.raises(BadInput) as not_a_number:
            kit.start_task("Estimator", "EstimateRepair", limit_micros="lots")
        assert (not_a_number.value.field, not_a_number.value.path) == ("limit_micros", "input.limitMicros")
        with pytest.raises(NotFound) as unknown:
            kit.start_task("Estimator", "EstimateRepair", parent="00000000-0000-0000-0000-000000000000")
        assert unknown.value.code == "NOT_FOUND" and unknown.value.field == "parent"
        kit.register_agent("Helper", purpose="helps", idempotency_key="helper-once")
        with pytest.raises(Conflict) as conflict:
            kit.register_agent("Helper", purpose="helps more", idempotency_key="helper-once")
        assert conflict.value.code == "CONFLICT" and conflict.value.field == "idempotency_key"
    with Kit(shop.url, person) as not_a_kit:
        with pytest.raises(Forbidden) as forbidden:
            not_a_kit.register_agent("Estimator")
        assert forbidden.value.code == "FORBIDDEN"


def test_an_explicitly_ended_task_is_not_ended_again(shop):
    with Kit(shop.url, shop.kit) as kit:
        with kit.task("Estimator", "EstimateRepair", requester=MIA) as t:
            t.end("STOPPED", outcome="Mia withdrew the ticket.")
    task = shop.read(t.id)["task"]
    assert task["status"] == "STOPPED" and kinds(task["record"]) == ["STARTED", "ENDED"]


def test_the_walkthrough_records_and_reads_back_on_a_running_server(servers):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, "docs/walkthrough.py", servers[0].url], cwd=Path(__file__).parent.parent,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    said = dict(line.split(": ", 1) for line in done.stdout.splitlines() if line.startswith(("The receipt", "verifyTrace")))
    assert json.loads(said["verifyTrace"]) == {"intact": True, "lines": 9, "brokenAt": None, "problem": None}
    receipt = json.loads(said["The receipt, as Mia reads it"])
    assert receipt["status"] == "DONE" and receipt["spentMicros"] == 600
