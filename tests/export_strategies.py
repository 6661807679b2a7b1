"""Random sealed chains and random exports of them, tampered at random: what the offline checker's fast
paths are held against."""

from datetime import datetime, timezone

import orjson
from hypothesis import strategies as st

from models.record import export_check
from models.record.chain import GENESIS, Line, seal
from models.record.vocabulary import LineKind
from tests.export_file import as_json, header

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
