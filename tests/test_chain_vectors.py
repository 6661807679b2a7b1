"""The v1 encoding pinned: fixed inputs give fixed hashes, and a re-derivation straight from the spec agrees.

The vectors are checked through both entry points of the one checker: as the server's lines (`check_chain`)
and as an export file (`check_export`), which must give the same verdict for the same change."""

import hashlib
import json
from datetime import datetime
from pathlib import Path

import orjson
import pytest

from models.record.chain import GENESIS, Line, commit, fixed_json, line_hash
from models.record.check import check_chain
from models.record.export_check import FORMAT, check_export

VECTORS = json.loads((Path(__file__).parent / "chain_vectors_v1.json").read_text(encoding="utf-8"))
FIXED_KEYS = ["seq", "kind", "task", "at", "model", "routeRule", "attempts", "costMicros", "inputTokens",
              "outputTokens", "tool", "toolCallId", "isError", "durationMs"]


def _line(v: dict, expected: dict) -> Line:
    return Line(
        seq=v["seq"], kind=v["kind"], task=v["task"], at=datetime.fromisoformat(v["at"].replace("Z", "+00:00")),
        summary=v["summary"], payload=v["payload"], summary_salt=v["summarySalt"], payload_salt=v["payloadSalt"],
        summary_hash=expected["summaryHash"], payload_hash=expected["payloadHash"], prev_hash=expected["prevHash"],
        hash=expected["hash"], model=v.get("model"), route_rule=v.get("routeRule"), attempts=v.get("attempts"),
        cost_micros=v.get("costMicros"), input_tokens=v.get("inputTokens"), output_tokens=v.get("outputTokens"),
        tool=v.get("tool"), tool_call_id=v.get("toolCallId"), is_error=v.get("isError"), duration_ms=v.get("durationMs"),
    )


