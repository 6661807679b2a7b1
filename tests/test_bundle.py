"""The incident bundle (SPEC 9.3): after Mia's complaint, Ana the auditor takes both of her estimates and the shop's
ledger in one file, and anyone checks every part of it offline, tree by tree, up to its signed checkpoint."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import orjson

from graph.cli.bundle import report
from models.ledger import ledger_id
from models.record.bundle_check import check_bundle
from models.record.note import verifier_from_key
from resolvers.read.bundle import bundle_all
from tests.shop import Shop
from tests.test_erasure_large import long_tree

OFFLINE = "sqlite:///nowhere/x.db"


def ana(shop: Shop) -> str:
    return shop.person("ana", "Auditor", name="Ana")


async def key_of(shop: Shop) -> str:
    return (await shop.client.ok("{ checkpointKey }"))["checkpointKey"]


async def fetch(shop: Shop, tasks: list[str], token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    query = "&".join(f"task={task}" for task in tasks)
    return await shop.client.http.get(f"/export/bundle?{query}", headers=headers)


def agentlog(*args: str, database: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "AGENTLOG_DATABASE_URL": database}
    return subprocess.run([sys.executable, "-m", "graph.cli", *args], capture_output=True, env=env, timeout=300)


async def complaint(client) -> tuple[Shop, str, str]:
    shop = Shop(client)
    await shop.setup()
    return shop, await shop.estimate(), await shop.estimate(about="Ticket T-8")


def parts_of(lines: list[bytes]) -> dict[str, list[int]]:
    """Where each part's lines are in the bundle, by root: indexes of its export's header and lines."""
    found: dict[str, list[int]] = {}
    current = None
    for at, raw in enumerate(lines):
        if raw.startswith(b'{"part":'):
            current = orjson.loads(raw)["root"]
            found[current] = []
        elif current is not None:
            found[current].append(at)
    return found


async def test_an_auditors_bundle_holds_each_tree_and_the_ledger_and_verifies_offline(client, tmp_path):
    shop, first, second = await complaint(client)
    key = tmp_path / "key.txt"
    key.write_text(await key_of(shop))

    response = await fetch(shop, [first, second, first], ana(shop))

    assert response.status_code == 200 and response.headers["content-type"].startswith("application/jsonl")
    lines = response.content.splitlines()
    header = orjson.loads(lines[0])
    assert (header["format"], header["tenant"], header["trees"], header["ledger"]) == (
        "agentlog-bundle/v1", shop.tenant, [first, second], str(ledger_id(shop.tenant)))
    parts = [orjson.loads(raw) for raw in lines if raw.startswith(b'{"part":')]
    assert parts == [{"part": "tree", "root": first}, {"part": "tree", "root": second},
                     {"part": "ledger", "root": header["ledger"]}]
    bundle = tmp_path / "bundle.jsonl"
    bundle.write_bytes(response.content)

    checked = agentlog("verify", "--bundle", str(bundle), "--key", str(key), "--json", database=OFFLINE)

    verdict = orjson.loads(checked.stdout)
    assert (checked.returncode, verdict["intact"], verdict["faults"]) == (0, True, []), checked.stdout
    assert [(p["root"], p["intact"], p["wholeToCheckpoint"]) for p in verdict["parts"]] == [
        (first, True, True), (second, True, True), (header["ledger"], True, True)]
    said = agentlog("verify", "--bundle", str(bundle), "--key", str(key), database=OFFLINE).stdout.decode()
    assert f"tree {first}: intact: 9 lines, 0 erased; its checkpoint's signature checked; whole up to its signed " \
           "checkpoint" in said


async def test_a_changed_line_a_removed_line_and_a_swapped_checkpoint_are_each_named_with_their_tree(client):
    shop, first, second = await complaint(client)
    verifier = verifier_from_key(await key_of(shop))
    lines = (await fetch(shop, [first, second], ana(shop))).content.splitlines()
    where = parts_of(lines)

    changed = list(lines)
    at = where[second][3]
    line = orjson.loads(changed[at])
    changed[at] = orjson.dumps({**line, "summary": "Everyday answered; it cost nothing."})
    removed = [raw for n, raw in enumerate(lines) if n != where[first][4]]
    swapped = list(lines)
    one, other = orjson.loads(lines[where[first][0]]), orjson.loads(lines[where[second][0]])
    swapped[where[first][0]] = orjson.dumps({**one, "checkpoint": other["checkpoint"]})
    swapped[where[second][0]] = orjson.dumps({**other, "checkpoint": one["checkpoint"]})

    def faults(tampered: list[bytes]) -> list[tuple]:
        verdict = check_bundle(tampered, verifier)
        assert not verdict.intact and not verdict.faults
        return [(p.root, p.verdict.seq, p.verdict.reason) for p in verdict.parts if not p.verdict.intact]

    assert faults(changed) == [(second, 3, "SUMMARY_HASH")]
    assert report(check_bundle(changed, verifier)).splitlines()[1] == (
        f"tree {second}: broken at line 3 (file line 4): SUMMARY_HASH: Line 3's sentence is not the one it was "
        "written with. (bundle line 17); not shown whole up to a signed checkpoint")
    assert faults(removed) == [(first, 4, "SEQUENCE")]
    assert faults(swapped) == [(first, None, "BAD_CHECKPOINT"), (second, None, "BAD_CHECKPOINT")]
    assert check_bundle(lines, verifier).intact


def test_a_part_missing_or_slipped_in_is_named_by_the_bundle():
    from tests.export_file import ExportFile

    export = ExportFile()
    root = orjson.loads(export.lines[0])["root"]
    header = orjson.dumps({"format": "agentlog-bundle/v1", "tenant": "shop", "trees": [root], "ledger": None,
                           "exportedAt": "2025-03-01T10:00:00.000000Z"})
    part = orjson.dumps({"part": "tree", "root": root})

    assert check_bundle([header, part, *export.lines], export.signer.verifier).intact
    missing = check_bundle([header], export.signer.verifier)
    twice = check_bundle([header, part, *export.lines, part, *export.lines], export.signer.verifier)
    assert [(f.root, f.reason) for f in missing.faults] == [(root, "MALFORMED")]
    assert "is missing" in missing.faults[0].problem and "more than once" in twice.faults[0].problem
    other = orjson.dumps({"part": "tree", "root": "00000000-0000-4000-8000-000000000000"})
    mislabelled = check_bundle([header, other, *export.lines], export.signer.verifier)
    assert any("another tree" in f.problem for f in mislabelled.faults)
    assert check_bundle([b"{}"]).faults[0].line == 1


async def test_a_bundle_holds_only_what_the_caller_may_read(client):
    shop, first, second = await complaint(client)
    other = Shop(client)
    await other.setup()
    elsewhere = await other.estimate()

    mine = await fetch(shop, [first], shop.mia)
    kit = await fetch(shop, [first], shop.kit)
    stranger = await fetch(shop, [first], shop.person("stan", "Mechanic"))
    foreign = await fetch(shop, [first, elsewhere], ana(shop))
    unknown = await fetch(shop, ["00000000-0000-4000-8000-000000000000"], ana(shop))
    nobody = await fetch(shop, [first], None)
    none = await fetch(shop, [], ana(shop))

    assert orjson.loads(mine.content.splitlines()[0])["ledger"] is None
    assert all(b'"summary":null' in raw for raw in kit.content.splitlines()[3:])
    assert (stranger.status_code, foreign.status_code, unknown.status_code) == (404, 404, 404)
    assert foreign.json()["errors"][0]["extensions"] == unknown.json()["errors"][0]["extensions"] == {
        "code": "NOT_FOUND", "field": "task"}
    assert (nobody.status_code, none.status_code) == (401, 400)


async def test_the_command_line_writes_a_bundle_with_everything_and_it_verifies(client, database, tmp_path):
    shop, first, second = await complaint(client)
    key = tmp_path / "key.txt"
    key.write_text(await key_of(shop))
    out = tmp_path / "bundle.jsonl"

    written = agentlog("export", "--bundle", str(out), first, second, database=database)

    assert written.returncode == 0, written.stderr
    assert "Wrote a bundle of 2 trees and the tenant's ledger" in written.stdout.decode()
    lines = out.read_bytes().splitlines()
    assert all(orjson.loads(raw)["payloadSalt"] for raw in lines[3:12])
    checked = agentlog("verify", "--bundle", str(out), "--key", str(key), database=OFFLINE)
    assert checked.returncode == 0, checked.stdout
    out.write_bytes(b"\n".join(lines[:5] + lines[6:]) + b"\n")
    broken = agentlog("verify", "--bundle", str(out), "--key", str(key), database=OFFLINE)
    assert broken.returncode == 1 and f"tree {first}: broken at line 3" in broken.stdout.decode()
    assert agentlog("verify", "--bundle", str(tmp_path / "absent"), database=OFFLINE).returncode == 2
    assert agentlog("export", "--bundle", str(out), "nonsense", database=database).returncode == 2


async def written_and_read(task: str, out: Path) -> tuple[int, int, int]:
    """The bundle of the task's tree written to `out` and checked from it: its size, and the peak memory of each."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        found = await bundle_all([task])
        with open(out, "wb") as target:
            async for chunk in found.lines():
                target.write(chunk)
        written = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        with open(out, "rb") as lines:
            verdict = check_bundle(lines)
        read = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert verdict.intact
    return out.stat().st_size, written, read


async def test_a_bundle_is_written_and_read_in_memory_that_does_not_grow_with_it(client, tmp_path):
    """Written a page of lines at a time (the export's pages of 5,000 lines, the next read while one is written);
    read a line at a time."""
    shop = Shop(client)
    await shop.setup()
    small = str((await long_tree(shop.tenant, 10_000)).id)
    large = str((await long_tree(shop.tenant, 50_000)).id)

    small_size, small_written, small_read = await written_and_read(small, tmp_path / "small.jsonl")
    large_size, large_written, large_read = await written_and_read(large, tmp_path / "large.jsonl")

    assert large_size > 4.5 * small_size and large_size > 25 * 1024 * 1024
    assert large_written < 1.3 * small_written, (small_written, large_written)
    assert large_read < 1024 * 1024 and small_read < 1024 * 1024, (small_read, large_read)
