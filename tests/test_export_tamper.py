"""One change to a valid export, and the offline verifier names the exact line and the reason."""

import base64
import unicodedata

import orjson
import pytest

from models.record.chain import GENESIS, line_hash, fixed_json
from models.record.export_check import REASONS, check_export, line_of
from models.record.note import new_signer, verifier_from_key
from tests.export_file import ExportFile, as_json, checkpoint_note, header


@pytest.fixture
def export() -> ExportFile:
    return ExportFile()


def verdict(export: ExportFile, key: bool = False, witnessed=()):
    return check_export(export.lines, export.signer.verifier if key else None, witnessed)


def broken(export: ExportFile, key: bool = False) -> tuple:
    found = verdict(export, key)
    assert found.reason in REASONS and not found.intact
    return found.seq, found.reason


def test_the_untouched_export_is_intact_with_and_without_the_key_and_says_which(export):
    without, with_key = verdict(export), verdict(export, key=True)
    assert (without.intact, without.lines, without.erased) == (with_key.intact, with_key.lines, with_key.erased) == (
        True, 12, 2)
    assert (without.signature_checked, with_key.signature_checked) == (False, True)


def test_an_exported_line_reads_back_as_the_line_the_chain_sealed(export):
    for line in export.chain:
        read = line_of(orjson.loads(export.lines[line.seq]))
        assert fixed_json(read) == fixed_json(line)
        assert (read.summary_hash, read.payload_hash, read.prev_hash, read.hash) == (
            line.summary_hash, line.payload_hash, line.prev_hash, line.hash)


def test_a_changed_sentence(export):
    export.change(6, summary="Everyday answered; it cost nothing.")
    assert broken(export) == (6, "SUMMARY_HASH")


def test_changed_content(export):
    export.change(6, payload='{"systemPrompt":"You estimate.","messages":[],"response":"free"}')
    assert broken(export) == (6, "PAYLOAD_HASH")


def test_a_changed_fixed_field(export):
    export.change(6, costMicros=1)
    assert broken(export) == (6, "LINE_HASH")


def test_a_changed_stored_prev_hash(export):
    export.change(6, prevHash="0" * 64)
    assert broken(export) == (6, "LINK")


def test_a_changed_stored_hash(export):
    export.change(6, hash="f" * 64)
    assert broken(export) == (6, "LINE_HASH")


def test_a_changed_hash_of_an_erased_line(export):
    export.change(3, summaryHash="a" * 64)
    assert broken(export) == (3, "LINE_HASH")


def test_the_first_line_deleted(export):
    del export.lines[1]
    assert broken(export) == (1, "SEQUENCE")


def test_a_middle_line_deleted(export):
    del export.lines[6]
    assert broken(export) == (6, "SEQUENCE")


def test_the_last_line_deleted(export):
    del export.lines[12]
    assert broken(export) == (12, "TRUNCATED")


def test_the_last_three_lines_deleted(export):
    del export.lines[10:]
    assert broken(export) == (10, "TRUNCATED")


def test_the_file_emptied(export):
    found = check_export([])
    assert (found.line, found.seq, found.reason) == (1, None, "MALFORMED")


def test_a_forged_correctly_hashed_line_inserted(export):
    forged = export.line(6)
    forged.update(seq=7, summary=None, summarySalt=None, payload=None, payloadSalt=None, prevHash=forged["hash"])
    forged["hash"] = line_hash(forged["prevHash"], fixed_json(line_of(forged)), forged["summaryHash"],
                               forged["payloadHash"])
    export.lines.insert(7, orjson.dumps(forged))
    assert broken(export) == (8, "SEQUENCE")


def test_two_lines_swapped(export):
    export.lines[6], export.lines[7] = export.lines[7], export.lines[6]
    assert broken(export) == (6, "SEQUENCE")


def test_a_line_duplicated(export):
    export.lines.insert(7, export.lines[6])
    assert broken(export) == (7, "SEQUENCE")


def test_a_line_spliced_in_from_another_tree(export):
    export.lines[6] = ExportFile(export.signer).lines[6]
    assert broken(export) == (6, "LINK")


def test_one_trees_whole_chain_presented_as_anothers(export):
    other = ExportFile(export.signer)
    head = orjson.loads(other.lines[0])
    other.lines[0] = header(export.root, 12, head["chainHead"], head["checkpoint"])
    assert broken(other) == (1, "LINK")


def test_words_written_into_an_erased_line(export):
    export.change(3, summary="It asked for SetPrice.")
    assert broken(export) == (3, "ERASED_HAS_WORDS")


def test_a_salt_kept_on_an_erased_line(export):
    export.change(3, summarySalt=export.chain[2].summary_salt or "ab" * 16)
    assert broken(export) == (3, "ERASED_HAS_WORDS")


def test_a_line_erased_with_no_erased_line_after_it(export):
    export.change(10, summary="Erased.", summarySalt=None, erasedAt="2025-03-01T09:31:00.000000Z")
    assert broken(export) == (10, "ERASURE_UNRECEIPTED")


