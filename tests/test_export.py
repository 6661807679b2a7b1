"""GET /export/{task} and `agentlog export`: the tree's record as JSON Lines, each reader's words only, and the
file checked offline against the server's published key."""

import asyncio
import os
import subprocess
import sys
import uuid

import orjson

from models.record.export_check import check_export
from models.record.note import open_note, parse_checkpoint, verifier_from_key
from resolvers.read.export import FORMAT, MEDIA_TYPE
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

    exported = agentlog("export", task, "--out", str(out), database=database)
    assert exported.returncode == 0
    assert exported.stdout.decode().strip() == (
        f"Wrote 9 lines of the record of task {task}'s tree, after a header, to {out.resolve()} "
        f"({out.stat().st_size} bytes).")
    lines = out.read_bytes().splitlines()
    assert all(orjson.loads(line)["payloadSalt"] for line in lines[1:])

    intact = agentlog("verify", "--file", str(out), "--key", str(key), "--json", database="sqlite:///nowhere/x.db")
    assert (intact.returncode, orjson.loads(intact.stdout)["intact"]) == (0, True)
    assert orjson.loads(intact.stdout)["signatureChecked"] is True

    out.write_bytes(b"\n".join(lines[:-2]) + b"\n")
    cut = agentlog("verify", "--file", str(out), "--key", key.read_text(), "--json", database="sqlite:///nowhere/x.db")
    verdict = orjson.loads(cut.stdout)
    assert (cut.returncode, verdict["seq"], verdict["reason"]) == (1, 8, "TRUNCATED")

    missing = agentlog("verify", "--file", str(tmp_path / "absent.jsonl"), database="sqlite:///nowhere/x.db")
    assert missing.returncode == 2


async def test_an_export_is_one_state_of_the_chain_while_writers_append(client, monkeypatch):
    from resolvers.read import verify
    from resolvers.read.export import EVERYTHING, stream
    from resolvers.write.signing import signer

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
    chunks = stream(shop.tenant, uuid.UUID(task), EVERYTHING)
    lines = [await anext(chunks)]
    opened.set()
    await asyncio.sleep(0.2)
    lines += [chunk async for chunk in chunks]
    await writes

    exported = b"".join(lines).splitlines()
    assert orjson.loads(exported[0])["chainLength"] == len(exported) - 1 == 5
    assert check_export(exported, signer().verifier).intact
    assert (await shop.read(task, shop.noor, "chainLength"))["chainLength"] == 8


def verify_file(*args: str) -> subprocess.CompletedProcess:
    return agentlog("verify", "--file", *args, database="sqlite:///nowhere/x.db")


async def test_without_a_key_the_chain_is_checked_and_the_signature_said_not_to_be(client, database, tmp_path):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()
    out = tmp_path / "export.jsonl"
    agentlog("export", task, "--out", str(out), database=database)

    unchecked = verify_file(str(out))
    checked = verify_file(str(out), "--key", await published_key(shop))

    said = unchecked.stdout.decode()
    assert unchecked.returncode == 0 and said.startswith("intact: 9 lines, 0 erased; its signature not checked")
    assert "signature was not checked" in said and "checkpointKey" in said and "agentlog key" in said
    assert checked.returncode == 0 and checked.stdout.decode().strip() == (
        "intact: 9 lines, 0 erased; its checkpoint's signature checked")
    assert orjson.loads(verify_file(str(out), "--json").stdout)["signatureChecked"] is False


async def test_agentlog_key_prints_the_key_checkpointKey_publishes(client):
    shop = Shop(client)

    printed = agentlog("key", database="sqlite:///nowhere/x.db")

    assert (printed.returncode, printed.stdout.decode().strip()) == (0, await published_key(shop))


def test_agentlog_key_without_a_key_file_says_where_it_looked_and_makes_none(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "AGENTLOG_SIGNING_KEY"}
    printed = subprocess.run([sys.executable, "-m", "graph.cli", "key"], capture_output=True, env=env, cwd=tmp_path,
                             timeout=120)

    assert printed.returncode == 2 and str(tmp_path / "agentlog-signing.key") in printed.stderr.decode()
    assert not (tmp_path / "agentlog-signing.key").exists()


async def test_a_malformed_line_is_named_by_its_field(client, database, tmp_path):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()
    out = tmp_path / "export.jsonl"
    agentlog("export", task, "--out", str(out), database=database)
    lines = out.read_bytes().splitlines()
    line = orjson.loads(lines[4])
    line["costMicros"] = "200"
    out.write_bytes(b"\n".join([*lines[:4], orjson.dumps(line), *lines[5:]]) + b"\n")

    said, verdict = verify_file(str(out)), orjson.loads(verify_file(str(out), "--json").stdout)

    assert said.returncode == 1 and said.stdout.decode().startswith(
        "broken at line 4 (file line 5): MALFORMED (costMicros): Line 4's costMicros is not a whole number.")
    assert (verdict["seq"], verdict["reason"], verdict["field"]) == (4, "MALFORMED", "costMicros")
