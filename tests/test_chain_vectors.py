"""The v1 encoding pinned: fixed inputs give fixed hashes, and a re-derivation straight from the spec agrees."""

import hashlib
import json
from datetime import datetime
from pathlib import Path

import pytest

from models.chain import GENESIS, Line, check_chain, commit, fixed_json, line_hash

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


@pytest.mark.parametrize("vector", VECTORS["lines"], ids=lambda v: v["input"]["kind"])
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
    assert check.intact and check.lines == 3 and check.broken_at is None


def test_at_is_written_with_six_fraction_digits_and_z():
    line = _line(VECTORS["lines"][1]["input"], VECTORS["lines"][1]["expected"])

    assert '"at":"2026-11-30T09:15:01.250000Z"' in fixed_json(line)


def test_non_ascii_text_is_hashed_as_utf8_not_escaped():
    payload = VECTORS["lines"][1]["input"]["payload"]

    assert "frein arrière" in payload and "—" in payload
    assert VECTORS["lines"][1]["expected"]["payloadHash"] == hashlib.sha256(
        b"agentlog/commit/v1\x00" + bytes.fromhex("303132333435363738393a3b3c3d3e3f") + payload.encode("utf-8")
    ).hexdigest()
