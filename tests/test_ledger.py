"""The shop's ledger (SPEC 9.3): every change to who may read or do what in the shop, and to what it keeps, is a
CONFIG_CHANGED line of one chain of the shop's own, which Ana the auditor reads and checks as any work."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import timedelta

import orjson
import pytest

from models import AgentTask, TenantPolicies, TraceEvent
from models.ledger import AGENT, SKILL, ledger_id
from resolvers.forget import retention
from tests.shop import Shop
from tests.statements import counted

LEDGER = "{ ledger { id agent skill status chainLength record { kind summary payload } } }"
POLICIES = "mutation($input: PoliciesInput!) { definePolicies(input: $input) { retainDays } }"
PRICE = ("mutation($input: ModelPriceInput!) { setModelPrice(input: $input) { model } }")
HOLD = "mutation($input: HoldInput!) { holdWork(input: $input) { id } }"
RELEASE = "mutation($input: HoldInput!) { releaseHold(input: $input) { id } }"
DEFINE_WEBHOOK = "mutation($input: WebhookInput!) { defineWebhook(input: $input) { id secret } }"
REMOVE_WEBHOOK = "mutation($id: ID!) { removeWebhook(id: $id) }"
ERASURES = {
    "eraseAgentWorkContent": "mutation($task: ID!) { eraseAgentWorkContent(task: $task, why: \"Mia asked.\") }",
    "anonymiseAgentWork": "mutation($task: ID!) { anonymiseAgentWork(task: $task, why: \"Mia asked.\") }",
    "forgetAgentWork": "mutation($task: ID!) { forgetAgentWork(task: $task) }",
}


def ana(shop: Shop) -> str:
    return shop.person("ana", "Auditor", name="Ana")


def pia(shop: Shop) -> str:
    return shop.person("pia", "Privacy", name="Pia")


def carla(shop: Shop) -> str:
    return shop.person("carla", "Counsel", name="Carla")


async def ledger(shop: Shop, token: str | None = None) -> dict | None:
    return (await shop.client.ok(LEDGER, token=token or ana(shop)))["ledger"]


async def changes(shop: Shop) -> list[dict]:
    """The ledger's CONFIG_CHANGED lines, their content read as JSON."""
    found = await ledger(shop)
    lines = [line for line in found["record"] if line["kind"] == "CONFIG_CHANGED"] if found else []
    return [{**line, "payload": json.loads(line["payload"])} for line in lines]


async def test_the_ledger_is_made_on_the_first_change_and_says_who_changed_what(client):
    shop = Shop(client)
    assert await ledger(shop) is None

    await shop.setup()

    found = await ledger(shop)
    assert {k: found[k] for k in ("id", "agent", "skill", "status")} == {
        "id": str(ledger_id(shop.tenant)), "agent": AGENT, "skill": SKILL, "status": "RUNNING"}
    assert [line["kind"] for line in found["record"]] == ["STARTED", "CONFIG_CHANGED", "CONFIG_CHANGED"]
    agent, policies = await changes(shop)
    assert agent["summary"] == "The kit agent-kit registered the agent Estimator."
    assert agent["payload"]["change"] == "registerAgent"
    assert agent["payload"]["by"] == {"id": "agent-kit", "name": None, "kit": True}
    assert (agent["payload"]["agent"], agent["payload"]["logging"]) == ("Estimator", "FULL")
    assert policies["summary"] == "The kit agent-kit defined the policies."
    assert policies["payload"]["auditsAgents"] == ["Auditor"]
    assert (await shop.check(str(ledger_id(shop.tenant)), ana(shop)))["intact"] is True


