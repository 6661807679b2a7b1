"""The offline verifier's fast path for plainly sealed lines gives the verdict the plain path gives: the same
line, reason and field on random chains, tampered at random."""

from datetime import datetime, timedelta, timezone
from unittest import mock

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models import export_check
from models.chain import GENESIS, Line, fixed_json, seal
from models.export_check import ExportChecker, check_export, fixed_bytes, line_of
from models.vocabulary import LineKind
from tests.export_file import ExportFile, as_json, header

ROOT, CHILD = "6f1c2a4e-3b5d-4c7e-9f10-2a3b4c5d6e7f", "0b7d3c1e-9a2f-4e6d-8c5b-1a2b3c4d5e6f"
WHOLE = st.none() | st.integers(0, 2**63 - 1)
TEXT = st.none() | st.text(max_size=12)
AT = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 30), timezones=st.just(timezone.utc))
ANY = (st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | st.text(max_size=12) | st.floats(allow_nan=False)
       | st.sampled_from([
           "2025-02-30T09:00:00.000000Z", "0999-01-01T00:00:00.000000Z", "2025-03-01T09:00:00.000000Z",
           "２０２５-03-01T09:00:00.000000Z", "Erased.", ROOT, CHILD, ROOT.upper(), GENESIS, "0" * 32, "A" * 64,
           *(kind.value for kind in LineKind)]))


@st.composite
def sealed_lines(draw) -> list[Line]:
    lines, prev = [], GENESIS
    for seq in range(1, draw(st.integers(1, 6)) + 1):
        line = Line(seq=seq, kind=draw(st.sampled_from(list(LineKind))).value, task=draw(st.sampled_from([ROOT, CHILD])),
                    at=draw(AT), summary=draw(TEXT), payload=draw(TEXT), summary_salt=None, payload_salt=None,
                    summary_hash="", payload_hash="", prev_hash="", hash="", model=draw(TEXT), route_rule=draw(TEXT),
                    attempts=draw(WHOLE), cost_micros=draw(WHOLE), input_tokens=draw(WHOLE), output_tokens=draw(WHOLE),
                    tool=draw(TEXT), tool_call_id=draw(TEXT), is_error=draw(st.none() | st.booleans()),
                    duration_ms=draw(WHOLE))
        if seq == 1:
            line.task = ROOT
        lines.append(seal(line, prev))
        prev = line.hash
    return lines


@st.composite
def tampered_exports(draw) -> list[bytes]:
    chain = draw(sealed_lines())
    marks = [draw(st.sampled_from([(False, False), (False, False), (True, False), (False, True)])) for _ in chain]
    lines = [orjson.loads(as_json(line, *mark)) for line, mark in zip(chain, marks)]
    for _ in range(draw(st.integers(0, 2))):
        n = draw(st.integers(0, len(lines) - 1))
        tamper = draw(st.sampled_from(["set", "set", "drop", "swap", "duplicate", "reseal"]))
        if tamper == "set":
            lines[n][draw(st.sampled_from(sorted(export_check.LINE_KEYS)))] = draw(ANY)
        elif tamper == "drop" and len(lines) > 1:
            del lines[n]
        elif tamper == "swap":
            m = draw(st.integers(0, len(lines) - 1))
            lines[n], lines[m] = lines[m], lines[n]
        elif tamper == "duplicate":
            lines.insert(n, dict(lines[n]))
        elif tamper == "reseal":
            forged = chain[min(n, len(chain) - 1)]
            forged.summary = draw(TEXT)
            prev = lines[n]["prevHash"]
            lines[n] = orjson.loads(as_json(seal(forged, prev if isinstance(prev, str) else forged.prev_hash)))
    head = draw(st.sampled_from([chain[-1].hash, lines[-1]["hash"]]))
    return [header(ROOT, draw(st.sampled_from([len(chain), len(lines)])), head, None)] + [
        orjson.dumps(line) for line in lines]


def plainly(lines: list[bytes]):
    with mock.patch.object(ExportChecker, "_sealed", lambda self, line: False):
        return check_export(lines)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tampered_exports())
def test_the_fast_path_gives_the_plain_paths_verdict_on_tampered_chains(lines):
    assert check_export(lines).as_json() == plainly(lines).as_json()


@settings(max_examples=300, deadline=None)
@given(sealed_lines())
def test_an_exported_lines_fixed_bytes_are_the_chains_own_encoding(chain):
    for line in chain:
        exported = orjson.loads(as_json(line))
        if export_check._rewritten(exported["at"]):
            assert fixed_bytes(exported) == fixed_json(line_of(exported)).encode()


def test_only_the_erased_lines_leave_the_fast_path_of_an_untouched_export():
    export = ExportFile()
    with mock.patch.object(export_check, "line_of", wraps=line_of) as built:
        assert check_export(export.lines).intact
    assert sorted(call.args[0]["seq"] for call in built.call_args_list) == [3, 4]


def test_a_time_before_the_year_1000_takes_the_plain_path_and_verifies_as_it_was_sealed():
    line = seal(Line(seq=1, kind="STARTED", task=ROOT, at=datetime(999, 5, 1, 8, tzinfo=timezone.utc) + timedelta(
        microseconds=1), summary="Started.", payload=None, summary_salt=None, payload_salt=None, summary_hash="",
        payload_hash="", prev_hash="", hash=""), GENESIS)
    exported = orjson.loads(as_json(line))
    assert not export_check._rewritten(exported["at"])
    lines = [header(ROOT, 1, line.hash, None), orjson.dumps(exported)]
    assert check_export(lines).as_json() == plainly(lines).as_json()
