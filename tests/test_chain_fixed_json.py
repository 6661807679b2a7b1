"""The canonical JSON of a line's fixed fields is byte for byte the json.dumps of docs/chain.md, whatever the fields hold."""

import json
import random
import uuid
from datetime import datetime, timedelta, timezone
from enum import Enum
from zoneinfo import ZoneInfo

from hypothesis import given, settings, strategies as st

from models.record.chain import Line, fixed_json, rfc3339
from models.record.vocabulary import LineKind

TEXTS = ["", "Everyday", 'say "hi"', "back\\slash", "tab\tnew\nline\x00\x1f", "Grüße", "日本語", "🚲 emoji", "\u2028\ud7ff"]
INTS = [None, 0, 1, -1, 2**31, 2**63 - 1, 10**30]


def spec(line: Line) -> str:
    fixed = {
        "seq": line.seq, "kind": line.kind, "task": str(line.task).lower(),
        "at": line.at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "model": line.model,
        "routeRule": line.route_rule, "attempts": line.attempts, "costMicros": line.cost_micros,
        "inputTokens": line.input_tokens, "outputTokens": line.output_tokens, "tool": line.tool,
        "toolCallId": line.tool_call_id, "isError": line.is_error, "durationMs": line.duration_ms,
    }
    return json.dumps(fixed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def line(rng: random.Random, **fields: object) -> Line:
    text = lambda: rng.choice([None, *TEXTS])  # noqa: E731
    values = dict(
        seq=rng.randint(1, 10**6), kind=rng.choice(["STARTED", "MODEL_CALL", LineKind.TOOL_RESULT, LineKind.ENDED]),
        task=str(uuid.UUID(int=rng.getrandbits(128))).upper(),
        at=datetime(2025, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=rng.getrandbits(40)),
        summary=None, payload=None, summary_salt=None, payload_salt=None, summary_hash="", payload_hash="",
        prev_hash="", hash="", model=text(), route_rule=text(), attempts=rng.choice(INTS),
        cost_micros=rng.choice(INTS), input_tokens=rng.choice(INTS), output_tokens=rng.choice(INTS), tool=text(),
        tool_call_id=text(), is_error=rng.choice([None, True, False]), duration_ms=rng.choice(INTS),
    )
    values.update(fields)
    return Line(**values)


def test_random_lines_encode_exactly_as_the_spec_says():
    rng = random.Random(7)
    for _ in range(5000):
        sample = line(rng)
        assert fixed_json(sample) == spec(sample)


class Kind(str, Enum):
    ENDED = "ENDED"


def test_unusual_values_still_encode_exactly_as_the_spec_says():
    rng = random.Random(11)
    for fields in ({"attempts": True}, {"cost_micros": 2.5}, {"kind": Kind.ENDED}, {"task": uuid.uuid4()},
                   {"model": 7}, {"is_error": 0}, {"seq": False}):
        sample = line(rng, **fields)
        assert fixed_json(sample) == spec(sample), fields


def test_times_in_any_zone_are_written_in_utc_with_six_digits():
    instants = [
        datetime(2025, 3, 30, 1, 59, 59, 999999, tzinfo=timezone.utc),
        datetime(2025, 3, 30, 3, 0, tzinfo=ZoneInfo("Europe/Berlin")),
        datetime(2025, 6, 1, 12, 0, 0, 5, tzinfo=ZoneInfo("UTC")),
        datetime(2025, 6, 1, 12, 0, tzinfo=timezone(timedelta(hours=-5, minutes=-30))),
        datetime(999, 12, 31, 23, 0, tzinfo=timezone.utc),
    ]
    for at in instants:
        assert rfc3339(at) == at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@settings(max_examples=500, deadline=None)
@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30),
                    timezones=st.sampled_from([timezone.utc, ZoneInfo("UTC"), ZoneInfo("Asia/Kolkata"),
                                               timezone(timedelta(hours=3))])))
def test_any_time_is_written_in_utc_with_six_digits(at):
    assert rfc3339(at) == at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