async def test_each_kind_of_change_makes_one_line_and_a_change_to_nothing_none(client):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()
    await client.ok(POLICIES, {"input": {"holdsRecords": ["Counsel"]}}, shop.kit)
    await client.ok(POLICIES, {"input": {"holdsRecords": ["Counsel"]}}, shop.kit)
    await shop.setup()
    await shop.setup(transcript_readers=["Auditor"])
    price = {"model": "Everyday", "inputMicrosPerMillion": 3, "outputMicrosPerMillion": 15,
             "effectiveFrom": "2026-01-01T00:00:00Z"}
    await client.ok(PRICE, {"input": price}, shop.kit)
    await client.ok(PRICE, {"input": price}, shop.kit)
    await client.ok(POLICIES, {"input": {"retainDays": 30, "retentionBasis": "Our contract with Mia says 30 days."}},
                    shop.kit)
    await client.ok(HOLD, {"input": {"task": task, "reason": "A complaint."}}, carla(shop))
    await client.ok(RELEASE, {"input": {"task": task, "reason": "Settled."}}, carla(shop))
    await client.ok(ERASURES["eraseAgentWorkContent"], {"task": task}, pia(shop))

    said = [(c["payload"]["change"], c["summary"]) for c in await changes(shop)]

    assert said == [
        ("registerAgent", "The kit agent-kit registered the agent Estimator."),
        ("definePolicies", "The kit agent-kit defined the policies."),
        ("definePolicies", "The kit agent-kit defined the policies."),
        ("registerAgent", "The kit agent-kit changed the agent Estimator."),
        ("setModelPrice", "The kit agent-kit set the price of Everyday."),
        ("definePolicies", "The kit agent-kit defined the policies."),
        ("holdWork", f"Carla (carla) held the work {task}."),
        ("releaseHold", f"Carla (carla) released the hold on the work {task}."),
        ("eraseAgentWorkContent", f"Pia (pia) erased the content of the work {task}."),
    ]
    found = await changes(shop)
    assert found[3]["payload"]["transcriptReaders"] == ["Auditor"]
    assert found[4]["payload"]["inputMicrosPerMillion"] == 3
    assert found[5]["payload"]["retentionBasis"] == "Our contract with Mia says 30 days."
    assert found[6]["payload"]["by"] == {"id": "carla", "name": "Carla", "kit": False}
    assert found[6]["payload"]["reason"] == "A complaint."
    assert found[8]["payload"]["task"] == task and found[8]["payload"]["lines"] > 0
    assert (await shop.check(str(ledger_id(shop.tenant)), ana(shop)))["intact"] is True


async def test_defining_and_removing_a_webhook_are_ledger_lines_without_its_secret(client, configure):
    configure(webhook_allow_private=True)
    shop = Shop(client)
    await shop.setup()
    url = "http://127.0.0.1:9/hooks"
    hook = (await client.ok(DEFINE_WEBHOOK, {"input": {"url": url, "events": ["AgentTaskFailed"]}},
                            shop.kit))["defineWebhook"]
    await client.ok(REMOVE_WEBHOOK, {"id": hook["id"]}, shop.kit)

    found = [c for c in await changes(shop) if c["payload"]["change"].endswith("Webhook")]

    assert [(c["payload"]["change"], c["summary"]) for c in found] == [
        ("defineWebhook", f"The kit agent-kit defined the webhook {hook['id']} for {url}."),
        ("removeWebhook", f"The kit agent-kit removed the webhook {hook['id']}."),
    ]
    assert found[0]["payload"]["events"] == ["AgentTaskFailed"] and found[0]["payload"]["url"] == url
    assert hook["secret"] not in str(found)
    assert (await shop.check(str(ledger_id(shop.tenant)), ana(shop)))["intact"] is True


@pytest.mark.parametrize("erasure", ["anonymiseAgentWork", "forgetAgentWork"])
async def test_every_erasure_is_a_ledger_line(client, erasure):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()

    await client.ok(ERASURES[erasure], {"task": task}, pia(shop))

    last = (await changes(shop))[-1]
    assert (last["payload"]["change"], last["payload"]["task"]) == (erasure, task)
    assert last["payload"]["by"]["id"] == "pia"


async def test_erasing_a_help_request_is_a_ledger_line_without_its_words(client):
    shop = Shop(client)
    await shop.setup()
    help = (await shop.write("askForHelp", {"question": "Is Mia's rim brake worn?", "askedOf": {"id": "mia"}}))["id"]

    await client.ok("mutation($help: ID!) { eraseAgentHelp(help: $help, why: \"Mia asked.\") }", {"help": help},
                    pia(shop))

    last = (await changes(shop))[-1]
    assert (last["payload"]["change"], last["payload"]["help"]) == ("eraseAgentHelp", help)
    assert last["payload"]["by"]["id"] == "pia" and last["summary"].endswith(f" erased the help request {help}.")
    assert "rim brake" not in str(last) and "Mia asked" not in str(last)
    assert (await shop.check(str(ledger_id(shop.tenant)), ana(shop)))["intact"] is True


