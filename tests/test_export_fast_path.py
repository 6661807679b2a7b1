"""The offline verifier's fast path for plainly sealed lines gives the verdict the plain path gives: the same
line, reason and field on random chains, tampered at random."""

from datetime import datetime, timedelta, timezone
from unittest import mock

import orjson
from hypothesis import HealthCheck, given, settings

from models.record import export_check
from models.record.chain import GENESIS, Line, fixed_json, seal
from models.record.export_check import ExportChecker, check_export, fixed_bytes, line_of
from tests.export_file import ExportFile, as_json, header
from tests.export_strategies import ROOT, sealed_lines, tampered_exports

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
