"""Every statement the server sends in answer to a caller names exactly that caller's tenant (SPEC 8.3), so on a
Citus cluster each one runs on the caller's shard alone. The requests are the suite's main flows, run by one shop
while another shop's rows sit in the same tables; a hook on the connection records each statement they send.

Only migrations and background sweeps (retention, the OTLP wait) cross tenants; neither runs inside a request."""

from __future__ import annotations

import asyncio

import pytest
from tortoise.connection import get_connection

from tests.otlp_spans import export, new_trace_id
from tests.shop import Shop
from tests.tenant_statements import Sent, caller, faults, tenant_tables, watched
from tests.test_batch import RECORD, turn
from tests.test_erasure import priya, repair_job
from tests.test_otlp_ingest import estimate, post
from tests.test_prices import SET_PRICE
from tests.test_session_transcript import transcript
from tests.test_statement_counts import LIST_READ, TREE_READ

STOP = "mutation($input: StopTaskInput!) { stopTask(input: $input) { id } }"
SEARCH = "query($text: String!) { tasks(filter: {search: $text}) { totalCount edges { node { id about } } } }"
READS = [
    "{ agents { name purpose roles transcriptReaders logging } }",
    "{ modelPrices { model provider inputMicrosPerMillion effectiveFrom } }",
    "{ me { id name roles } }",
    "{ erasures { id kind taskId why at lines } }",
    "{ checkpointKey }",
]
ERASE = {
    "eraseAgentWorkContent": "mutation($id: ID!) { eraseAgentWorkContent(task: $id, why: \"Asked.\") }",
    "anonymiseAgentWork": "mutation($id: ID!) { anonymiseAgentWork(task: $id, why: \"Asked.\") }",
    "forgetAgentWork": "mutation($id: ID!) { forgetAgentWork(task: $id) }",
    "eraseAgentHelp": "mutation($id: ID!) { eraseAgentHelp(help: $id, why: \"Asked.\") }",
}


async def neighbour(client) -> Shop:
    """Another shop with the same story, so every table holds a second tenant's rows."""
    shop = Shop(client)
    await shop.setup(transcript_readers=["Auditor"])
    await repair_job(shop)
    await shop.estimate(session="s-1")
    return shop


async def assert_named(sent: list[Sent], *others: Shop) -> None:
    await asyncio.sleep(0)
    assert sent, "the hook saw no statement"
    tables = await tenant_tables()
    postgres = get_connection("default").capabilities.dialect == "postgres"
    found = {s.sql: f for s in sent if (f := faults(s, tables, postgres, frozenset(o.tenant for o in others)))}
    assert not found, "\n\n".join(f"{sql}\n  -> {'; '.join(why)}" for sql, why in found.items())


async def test_every_kit_mutation_and_a_stop_name_the_writer_s_tenant(client):
    other = await neighbour(client)
    shop = Shop(client)
    with watched() as sent, caller(shop.tenant):
        await shop.setup(transcript_readers=["Auditor"])
        await shop.setup(transcript_readers=["Auditor", "Manager"])
        job = await repair_job(shop)
        await shop.estimate(session="s-1")
        task = (await shop.start())["id"]
        await client.ok(RECORD, {"input": {"task": task, "lines": turn("c1")}}, shop.kit)
        flushed = {"input": {"task": task, "lines": turn("r1"), "idempotencyKey": "flush-1"}}
        assert await client.ok(RECORD, flushed, shop.kit) == await client.ok(RECORD, flushed, shop.kit)
        many = [line for n in range(10) for line in turn(f"d{n}")]
        await client.ok(RECORD, {"input": {"task": task, "lines": many}}, shop.kit)
        below = (await shop.start(parent=task, skill="FindParts", limitMicros=300))["id"]
        await shop.model_call(below)
        await client.ok(STOP, {"input": {"task": below, "reason": "Parts are known."}}, shop.noor)
        await shop.model_call(below)
        await shop.end(below, "STOPPED")
        await shop.end(task)
        await client.ok(SET_PRICE, {"input": {"model": "Everyday", "inputMicrosPerMillion": 1,
                                              "outputMicrosPerMillion": 2}}, shop.kit)
    await assert_named(sent, other)


