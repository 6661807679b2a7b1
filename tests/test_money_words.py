"""One money format for people: the server's sentences write dollars as the inspector does (graph/assets/format.js),
with at least two decimals and every micro that is not zero, never rounded."""

import pytest

from resolvers.write.sentences import dollars

WRITTEN = [(0, "$0.00"), (20, "$0.00002"), (210, "$0.00021"), (230, "$0.00023"), (600, "$0.0006"),
           (1_500_000, "$1.50"), (1_234_567_891, "$1,234.567891")]


@pytest.mark.parametrize(("micros", "said"), WRITTEN)
def test_a_sentence_says_every_micro(micros, said):
    assert dollars(micros) == said
