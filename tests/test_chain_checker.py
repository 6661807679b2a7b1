"""The pure checker finds each tamper at its line, with no database in the way."""

import copy
from datetime import datetime, timedelta, timezone

from models.record.chain import ERASED_SENTENCE, GENESIS, Line, commit, seal
from models.record.check import check_chain

START = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)


def chain(n: int = 6) -> list[Line]:
    lines, prev = [], GENESIS
    for seq in range(1, n + 1):
        line = Line(seq=seq, kind="TOOL_CALL", task="6f1c2a4e-3b5d-4c7e-9f10-2a3b4c5d6e7f", at=START + timedelta(seconds=seq),
                    summary=f"Step {seq}.", payload=f'{{"step":{seq}}}', summary_salt=None, payload_salt=None,
                    summary_hash="", payload_hash="", prev_hash="", hash="", tool="PartsFor")
        lines.append(seal(line, prev))
        prev = line.hash
    return lines


def check(lines: list[Line], length: int | None = None, head: str | None = None):
    original_length = length if length is not None else len(lines)
    return check_chain(lines, original_length, head if head is not None else lines[-1].hash)


def test_an_untouched_chain_is_intact():
    assert check(chain()).intact


def test_a_rewritten_sentence_is_found_at_its_line():
    lines = chain()
    lines[3].summary = "PartsFor was never asked for."

    result = check(lines)

    assert (result.intact, result.broken_at) == (False, 4)


def test_a_changed_cost_is_found_at_its_line():
    lines = chain()
    lines[2].cost_micros = 1

    assert check(lines).broken_at == 3


def test_a_removed_last_line_is_found_by_the_head():
    lines = chain()
    head = lines[-1].hash

    result = check_chain(lines[:-1], 6, head)

    assert (result.intact, result.broken_at) == (False, 6)


def test_a_removed_middle_line_is_found_where_it_was():
    lines = chain()
    del lines[2]

    assert check(lines, 6, lines[-1].hash).broken_at == 3


def test_a_line_slipped_in_is_found_at_its_place():
    lines = chain()
    forged = copy.copy(lines[2])
    forged.summary = "A step that never happened."
    forged.summary_hash = commit(forged.summary_salt, forged.summary)
    shifted = lines[:2] + [forged] + lines[2:]
    for seq, line in enumerate(shifted, start=1):
        line.seq = seq

    assert check(shifted, 7, shifted[-1].hash).broken_at == 3


def test_two_swapped_lines_are_found_at_the_first():
    lines = chain()
    lines[3], lines[4] = lines[4], lines[3]
    lines[3].seq, lines[4].seq = 4, 5

    assert check(lines).broken_at == 4


def test_an_erased_line_with_something_written_in_its_place_is_refused():
    lines = chain()
    erase(lines[3])
    lines.append(erasure_line(lines[-1].hash, 7))
    lines[3].summary = "Mia asked about her own bike."

    result = check(lines)

    assert result.broken_at == 4
    assert result.problem == "Line 4 was erased, and something was written in its place."


def test_erased_lines_still_verify_when_an_erasure_follows():
    lines = chain()
    erase(lines[1])
    erase(lines[3])
    lines.append(erasure_line(lines[-1].hash, 7))

    result = check(lines)

    assert result.intact and result.erased == 2


def test_a_line_marked_erased_with_no_erasure_after_it_is_refused():
    lines = chain()
    erase(lines[4])

    result = check(lines)

    assert result.broken_at == 5


def test_content_left_behind_a_content_erasure_is_refused():
    lines = chain()
    lines[2].content_erased = True
    lines[2].payload_salt = None
    lines.append(erasure_line(lines[-1].hash, 7))

    result = check(lines)

    assert result.broken_at == 3 and "content" in result.problem


def test_a_real_sentence_that_reads_erased_is_an_ordinary_line():
    lines = chain()
    lines[2].summary = ERASED_SENTENCE
    lines[2].summary_hash = commit(lines[2].summary_salt, ERASED_SENTENCE)

    assert check(lines).broken_at == 3
    honest = chain(3)
    honest[2].summary = ERASED_SENTENCE
    resealed = seal(honest[2], honest[1].hash)
    assert check([honest[0], honest[1], resealed]).intact


def erase(line: Line) -> None:
    line.summary, line.summary_salt, line.erased = ERASED_SENTENCE, None, True
    line.payload, line.payload_salt, line.content_erased = None, None, True


def erasure_line(prev: str, seq: int) -> Line:
    line = Line(seq=seq, kind="ERASED", task="6f1c2a4e-3b5d-4c7e-9f10-2a3b4c5d6e7f", at=START + timedelta(minutes=5),
                summary="Content erased.", payload=None, summary_salt=None, payload_salt=None,
                summary_hash="", payload_hash="", prev_hash="", hash="")
    return seal(line, prev)


def test_the_reasons_are_the_contracts_closed_set():
    from models.record.vocabulary import VerifyReason

    assert [reason.value for reason in VerifyReason] == (
        "SEQUENCE LINK LINE_HASH SUMMARY_HASH PAYLOAD_HASH ERASED_HAS_WORDS ERASURE_UNRECEIPTED TRUNCATED "
        "HEAD_MISMATCH BAD_CHECKPOINT MALFORMED").split()


def test_an_erasure_before_a_later_fault_is_reported_first_unless_an_erased_line_receipts_it():
    lines = chain()
    lines[1].erased, lines[1].summary, lines[1].summary_salt = True, ERASED_SENTENCE, None
    lines[4].cost_micros = 1

    found = check(lines)

    assert (found.broken_at, found.reason) == (2, "ERASURE_UNRECEIPTED")

    lines[5].kind = "ERASED"

    assert ((found := check(lines)).broken_at, found.reason) == (5, "LINE_HASH")
