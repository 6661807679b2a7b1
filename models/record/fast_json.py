"""Compact JSON as UTF-8 bytes, fast: orjson where it can write the value, the standard library where it cannot
(integers past 64 bits, and text with an unpaired surrogate, which it escapes); `compact_text`, the chain's
`compact_json` text itself, by orjson where orjson writes the very same text; and JSON read as the standard
library reads it, by orjson wherever it reads the same."""

from __future__ import annotations

import json
from typing import Any

import orjson

from models.record.chain import compact_json

DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
TWENTY_DIGITS = b"0" * 20
MINUS_NINETEEN = b"-" + b"0" * 19


def dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return json.dumps(value, separators=(",", ":")).encode()


def compact_text(value: Any) -> str:
    """`compact_json(value)`, character for character. orjson writes it for text, whole numbers of 64 bits, true,
    false, null, lists and text-keyed objects of them; a float (which it spells otherwise), a wider number, an
    unpaired surrogate or any other type goes to `compact_json`."""
    try:
        if _plain(value):
            return orjson.dumps(value).decode()
    except (orjson.JSONEncodeError, RecursionError):
        pass
    return compact_json(value)


def _plain(value: Any) -> bool:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is list:
        return all(map(_plain, value))
    if kind is dict:
        return all(type(key) is str and _plain(item) for key, item in value.items())
    return False


def loads(data: str | bytes) -> Any:
    """The value `json.loads` reads from `data`. orjson reads UTF-8 bytes several times faster, but turns an
    integer past 64 bits (above 2**64 - 1, below -2**63) into a float, and refuses NaN, Infinity, unpaired
    surrogates and other encodings, all of which `json` takes: bytes with a run of 20 digits or more, or of 19
    after a minus sign, and whatever orjson refuses, are left to `json`. A time in nanoseconds (19 digits) is
    read by orjson."""
    if isinstance(data, bytes) and not long_number(data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data)


def long_number(data: bytes) -> bool:
    """Whether `data` holds a run of 20 digits, or a minus and 19: found with every digit made a zero, as two
    substring searches, at a twentieth of what the regular expression `[0-9]{20}|-[0-9]{19}` costs."""
    zeroed = data.translate(DIGITS_AS_ZERO)
    return TWENTY_DIGITS in zeroed or MINUS_NINETEEN in zeroed