async def test_the_retention_sweep_records_what_it_forgot_and_never_sweeps_the_ledger(client):
    shop = Shop(client)
    await shop.setup()
    await client.ok(POLICIES, {"input": {"retainDays": 200}}, shop.kit)
    task = await shop.estimate()

    await retention.sweep(at=retention.now() + timedelta(days=400), wait=True)

    assert await AgentTask.filter(id=task).count() == 0
    last = (await changes(shop))[-1]
    assert (last["payload"]["change"], last["payload"]["task"], last["summary"]) == (
        "retention", task, f"retention forgot the work {task}.")
    assert (await shop.check(str(ledger_id(shop.tenant)), ana(shop)))["intact"] is True


async def test_the_ledger_is_never_erased_stopped_held_or_written_by_the_kit(client):
    shop = Shop(client)
    await shop.setup()
    await client.ok(POLICIES, {"input": {"holdsRecords": ["Counsel"]}}, shop.kit)
    lid = str(ledger_id(shop.tenant))
    before = (await ledger(shop))["chainLength"]

    for query in ERASURES.values():
        error = await client.error(query, {"task": lid}, pia(shop))
        assert error["extensions"]["code"] == "NOT_FOUND"
    stop = await client.error("mutation($input: StopTaskInput!) { stopTask(input: $input) { id } }",
                              {"input": {"task": lid, "reason": "Why not."}}, shop.noor)
    hold = await client.error(HOLD, {"input": {"task": lid, "reason": "Why not."}}, carla(shop))
    call = await client.error(
        "mutation($input: ModelCallInput!) { recordModelCall(input: $input) { seq } }",
        {"input": {"task": lid, "model": "Everyday", "inputTokens": 1, "outputTokens": 1}}, shop.kit)
    under = await client.error("mutation($input: StartTaskInput!) { startTask(input: $input) { id } }",
                               {"input": {"agent": "Estimator", "skill": "Sneak", "parent": lid,
                                          "actor": {"id": "estimator"}}}, shop.kit)
    named = await client.error("mutation($input: RegisterAgentInput!) { registerAgent(input: $input) { name } }",
                               {"input": {"name": AGENT}}, shop.kit)

    assert [e["extensions"]["code"] for e in (stop, hold, call, under)] == ["NOT_FOUND"] * 4
    assert named["extensions"] == {"code": "BAD_INPUT", "field": "input.name"}
    assert (await ledger(shop))["chainLength"] == before


async def test_only_the_auditors_read_the_ledger_and_no_list_shows_it_as_work(client):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()
    lid = str(ledger_id(shop.tenant))
    others = {"kit": shop.kit, "manager": shop.person("nia", "Manager"), "accountant": shop.person("abe", "Accountant"),
              "privacy": pia(shop), "mia": shop.mia}

    for who, token in others.items():
        assert await ledger(shop, token) is None, who
        assert await shop.read(lid, token, "id") is None, who
        listed = await client.ok('{ tasks(filter: {agent: "agentlog"}) { edges { node { id } } } }', token=token)
        assert listed["tasks"]["edges"] == [], who
    listed = await client.ok("{ tasks { totalCount edges { node { id } } } }", token=ana(shop))
    assert [e["node"]["id"] for e in listed["tasks"]["edges"]] == [task]
    assert listed["tasks"]["totalCount"] == 1
    asked = await client.ok('{ tasks(filter: {agent: "agentlog"}) { edges { node { id } } } }', token=ana(shop))
    assert [e["node"]["id"] for e in asked["tasks"]["edges"]] == [lid]
    other = Shop(client)
    await other.setup()
    assert await other.read(lid, ana(other), "id") is None


