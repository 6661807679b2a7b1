"""Every append signs the tree's head; the database never lets a tree's signed size go back or fork."""

import asyncio
import base64
import os
import subprocess
import sys

import pytest
from tortoise.transactions import in_transaction

from models import AgentTask, SignedCheckpoint
from models.errors import CheckpointRefused
from models.record.note import parse_checkpoint, open_note, verifier_from_key
from resolvers.write import signing
from resolvers.write.checkpoints import keep_checkpoint
from tests.shop import Shop

WRITERS = 30


async def checkpoint_of(shop: Shop, task: str, token: str) -> dict:
    data = await shop.client.ok(
        "query($id: ID!) { checkpointKey task(id: $id) { chainLength chainHead checkpoint root { checkpoint } } }",
        {"id": task}, token,
    )
    return {"key": data["checkpointKey"], **data["task"]}


async def test_a_root_carries_a_note_over_its_head_that_the_published_key_opens(client):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()

    seen = await checkpoint_of(shop, task, shop.mia)
    body = parse_checkpoint(open_note(seen["checkpoint"], verifier_from_key(seen["key"])))

    assert body.origin == f"agentlog/{shop.tenant}/{task}"
    assert (body.size, body.head) == (seen["chainLength"], seen["chainHead"]) == (9, seen["chainHead"])
    assert seen["checkpoint"].split("\n")[2] == base64.b64encode(bytes.fromhex(seen["chainHead"])).decode()


async def test_a_sub_task_has_no_checkpoint_of_its_own_and_its_root_has_the_trees(client):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start())["id"]
    child = (await shop.start(parent=root))["id"]

    seen = await checkpoint_of(shop, child, shop.noor)

    assert seen["checkpoint"] is None
    assert parse_checkpoint(open_note(seen["root"]["checkpoint"], verifier_from_key(seen["key"]))).size == 2


async def test_concurrent_writers_leave_the_checkpoint_on_the_final_head(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]

    await asyncio.gather(*(
        shop.write("recordToolCall", {"task": task, "tool": "PartsFor", "input": {"writer": i}}) for i in range(WRITERS)
    ))

    root = await AgentTask.get(id=task)
    kept = await SignedCheckpoint.get(root_id=task)
    assert (kept.size, kept.head) == (root.chain_length, root.chain_head) == (WRITERS + 1, root.chain_head)
    body = parse_checkpoint(open_note(kept.note, signing.signer().verifier))
    assert (body.size, body.head) == (kept.size, kept.head)


async def test_the_database_refuses_a_smaller_size_and_the_same_size_with_another_head(client):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()
    before = await SignedCheckpoint.get(root_id=task)

    for size, head in ((before.size - 1, "ab" * 32), (before.size, "cd" * 32)):
        with pytest.raises(CheckpointRefused):
            async with in_transaction() as conn:
                await keep_checkpoint(shop.tenant, task, size, head, conn)

    after = await SignedCheckpoint.get(root_id=task)
    assert (after.size, after.head, after.note) == (before.size, before.head, before.note)


async def test_two_writers_forking_one_size_at_once_are_refused_but_one(client):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()
    size = (await SignedCheckpoint.get(root_id=task)).size + 1

    async def fork(head: str) -> str:
        try:
            async with in_transaction() as conn:
                await keep_checkpoint(shop.tenant, task, size, head, conn)
                await asyncio.sleep(0.05)
        except CheckpointRefused:
            return "refused"
        return head

    outcomes = await asyncio.gather(*(fork(f"{i:02x}" * 32) for i in range(8)))

    kept = await SignedCheckpoint.get(root_id=task)
    signed = [o for o in outcomes if o != "refused"]
    assert len(signed) == 1 and (kept.size, kept.head) == (size, signed[0])


def test_without_a_named_key_one_is_made_on_first_start_and_kept(tmp_path, configure, monkeypatch):
    configure(signing_key=None)
    monkeypatch.chdir(tmp_path)
    signing._signer_named.cache_clear()

    first = signing.signer()
    signing._signer_named.cache_clear()
    again = signing.signer()

    kept = tmp_path / signing.DEFAULT_FILE
    assert first == again and kept.read_text().startswith("PRIVATE+KEY+agentlog+")
    assert [p.name for p in tmp_path.iterdir()] == [signing.DEFAULT_FILE]
    assert kept.stat().st_mode & 0o077 == 0
    signing._signer_named.cache_clear()


def test_a_named_key_file_holds_a_private_key_or_a_seed_and_nothing_else(tmp_path, configure):
    seed = os.urandom(32)
    for name, data in (("raw", seed), ("hex", seed.hex().encode())):
        (tmp_path / name).write_bytes(data)
        configure(signing_key=str(tmp_path / name))
        assert signing.signer().seed == seed
    (tmp_path / "junk").write_text("not a key")
    for named in (tmp_path / "junk", tmp_path / "absent"):
        configure(signing_key=str(named))
        with pytest.raises(signing.SigningKeyError):
            signing.signer()


def test_the_server_will_not_start_with_a_key_file_it_cannot_use(tmp_path):
    (tmp_path / "junk").write_text("not a key")
    env = {**os.environ, "AGENTLOG_SIGNING_KEY": str(tmp_path / "junk")}

    done = subprocess.run([sys.executable, "-m", "graph.cli", "serve", "--port", "1"], capture_output=True, text=True,
                          env=env, timeout=60)

    assert done.returncode == 2 and "AGENTLOG_SIGNING_KEY" in done.stderr
