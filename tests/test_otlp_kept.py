"""The copy of waiting spans one process keeps beside the database: bounded, oldest trace first out, none at 0."""

from resolvers.otlp.kept import FOOTPRINT, KeptSpans
from resolvers.otlp.mapping import Mapped


def spans(trace: str, count: int, size: int = 80_000) -> list[tuple[Mapped, int]]:
    return [(Mapped(trace_id=trace, span_id=f"{trace}-{n}", parent_span_id=None, kind="llm"), size)
            for n in range(count)]


def test_past_the_limit_the_trace_kept_longest_ago_goes_first(configure):
    configure(otlp_kept_mb=1)
    kept = KeptSpans()

    kept.keep("shop", "a", spans("a", 2))
    kept.keep("shop", "b", spans("b", 2))
    kept.keep("shop", "a", spans("a", 3)[2:])
    kept.keep("shop", "c", spans("c", 1))

    assert kept.of("shop", "b", ["b-0", "b-1"]) == {} and len(kept) == 4
    assert kept.bytes == 4 * FOOTPRINT * 80_000 <= 1_000_000
    assert sorted(kept.of("shop", "a", ["a-0", "a-1", "a-2", "a-3"])) == ["a-0", "a-1", "a-2"]
    assert list(kept.of("shop", "c", ["c-0"])) == ["c-0"]
    assert kept.of("other", "a", ["a-0"]) == {}


def test_placed_spans_are_dropped_and_zero_keeps_none(configure):
    kept = KeptSpans()
    kept.keep("shop", "a", spans("a", 3, size=10))

    kept.drop("shop", "a", ["a-0", "a-2", "never-kept"])
    assert list(kept.of("shop", "a", ["a-0", "a-1", "a-2"])) == ["a-1"] and kept.bytes == FOOTPRINT * 10

    configure(otlp_kept_mb=0)
    kept.keep("shop", "b", spans("b", 1))
    assert len(kept) == 0 and kept.bytes == 0 and kept.of("shop", "a", ["a-1"]) == {}