def _spec_hash(v: dict, prev: str) -> str:
    """The encoding of docs/chain.md written out with hashlib alone, as an outside verifier would."""
    def commit_(salt: str, text: str) -> bytes:
        return hashlib.sha256(b"agentlog/commit/v1\x00" + bytes.fromhex(salt) + text.encode("utf-8")).digest()

    fixed = {key: v.get(key) for key in FIXED_KEYS}
    canonical = json.dumps(fixed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(
        b"agentlog/line/v1\x00" + bytes.fromhex(prev) + canonical.encode("utf-8")
        + commit_(v["summarySalt"], v["summary"]) + commit_(v["payloadSalt"], v["payload"] or "")
    ).hexdigest()


LEDGER = VECTORS["ledger"]


@pytest.mark.parametrize("vector", VECTORS["lines"] + LEDGER["lines"], ids=lambda v: f"{v['input']['kind']}-{v['input']['task'][:4]}")
def test_each_vector_hashes_to_its_pinned_value(vector):
    v, expected = vector["input"], vector["expected"]
    line = _line(v, expected)

    assert commit(v["summarySalt"], v["summary"]) == expected["summaryHash"]
    assert commit(v["payloadSalt"], v["payload"] or "") == expected["payloadHash"]
    assert fixed_json(line) == expected["fixed"]
    assert line_hash(expected["prevHash"], expected["fixed"], expected["summaryHash"], expected["payloadHash"]) == expected["hash"]
    assert _spec_hash(v, expected["prevHash"]) == expected["hash"]


def test_the_vectors_form_one_intact_chain():
    lines = [_line(vec["input"], vec["expected"]) for vec in VECTORS["lines"]]

    assert lines[0].prev_hash == GENESIS
    assert all(b.prev_hash == a.hash for a, b in zip(lines, lines[1:]))
    check = check_chain(lines, VECTORS["head"]["chainLength"], VECTORS["head"]["chainHead"])
    assert check.intact and check.lines == len(VECTORS["lines"]) == 7 and check.broken_at is None


def test_the_vectors_hold_a_line_of_each_kind_that_follows_the_ended_line():
    kinds = [vec["input"]["kind"] for vec in VECTORS["lines"]]

    assert kinds[kinds.index("ENDED") + 1:] == ["REVIEWED", "HELD", "RELEASED"]


def test_at_is_written_with_six_fraction_digits_and_z():
    line = _line(VECTORS["lines"][1]["input"], VECTORS["lines"][1]["expected"])

    assert '"at":"2026-11-30T09:15:01.250000Z"' in fixed_json(line)


def test_non_ascii_text_is_hashed_as_utf8_not_escaped():
    payload = VECTORS["lines"][1]["input"]["payload"]

    assert "frein arrière" in payload and "—" in payload
    assert VECTORS["lines"][1]["expected"]["payloadHash"] == hashlib.sha256(
        b"agentlog/commit/v1\x00" + bytes.fromhex("303132333435363738393a3b3c3d3e3f") + payload.encode("utf-8")
    ).hexdigest()


def _exported(v: dict, expected: dict) -> dict:
    line = {key: v.get(key) for key in FIXED_KEYS}
    line.update(summary=v["summary"], summarySalt=v["summarySalt"], payload=v["payload"], payloadSalt=v["payloadSalt"],
                erasedAt=None, contentErasedAt=None)
    line.update({key: expected[key] for key in ("summaryHash", "payloadHash", "prevHash", "hash")})
    return line


def _export(lines: list[dict], head: dict = VECTORS["head"]) -> list[bytes]:
    header = {"format": FORMAT, "root": lines[0]["task"], "tenant": "shop", "chainLength": head["chainLength"],
              "chainHead": head["chainHead"], "checkpoint": None, "exportedAt": "2026-11-30T10:00:00.000000Z"}
    return [orjson.dumps(header), *(orjson.dumps(line) for line in lines)]


def _both_ways(change: dict, at: int = 1) -> tuple[tuple, tuple]:
    """The same change made to the vectors' line at index `at` (the second unless told), checked as server lines
    and as an export."""
    exported = [_exported(vec["input"], vec["expected"]) for vec in VECTORS["lines"]]
    exported[at].update(change)
    lines = [_line(vec["input"], vec["expected"]) for vec in VECTORS["lines"]]
    changed = _line({**VECTORS["lines"][at]["input"], **change}, {**VECTORS["lines"][at]["expected"], **change})
    lines[at] = changed
    online = check_chain(lines, VECTORS["head"]["chainLength"], VECTORS["head"]["chainHead"], lines[0].task)
    offline = check_export(_export(exported))
    return (online.broken_at, online.reason), (offline.seq, offline.reason)


def test_the_vectors_verify_as_an_export_too():
    verdict = check_export(_export([_exported(vec["input"], vec["expected"]) for vec in VECTORS["lines"]]))

    assert (verdict.intact, verdict.lines, verdict.reason) == (True, 7, None)


@pytest.mark.parametrize("change, expected", [
    ({}, (None, None)),
    ({"summary": "Everyday answered; it cost nothing."}, (2, "SUMMARY_HASH")),
    ({"payload": "{}"}, (2, "PAYLOAD_HASH")),
    ({"costMicros": 1}, (2, "LINE_HASH")),
    ({"hash": "f" * 64}, (2, "LINE_HASH")),
    ({"prevHash": "0" * 64}, (2, "LINK")),
    ({"seq": 3}, (2, "SEQUENCE")),
    ({"summarySalt": "zz" * 16}, (2, "MALFORMED")),
], ids=["none", "sentence", "content", "figure", "hash", "link", "sequence", "salt"])
def test_a_change_to_a_vector_gives_the_same_reason_online_and_offline(change, expected):
    online, offline = _both_ways(change)

    assert online == offline == expected


AFTER_ENDED = {vec["input"]["kind"]: at for at, vec in enumerate(VECTORS["lines"]) if at > 3}


@pytest.mark.parametrize("kind", sorted(AFTER_ENDED))
@pytest.mark.parametrize("change, reason", [
    ({"summary": "Ana Auditor (ana) rejected this work."}, "SUMMARY_HASH"),
    ({"payload": "{}"}, "PAYLOAD_HASH"),
    ({"kind": "ERASED"}, "LINE_HASH"),
    ({"at": "2026-11-30T09:14:00.000000Z"}, "LINE_HASH"),
    ({"prevHash": "0" * 64}, "LINK"),
    ({"seq": 9}, "SEQUENCE"),
], ids=["sentence", "content", "kind", "time", "link", "sequence"])
def test_a_change_to_a_reviewed_held_or_released_line_gives_the_same_reason_online_and_offline(kind, change, reason):
    at = AFTER_ENDED[kind]

    online, offline = _both_ways(change, at)

    assert online == offline == (at + 1, reason)


def test_a_ledger_line_verifies_in_its_own_chain_online_and_offline():
    """The tenant's ledger (SPEC 9.3): a CONFIG_CHANGED line after its root's STARTED line, sealed as any line."""
    lines = [_line(vec["input"], vec["expected"]) for vec in LEDGER["lines"]]
    exported = [_exported(vec["input"], vec["expected"]) for vec in LEDGER["lines"]]

    assert [line.kind for line in lines] == ["STARTED", "CONFIG_CHANGED"]
    online = check_chain(lines, LEDGER["head"]["chainLength"], LEDGER["head"]["chainHead"], lines[0].task)
    offline = check_export(_export(exported, LEDGER["head"]))
    assert (online.intact, online.lines) == (offline.intact, offline.lines) == (True, 2)
    assert '"retentionBasis":"Mia' in lines[1].payload


@pytest.mark.parametrize("change, reason", [
    ({"summary": "The kit agent-kit changed nothing."}, "SUMMARY_HASH"),
    ({"payload": '{"change":"definePolicies"}'}, "PAYLOAD_HASH"),
    ({"kind": "REVIEWED"}, "LINE_HASH"),
    ({"prevHash": "0" * 64}, "LINK"),
], ids=["sentence", "content", "kind", "link"])
def test_a_change_to_a_ledger_line_gives_the_same_reason_online_and_offline(change, reason):
    vec = LEDGER["lines"][1]
    lines = [_line(LEDGER["lines"][0]["input"], LEDGER["lines"][0]["expected"]),
             _line({**vec["input"], **change}, {**vec["expected"], **change})]
    exported = [_exported(v["input"], v["expected"]) for v in LEDGER["lines"]]
    exported[1].update(change)

    online = check_chain(lines, LEDGER["head"]["chainLength"], LEDGER["head"]["chainHead"], lines[0].task)
    offline = check_export(_export(exported, LEDGER["head"]))

    assert (online.broken_at, online.reason) == (offline.seq, offline.reason) == (2, reason)
