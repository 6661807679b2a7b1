"""Randomness drawn in one read for many lines or model calls gives the same lines, hashes and ids as drawing it
line by line: the salts sealed, the chain that verifies, and version 4 UUIDs."""

import copy
import os
from datetime import datetime, timedelta, timezone

from hypothesis import given, strategies as st

from models.record.chain import GENESIS, Line, seal
from models.record.check import check_chain
from models.line_columns import FIGURES as FIGURE_NAMES, INSERTED
from resolvers.write.append import new_step, seal_steps
from resolvers.write.draft import LineDraft

START = datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc)
TASK = "6f1c2a4e-3b5d-4c7e-9f10-2a3b4c5d6e7f"
FIGURES = ("Everyday", None, 1, 210, 800, 60, None, None, None, None)
texts = st.one_of(st.none(), st.text(max_size=40))


class Drawn:
    """os.urandom as a recording: the bytes it gave, in order."""

    def __init__(self) -> None:
        self.given: list[bytes] = []

    def __call__(self, n: int) -> bytes:
        self.given.append(_urandom(n))
        return self.given[-1]


_urandom = os.urandom


def line(seq: int, summary: str | None, payload: str | None) -> Line:
    return Line(seq, "MODEL_CALL", TASK, START + timedelta(seconds=seq), summary, payload, None, None, "", "", "", "",
                *FIGURES)


@given(contents=st.lists(st.tuples(texts, texts), min_size=1, max_size=12))
def test_lines_sealed_in_one_read_match_lines_sealed_one_by_one(contents):
    steps = [new_step(LineDraft("MODEL_CALL", summary, payload, **dict(zip(FIGURE_NAMES, FIGURES))), TASK,
                      START + timedelta(seconds=n))
             for n, (summary, payload) in enumerate(contents)]
    drawn = Drawn()
    os.urandom = drawn
    try:
        rows, length, head = seal_steps("shop", TASK, steps, 0, GENESIS)
    finally:
        os.urandom = _urandom
    [salts] = drawn.given

    prev, alone = GENESIS, []
    for n, step in enumerate(steps):
        one = copy.copy(step.line)
        seal(one, prev, salts[32 * n:32 * n + 32].hex())
        alone.append(one)
        prev = one.hash
    salted = [(row[INSERTED.index("summary_salt")], row[INSERTED.index("payload_salt")], row[INSERTED.index("hash")])
              for row in rows]
    assert salted == [(one.summary_salt, one.payload_salt, one.hash) for one in alone]
    assert (length, head) == (len(steps), alone[-1].hash)
    assert check_chain([step.line for step in steps], length, head).intact


def test_salts_given_seal_as_the_salts_drawn_inside():
    drawn = Drawn()
    os.urandom = drawn
    try:
        inside = seal(line(1, "Everyday answered.", '{"messages":null}'), GENESIS)
    finally:
        os.urandom = _urandom

    given_salts = seal(line(1, "Everyday answered.", '{"messages":null}'), GENESIS, drawn.given[0].hex())

    assert given_salts == inside