@pytest.mark.parametrize("value", [
    lambda h: h.upper(),
    lambda h: h[:62],
    lambda h: h + "ab",
    lambda h: base64.b64encode(bytes.fromhex(h)).decode(),
], ids=["uppercase", "31 bytes", "33 bytes", "base64"])
def test_a_hash_not_in_lowercase_hex_of_32_bytes(export, value):
    export.change(6, hash=value(export.line(6)["hash"]))
    assert broken(export) == (6, "MALFORMED")


def test_invalid_utf8(export):
    export.lines[6] = export.lines[6].replace("Estimé".encode(), b"Estim\xe9")
    assert broken(export) == (6, "MALFORMED")


def test_a_sentence_in_another_unicode_normal_form(export):
    sentence = export.line(6)["summary"]
    export.change(6, summary=unicodedata.normalize("NFD", sentence))
    assert unicodedata.normalize("NFD", sentence) != sentence
    assert broken(export) == (6, "SUMMARY_HASH")


def resign(export: ExportFile, note: str) -> None:
    head = orjson.loads(export.lines[0])
    export.lines[0] = header(export.root, head["chainLength"], head["chainHead"], note)


def test_a_checkpoint_with_a_bad_signature(export):
    body, signature = export.note.rsplit(" ", 1)
    raw = bytearray(base64.b64decode(signature))
    raw[-1] ^= 1
    resign(export, f"{body} {base64.b64encode(bytes(raw)).decode()}\n")
    found = verdict(export, key=True)
    assert (found.line, found.reason) == (1, "BAD_CHECKPOINT") and "bad signature" in found.problem


def test_a_checkpoint_by_another_key_says_which_signed_it_and_which_was_expected(export):
    other = new_signer("agentlog-test")
    resign(export, checkpoint_note(other, export.root, 12, export.chain[-1].hash))
    found = verdict(export, key=True)
    assert (found.line, found.reason) == (1, "BAD_CHECKPOINT")
    signed, expected = f"agentlog-test+{other.verifier.hash:08x}", f"agentlog-test+{export.signer.verifier.hash:08x}"
    assert f"signed by {signed}" in found.problem and f"the key given is {expected}" in found.problem
    assert "unknown" not in found.problem


def test_a_checkpoint_with_a_wrong_origin(export):
    resign(export, checkpoint_note(export.signer, export.root, 12, export.chain[-1].hash, tenant="other-shop"))
    found = verdict(export, key=True)
    assert (found.line, found.reason) == (1, "BAD_CHECKPOINT") and "agentlog/other-shop/" in found.problem


def test_a_checkpoint_with_a_malformed_body(export):
    from models.record.note import sign

    resign(export, sign(f"agentlog/shop/{export.root}\n12\n", export.signer))
    found = verdict(export, key=True)
    assert (found.line, found.reason) == (1, "BAD_CHECKPOINT") and "malformed" in found.problem


def test_two_checkpoints_of_one_size_with_different_heads_are_a_fork(export):
    other = checkpoint_note(export.signer, export.root, 12, "ab" * 32)
    found = verdict(export, key=True, witnessed=[other])
    assert (found.reason, found.fork) == ("BAD_CHECKPOINT", (export.note, other))


def test_an_older_witnessed_checkpoint_holds_the_chain_at_its_size(export):
    kept = checkpoint_note(export.signer, export.root, 7, export.chain[6].hash)
    assert verdict(export, key=True, witnessed=[kept]).intact
    wrong = checkpoint_note(export.signer, export.root, 7, "cd" * 32)
    assert broken_with(export, [wrong]) == (7, "HEAD_MISMATCH")


def broken_with(export: ExportFile, witnessed) -> tuple:
    found = verdict(export, key=True, witnessed=witnessed)
    return found.seq, found.reason


def test_a_full_rewrite_keeping_every_link_is_found_only_by_the_checkpoint(export):
    from models.record.chain import seal

    head = GENESIS
    for line in export.chain:
        if line.seq == 6:
            line.summary = "Everyday answered; it cost nothing."
        seal(line, head)
        head = line.hash
        export.lines[line.seq] = as_json(line)
    resign(export, export.note)
    export.lines[0] = header(export.root, 12, head, export.note)

    assert verdict(export).intact
    assert broken(export, key=True) == (12, "HEAD_MISMATCH")


def test_a_cut_tail_with_its_header_mended_is_found_only_by_the_checkpoint(export):
    del export.lines[11:]
    export.lines[0] = header(export.root, 10, export.chain[9].hash, export.note)

    assert verdict(export).intact
    assert broken(export, key=True) == (11, "TRUNCATED")


def test_a_published_verifier_key_string_is_what_the_checker_takes(export):
    assert check_export(export.lines, verifier_from_key(export.signer.verifier.key)).intact
