"""Request bodies are read by orjson only where it reads what the standard library reads: the same values, the same
refusals."""

import json
import math
import re

import pytest
from hypothesis import given, strategies as st

from models import TraceEvent
from models.record import fast_json
from tests.shop import Shop

BODIES = [
    b'{"query": "{ me { id } }", "variables": {"input": {"n": 1, "f": 0.1, "e": 1.5e-7, "z": -0.0}}}',
    b'{"a": 1, "a": 2}',
    b'{"big": 123456789012345678901234567890}',
    b'{"edge": 9223372036854775807, "past": 18446744073709551616, "neg": -9223372036854775809}',
    b'{"nan": NaN, "inf": Infinity, "huge": 1e400}',
    b'{"lone": "\\ud800", "pair": "\\ud83d\\udeb2", "nul": "a\\u0000b", "slash": "\\\\u0000"}',
    '\ufeff{"bom": true}'.encode("utf-8"),
    '{"wide": "\u00e9\u4e2d"}'.encode("utf-16"),
    b'  [1, "two", null, true, false, {"x": []}]  ',
]
REFUSED = [b'{"query": ', b"", b'{"a": 1,}', b"{'a': 1}", b'"\x01"', b"[" * 5 + b"]" * 4]


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("body", BODIES)
def test_a_body_reads_as_the_standard_library_reads_it(body):
    assert same(fast_json.loads(body), json.loads(body))


@pytest.mark.parametrize("body", REFUSED)
def test_a_body_the_standard_library_refuses_is_refused(body):
    with pytest.raises(json.JSONDecodeError):
        json.loads(body)
    with pytest.raises(json.JSONDecodeError):
        fast_json.loads(body)


@given(st.integers(-(2**70), 2**70) | st.integers(-(2**63) - 2, -(2**63) + 2) | st.integers(2**64 - 2, 2**64 + 2)
       | st.integers(10**18, 10**19 + 10))
def test_a_whole_number_of_any_width_reads_as_the_standard_library_reads_it(n):
    body = f'{{"n": {n}, "at": [{n}, "{n}"]}}'.encode()
    assert same(fast_json.loads(body), json.loads(body))


DIGIT_RUNS = st.text(alphabet="0123456789", min_size=17, max_size=22)
RUNS = st.lists(DIGIT_RUNS | st.sampled_from(["-", "a", " ", ".", "\u00e9"]), max_size=6).map(
    lambda pieces: "".join(pieces).encode())


@given(st.binary(max_size=80) | RUNS)
def test_a_long_number_is_found_wherever_the_regular_expression_finds_one(data):
    assert fast_json.long_number(data) == (re.search(rb"[0-9]{20}|-[0-9]{19}", data) is not None)


async def test_an_integer_past_64_bits_in_json_content_is_stored_as_sent(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]

    await shop.write("recordToolCall", {"task": task, "tool": "PartsFor",
                                        "input": {"serial": 123456789012345678901234567890}})

    line = await TraceEvent.get(task_id=task, seq=2)
    assert line.payload == '{"serial":123456789012345678901234567890}'
