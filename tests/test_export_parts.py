"""An export checked in parts side by side says what the plain checker says: the same verdict on random chains
tampered at random and cut anywhere, on a signed export with erasures and witnesses, and in worker processes."""

import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import orjson
from hypothesis import HealthCheck, given, settings, strategies as st

from models.record import export_parts
from models.record.chain import GENESIS, Line, seal
from models.record.export_check import check_export
from models.record.export_parts import check_export_file, check_part, cuts
from tests.export_file import ERASED_AT, ExportFile, as_json, checkpoint_note, header
from tests.export_strategies import ROOT, tampered_exports

RFC3339 = "%Y-%m-%dT%H:%M:%S.%fZ"


def in_process(args: list[tuple]) -> list:
    return [check_part(*one) for one in args]


def written(lines: list[bytes]) -> str:
    file = Path(tempfile.mkdtemp(prefix="agentlog-parts-")) / "export.jsonl"
    file.write_bytes(b"\n".join(lines) + b"\n")
    return str(file)


def in_parts(lines: list[bytes], parts: int, verifier=None, witnessed=(), mapper=in_process):
    path = written(lines)
    try:
        return check_export_file(path, verifier, witnessed, jobs=parts, split_from=0, mapper=mapper)
    finally:
        Path(path).unlink()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tampered_exports(), st.integers(2, 8))
def test_parts_give_the_plain_verdict_on_tampered_chains(lines, parts):
    assert in_parts(lines, parts).as_json() == check_export(lines).as_json()


def erase(export: ExportFile, seq: int) -> None:
    export.change(seq, erasedAt=ERASED_AT.strftime(RFC3339), summary="Erased.", summarySalt=None)


TAMPERS = {
    "none": lambda export: None,
    "erase a line after the receipt": lambda export: erase(export, 10),
    "erase a line before the receipt": lambda export: erase(export, 2),
    "drop the receipt": lambda export: export.lines.pop(8),
    "drop the last line": lambda export: export.lines.pop(),
    "change a cost": lambda export: export.change(11, costMicros=7),
    "change a sentence": lambda export: export.change(5, summary="Something else."),
    "break a link": lambda export: export.change(9, prevHash=GENESIS),
    "swap two lines": lambda export: export.lines.insert(6, export.lines.pop(7)),
    "slip a line in": lambda export: export.lines.append(export.lines[-1]),
    "renumber a line": lambda export: export.put(12, {**export.line(12), "seq": 13}),
}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TAMPERS)), st.booleans(), st.sampled_from([None, 5, 8, 12]), st.booleans(),
       st.integers(2, 6))
def test_parts_give_the_plain_verdict_on_a_signed_export_with_erasures(tamper, keyed, witness_at, forked, parts):
    export = ExportFile()
    TAMPERS[tamper](export)
    witnessed = []
    if witness_at is not None:
        head = GENESIS if forked else export.chain[witness_at - 1].hash
        witnessed.append(checkpoint_note(export.signer, export.root, witness_at, head))
    verifier = export.signer.verifier if keyed else None
    plain = check_export(export.lines, verifier, witnessed)
    assert in_parts(export.lines, parts, verifier, witnessed).as_json() == plain.as_json()


def long_export(lines: int) -> list[bytes]:
    start, prev, out = datetime(2025, 3, 1, 9, tzinfo=timezone.utc), GENESIS, []
    for seq in range(1, lines + 1):
        line = seal(Line(seq=seq, kind="TOOL_CALL" if seq > 1 else "STARTED", task=ROOT,
                         at=start + timedelta(seconds=seq, microseconds=seq), summary=f"It asked for PartsFor ({seq}).",
                         payload='{"fault":"rear brake"}', summary_salt=None, payload_salt=None, summary_hash="",
                         payload_hash="", prev_hash="", hash="", tool="PartsFor", tool_call_id=f"c{seq}"), prev)
        prev = line.hash
        out.append(as_json(line))
    return [header(ROOT, lines, prev, None), *out]


def test_a_long_export_is_checked_in_worker_processes_with_the_plain_verdict():
    lines = long_export(3000)
    found = in_parts(lines, 3, mapper=None)
    assert (found.intact, found.lines) == (True, 3000)
    changed = orjson.loads(lines[2500])
    changed["payload"] = '{"fault":"front brake"}'
    lines[2500] = orjson.dumps(changed)
    found = in_parts(lines, 3, mapper=None)
    assert (found.intact, found.seq, found.reason) == (False, 2500, "PAYLOAD_HASH")
    assert found.as_json() == check_export(lines).as_json()


def test_a_small_file_is_checked_in_one_part(monkeypatch):
    monkeypatch.setattr(export_parts, "_in_parts", lambda *args: (_ for _ in ()).throw(AssertionError("split")))
    path = written(long_export(20))
    try:
        assert check_export_file(path, jobs=4).intact
    finally:
        Path(path).unlink()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=30), st.integers(0, 40), st.integers(1, 9))
def test_the_parts_are_whole_lines_covering_the_file_in_order(lengths, header_length, parts):
    body = b"".join(b"x" * n + b"\n" for n in lengths)
    path = written([b"h" * header_length])
    Path(path).write_bytes(b"h" * header_length + b"\n" + body)
    start = header_length + 1
    try:
        ranges = cuts(path, start, parts)
        assert len(ranges) <= parts
        assert b"".join(body[a - start:b - start] for a, b in ranges) == body
        assert [a for a, _ in ranges[1:]] == [b for _, b in ranges[:-1]]
        assert all(body[a - start - 1:a - start] == b"\n" for a, _ in ranges[1:])
    finally:
        Path(path).unlink()