async def test_every_read_names_the_reader_s_tenant(client):
    other = await neighbour(client)
    shop = await neighbour(client)
    job = await repair_job(shop)
    with watched() as sent, caller(shop.tenant):
        for token in (shop.noor, shop.mia, priya(shop), shop.person("olga", "Teacher")):
            await client.ok(TREE_READ, {"id": job.root}, token)
            await client.ok(LIST_READ, token=token)
            await client.ok(SEARCH, {"text": "rear brake"}, token)
            await client.ok(SEARCH, {"text": "pads"}, token)
            for read in READS:
                await client.ok(read, token=token)
            await client.ok("query($id: ID!) { agentHelp(id: $id) { id question answer } }", {"id": job.help}, token)
            await shop.verify(job.root, token)
            assert (await transcript(client, "s-1", token)).status_code in (200, 403)
            exported = await client.http.get(f"/export/{job.root}", headers={"Authorization": f"Bearer {token}"})
            assert exported.status_code in (200, 403, 404)
    await assert_named(sent, other)


@pytest.mark.parametrize("mutation", list(ERASE))
async def test_every_erasure_names_the_eraser_s_tenant(client, mutation):
    other = await neighbour(client)
    shop = Shop(client)
    await shop.setup(transcript_readers=["Auditor"])
    job = await repair_job(shop)
    outside = await shop.write("askForHelp", {"question": "Open on Sunday?", "askedOf": {"id": "olga"}})
    target = outside["id"] if mutation == "eraseAgentHelp" else job.root
    with watched() as sent, caller(shop.tenant):
        await client.ok(ERASE[mutation], {"id": target}, priya(shop))
    await assert_named(sent, other)


async def test_otlp_ingest_names_the_exporter_s_tenant(client):
    other = await neighbour(client)
    await post(other, export(*estimate(new_trace_id())))
    shop = Shop(client)
    await shop.setup()
    root, call, parts, helper, lookup = estimate(new_trace_id())
    with watched() as sent, caller(shop.tenant):
        for spans in ((lookup, call), (helper, parts), (root,), (root,)):
            assert (await post(shop, export(*spans))).status_code == 200
    await assert_named(sent, other)


TABLES = frozenset({"agent", "agent_task", "task_words", "llm_call"})
UNNAMED = [
    ("SELECT id FROM agent_task WHERE id = $1", ["t-1"]),
    ("SELECT a.id FROM agent_task a JOIN llm_call l ON l.task_id = a.id WHERE a.tenant = $1", ["acme"]),
    ("SELECT id FROM agent_task WHERE tenant = $1 AND id IN (SELECT task_id FROM task_words WHERE words @@ $2)",
     ["acme", "pads"]),
    ("SELECT (SELECT w.words FROM task_words w WHERE w.task_id = agent_task.id) FROM agent_task WHERE tenant = $1",
     ["acme"]),
    ("SELECT id FROM agent_task WHERE tenant = $1", ["globex"]),
    ('UPDATE "agent" SET "tenant"=$1,"purpose"=$2 WHERE "id"=$3 AND "tenant"=$1', ["acme", "p", 7]),
    ('INSERT INTO "agent" ("id","tenant","name") VALUES ($1,$2,$3)', [7, "globex", "Estimator"]),
    ('INSERT INTO "agent" ("id","name") VALUES ($1,$2)', [7, "Estimator"]),
]
NAMED = [
    ("SELECT id FROM agent_task WHERE tenant = $1 AND id = $2", ["acme", "t-1"]),
    ("SELECT id FROM agent_task WHERE tenant = 'acme'", []),
    ("SELECT a.id FROM agent_task a JOIN llm_call l ON l.task_id = a.id AND l.tenant = a.tenant "
     "WHERE a.tenant = $1", ["acme"]),
    ("SELECT (SELECT w.words FROM task_words w WHERE w.task_id = agent_task.id AND w.tenant = agent_task.tenant) "
     "FROM agent_task WHERE tenant = $1", ["acme"]),
    ('INSERT INTO "agent" ("id","tenant","name") VALUES ($1,$2,$3) ON CONFLICT ("tenant","name") DO UPDATE '
     'SET "purpose"=EXCLUDED."purpose"', [7, "acme", "Estimator"]),
    ("SELECT pg_current_wal_lsn()", []),
]


@pytest.mark.parametrize("sql,params", UNNAMED)
def test_the_check_finds_a_statement_that_leaves_the_caller_s_tenant_out(sql, params):
    assert faults(Sent("acme", sql, (tuple(params),)), TABLES, postgres=True, others=frozenset({"globex"}))


@pytest.mark.parametrize("sql,params", NAMED)
def test_the_check_passes_a_statement_that_names_the_caller_s_tenant(sql, params):
    assert faults(Sent("acme", sql, (tuple(params),)), TABLES, postgres=True, others=frozenset({"globex"})) == []
