"""Compact JSON as UTF-8 bytes, fast: orjson where it can write the value, the standard library where it cannot
(integers past 64 bits, and text with an unpaired surrogate, which it escapes)."""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return json.dumps(value, separators=(",", ":")).encode()