async def test_a_change_rolled_back_writes_no_ledger_line(client, monkeypatch):
    shop = Shop(client)
    await shop.setup()
    before = (await ledger(shop))["chainLength"]
    refused = await client.error(POLICIES, {"input": {"retainDays": 30}}, shop.kit)
    assert refused["extensions"]["field"] == "input.retainDays"

    async def fail(*args, **kwargs):
        raise RuntimeError("the disk is full")

    monkeypatch.setattr("resolvers.write.append.sign_head", fail)
    monkeypatch.setattr("resolvers.write.append.store_at_once", fail)
    failed = await client.post(POLICIES, {"input": {"auditsAgents": ["Auditor", "Counsel"]}}, shop.kit)
    assert failed["errors"]
    monkeypatch.undo()

    assert (await ledger(shop))["chainLength"] == before
    assert (await TenantPolicies.get(tenant=shop.tenant)).audits_agents == ["Auditor"]


async def test_concurrent_changes_keep_the_ledger_whole(client):
    shop = Shop(client)
    price = {"inputMicrosPerMillion": 3, "outputMicrosPerMillion": 15, "effectiveFrom": "2026-01-01T00:00:00Z"}

    await asyncio.gather(*(client.ok(PRICE, {"input": {**price, "model": f"m{n}"}}, shop.kit) for n in range(12)))

    found = await ledger(shop, shop.person("ana", "Auditor"))
    assert found is None
    await client.ok(POLICIES, {"input": {"auditsAgents": ["Auditor"]}}, shop.kit)
    found = await ledger(shop)
    assert found["chainLength"] == 1 + 12 + 1
    assert sorted(json.loads(line["payload"])["model"] for line in found["record"][1:-1]) == sorted(
        f"m{n}" for n in range(12))
    assert (await shop.check(found["id"], ana(shop)))["intact"] is True
    assert await AgentTask.filter(tenant=shop.tenant, agent=AGENT).count() == 1


async def test_a_change_costs_the_ledger_two_or_three_statements_and_a_change_to_nothing_none(client, dialect):
    """definePolicies alone is two statements (read the policies locked, write them); the ledger's line adds the lock
    of its root and, on PostgreSQL, one statement storing the line, moving the head and signing it (on SQLite the
    line is stored apart from the two statements that move and sign the head)."""
    shop = Shop(client)
    await shop.setup()
    with counted() as unchanged:
        await client.ok(POLICIES, {"input": {"auditsAgents": ["Auditor"]}}, shop.kit)
    with counted() as changed:
        await client.ok(POLICIES, {"input": {"auditsAgents": ["Auditor", "Counsel"]}}, shop.kit)

    assert len(unchanged) == 2 and all('"policies"' in s for s in unchanged)
    assert len(changed) == 2 + (2 if dialect == "postgres" else 3)
    assert changed[2].startswith("SELECT") and '"agent_task"' in changed[2]
    assert "FOR UPDATE" in changed[2] or dialect != "postgres"


def agentlog(*args: str, database: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "AGENTLOG_DATABASE_URL": database}
    return subprocess.run([sys.executable, "-m", "graph.cli", *args], capture_output=True, env=env, timeout=120)


async def test_the_ledger_exports_and_verifies_offline(client, database, tmp_path):
    shop = Shop(client)
    await shop.setup()
    await client.ok(POLICIES, {"input": {"holdsRecords": ["Counsel"]}}, shop.kit)
    lid = str(ledger_id(shop.tenant))
    key = tmp_path / "key.txt"
    key.write_text((await client.ok("{ checkpointKey }"))["checkpointKey"])
    response = await client.http.get(f"/export/{lid}", headers={"Authorization": f"Bearer {ana(shop)}"})
    assert response.status_code == 200
    exported = tmp_path / "ledger.jsonl"
    exported.write_bytes(response.content)
    kinds = [orjson.loads(line)["kind"] for line in response.content.splitlines()[1:]]
    assert kinds == ["STARTED", "CONFIG_CHANGED", "CONFIG_CHANGED", "CONFIG_CHANGED"]

    intact = agentlog("verify", "--file", str(exported), "--key", str(key), "--json", database="sqlite:///nowhere/x.db")

    assert (intact.returncode, orjson.loads(intact.stdout)["intact"]) == (0, True), intact.stdout
    hidden = await client.http.get(f"/export/{lid}", headers={"Authorization": f"Bearer {shop.kit}"})
    assert hidden.status_code == 404
    assert await TraceEvent.filter(root_id=lid, tenant=shop.tenant).count() == 4

