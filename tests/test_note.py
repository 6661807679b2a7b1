"""Signed notes as the published C2SP examples sign them: same key id, same signature line, same verifier key."""

import pytest

from models.record.note import (
    Checkpoint,
    NoteError,
    new_signer,
    open_note,
    parse_checkpoint,
    sign,
    signer_from_key,
    verifier_from_key,
)

PRIVATE = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
VERIFIER = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
ENOCH = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop"
TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
PETER_SIG = ("— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6Ry"
             "yBwJnAM=\n")
ENOCH_SIG = ("— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+"
             "QQ=\n")


def test_the_published_private_key_gives_the_published_key_id_and_verifier_key():
    signer = signer_from_key(PRIVATE)

    assert (signer.name, f"{signer.verifier.hash:08x}") == ("PeterNeumann", "c74f20a3")
    assert signer.verifier.key == VERIFIER
    assert signer.key == PRIVATE


def test_signing_the_published_text_gives_the_published_signature_line():
    assert sign(TEXT, signer_from_key(PRIVATE)) == TEXT + "\n" + PETER_SIG


def test_a_published_note_opens_with_its_key_and_ignores_a_second_signer():
    assert open_note(TEXT + "\n" + PETER_SIG + ENOCH_SIG, verifier_from_key(VERIFIER)) == TEXT
    assert open_note(TEXT + "\n" + PETER_SIG + ENOCH_SIG, verifier_from_key(ENOCH)) == TEXT


def test_a_key_of_our_own_round_trips_through_its_strings():
    signer = new_signer("agentlog")
    note = sign("agentlog/shop/x\n3\n" + "A" * 43 + "=\n", signer)

    assert signer_from_key(signer.key) == signer
    assert open_note(note, verifier_from_key(signer.verifier.key)).startswith("agentlog/shop/x\n")


@pytest.mark.parametrize("key", [
    VERIFIER[:-1],
    VERIFIER.replace("c74f20a3", "c74f20a4"),
    VERIFIER.replace("PeterNeumann", "PeterNeuman"),
    "PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==",
    "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
    "Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
])
def test_a_mangled_verifier_key_is_refused(key):
    with pytest.raises(NoteError):
        verifier_from_key(key)


def test_a_changed_text_a_changed_signature_and_a_stranger_are_told_apart():
    peter = verifier_from_key(VERIFIER)
    with pytest.raises(NoteError) as changed:
        open_note(TEXT.replace("answer", "question") + "\n" + PETER_SIG, peter)
    with pytest.raises(NoteError) as stranger:
        open_note(TEXT + "\n" + ENOCH_SIG, peter)
    with pytest.raises(NoteError) as unsigned:
        open_note(TEXT, peter)

    assert changed.value.reason == NoteError.BAD_SIGNATURE
    assert stranger.value.reason == NoteError.OTHER_KEY and "EnochRoot+af0cfe78" in stranger.value.message
    assert unsigned.value.reason == NoteError.MALFORMED


def test_a_checkpoint_body_round_trips_and_a_malformed_one_is_refused():
    point = Checkpoint("agentlog/shop/1b4e28ba-2fa1-11d2-883f-0016d3cca427", 12, "ab" * 32)

    assert parse_checkpoint(point.body) == point
    for bad in (point.body[:-1], point.body + "extra\n", point.body.replace("\n12\n", "\n012\n"),
                point.body.replace("\n12\n", "\n-1\n"), "agentlog/shop/x\n12\nq83v\n"):
        with pytest.raises(NoteError):
            parse_checkpoint(bad)
