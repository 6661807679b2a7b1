"""`compact_text` writes what `compact_json` writes, character for character, for any value JSON can hold and for
the ones it refuses alike: a payload's text, and so its commitment in the chain, does not depend on the path."""

import pytest
from hypothesis import given, strategies as st

from models.record.chain import compact_json
from models.record.fast_json import compact_text

characters = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, categories=None)
texts = st.text(alphabet=characters, max_size=30)
scalars = (st.none() | st.booleans() | st.integers() | st.integers(min_value=2**62, max_value=2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | texts)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5)
                      | st.dictionaries(texts, inner, max_size=5), max_leaves=30)


@given(value=values)
def test_any_json_value_is_written_as_compact_json_writes_it(value):
    assert compact_text(value) == compact_json(value)


@pytest.mark.parametrize("value", [
    "\ud800", {"a\udfff": 1}, ["\x00\x01\x1f\x7f\u2028\u2029\"\\/\b\f\n\r\t"], 1e16, -0.0, 2**64, -(2**63) - 1,
    {1: "a key that is no text"}, ("a", "tuple"), [[[[[[[["deep"]]]]]]]],
])
def test_the_values_orjson_would_spell_otherwise_or_refuse(value):
    assert compact_text(value) == compact_json(value)
