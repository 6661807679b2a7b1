"""GET /export/{task} and `agentlog export`: the tree's record as JSON Lines, each reader's words only, and the
file checked offline against the server's published key."""

import asyncio
import os
import subprocess
import sys
import uuid

import orjson

from models.export_check import check_export
from models.note import open_note, parse_checkpoint, verifier_from_key
from resolvers.export import FORMAT, MEDIA_TYPE
from tests.shop import Shop

TEXTS = ("summary", "summarySalt", "payload", "payloadSalt")


async def download(shop: Shop, task: str, token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return await shop.client.http.get(f"/export/{task}", headers=headers)


async def published_key(shop: Shop) -> str:
    return (await shop.client.ok("{ checkpointKey }"))["checkpointKey"]


def lines_of(response) -> list[bytes]:
    return response.content.splitlines()


async def test_an_auditor_exports_every_word_and_the_file_verifies_against_the_published_key(client):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()

    response = await download(shop, task, shop.noor)

    assert response.status_code == 200 and response.headers["content-type"].startswith(MEDIA_TYPE)
    lines = lines_of(response)
    head = orjson.loads(lines[0])
    assert (head["format"], head["root"], head["tenant"], head["chainLength"]) == (FORMAT, task, shop.tenant, 9)
    point = parse_checkpoint(open_note(head["checkpoint"], verifier_from_key(await published_key(shop))))
    assert (point.size, point.head) == (9, head["chainHead"])
    body = [orjson.loads(line) for line in lines[1:]]
    assert [line["seq"] for line in body] == list(range(1, 10))
    assert all(line[key] is not None for line in body for key in ("summary", "summarySalt", "payloadSalt"))
    assert check_export(lines, verifier_from_key(await published_key(shop))).intact


async def test_a_figures_reader_gets_the_hashes_but_no_words_and_can_still_verify(client):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()
    accountant = shop.person("ada", "Accountant")
    manager = shop.person("max", "Manager")

    figures = [orjson.loads(line) for line in lines_of(await download(shop, task, accountant))[1:]]
    sentences = [orjson.loads(line) for line in lines_of(await download(shop, task, manager))[1:]]

    assert all(line[key] is None for line in figures for key in TEXTS)
    assert all(line["hash"] and line["summaryHash"] and line["payloadHash"] for line in figures)
    assert all(line["summary"] and line["payload"] is None and line["payloadSalt"] is None for line in sentences)
    key = verifier_from_key(await published_key(shop))
    for token in (accountant, manager):
        assert check_export(lines_of(await download(shop, task, token)), key).intact


async def test_a_sub_tasks_requester_sees_only_the_hashes_of_the_lines_above(client):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start(requester={"id": "owner"}))["id"]
    child = (await shop.start(parent=root, requester={"id": "sam", "name": "Sam"}))["id"]
    await shop.model_call(child)
    sam = shop.person("sam", "Mechanic")

    lines = lines_of(await download(shop, child, sam))
    body = [orjson.loads(line) for line in lines[1:]]

    assert set(body[0]) == {"seq", "summaryHash", "payloadHash", "prevHash", "hash"}
    assert [line.get("task") for line in body[1:]] == [child, child]
    assert body[2]["payload"] is not None
    assert check_export(lines, verifier_from_key(await published_key(shop))).intact


async def test_another_tenants_task_and_a_task_the_caller_cannot_see_answer_as_an_unknown_id(client):
    shop, other = Shop(client), Shop(client)
    await shop.setup()
    task = await shop.estimate()
    await other.setup()

    unknown = await download(shop, "0f3a9b7e-2d4c-4e51-9a8b-5c6d7e8f9a0b", other.noor)
    theirs = await download(shop, task, other.noor)
    unseen = await download(shop, task, shop.person("tom", "Mechanic"))
    malformed = await download(shop, "not-an-id", other.noor)

    for response in (theirs, unseen, malformed):
        assert (response.status_code, response.content) == (unknown.status_code, unknown.content)
    assert unknown.status_code == 404
    assert unknown.json() == {"errors": [{"message": "No task with this id that you may read.",
                                          "extensions": {"code": "NOT_FOUND"}}]}
    anonymous = await download(shop, task, None)
    assert anonymous.status_code == 401
    assert anonymous.json()["errors"][0]["extensions"] == {"code": "UNAUTHENTICATED"}


def agentlog(*args: str, database: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "AGENTLOG_DATABASE_URL": database}
    return subprocess.run([sys.executable, "-m", "graph.cli", *args], capture_output=True, env=env, timeout=120)


async def test_the_command_line_exports_everything_and_verifies_it_offline(client, database, tmp_path):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()
    out, key = tmp_path / "export.jsonl", tmp_path / "key.txt"
    key.write_text(await published_key(shop))

    assert agentlog("export", task, "--out", str(out), database=database).returncode == 0
    lines = out.read_bytes().splitlines()
    assert all(orjson.loads(line)["payloadSalt"] for line in lines[1:])

    intact = agentlog("verify", "--file", str(out), "--key", str(key), "--json", database="sqlite:///nowhere/x.db")
    assert (intact.returncode, orjson.loads(intact.stdout)["intact"]) == (0, True)

    out.write_bytes(b"\n".join(lines[:-2]) + b"\n")
    cut = agentlog("verify", "--file", str(out), "--key", key.read_text(), "--json", database="sqlite:///nowhere/x.db")
    verdict = orjson.loads(cut.stdout)
    assert (cut.returncode, verdict["seq"], verdict["reason"]) == (1, 8, "TRUNCATED")

    missing = agentlog("verify", "--file", str(tmp_path / "absent.jsonl"), database="sqlite:///nowhere/x.db")
    assert missing.returncode == 2


async def test_an_export_is_one_state_of_the_chain_while_writers_append(client, monkeypatch):
    from resolvers import verify
    from resolvers.export import EVERYTHING, stream
    from resolvers.signing import signer

    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    for _ in range(4):
        await shop.model_call(task)
    monkeypatch.setattr(verify, "BATCH", 2)

    opened = asyncio.Event()

    async def append_three() -> None:
        await opened.wait()
        for _ in range(3):
            await shop.model_call(task)

    writes = asyncio.ensure_future(append_three())
    chunks = stream(uuid.UUID(task), EVERYTHING)
    lines = [await anext(chunks)]
    opened.set()
    await asyncio.sleep(0.2)
    lines += [chunk async for chunk in chunks]
    await writes

    exported = b"".join(lines).splitlines()
    assert orjson.loads(exported[0])["chainLength"] == len(exported) - 1 == 5
    assert check_export(exported, signer().verifier).intact
    assert (await shop.read(task, shop.noor, "chainLength"))["chainLength"] == 8
