"""C2SP signed notes with Ed25519, and the checkpoint a note carries: plain functions over plain values.

A note is a text ending in a newline, a blank line, and signature lines `— <name> <base64(key hash || signature)>`.
A verifier key is `<name>+<key hash, 8 hex>+<base64(0x01 || public key)>`; a private key is the same with
`PRIVATE+KEY+` in front and the 32-byte seed in place of the public key. Parsing is strict: anything else is
a `NoteError`, never a guess.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
from dataclasses import dataclass, field
from functools import cached_property

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ED25519 = 1
SIGNATURE_PREFIX = "— "
_NAME = re.compile(r"[^\s+]+")
_SIZE = re.compile(r"0|[1-9][0-9]{0,18}")


class NoteError(Exception):
    """A note, key or checkpoint that cannot be accepted; `reason` says which way it failed."""

    MALFORMED = "malformed"
    OTHER_KEY = "signed by another key"
    BAD_SIGNATURE = "bad signature"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def key_hash(name: str, key: bytes) -> int:
    return int.from_bytes(hashlib.sha256(name.encode("utf-8") + b"\n" + key).digest()[:4], "big")


def _b64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise NoteError(NoteError.MALFORMED, f"{text!r} is not base64.") from exc


def _valid_name(name: str) -> bool:
    return _NAME.fullmatch(name) is not None


@dataclass(frozen=True)
class Verifier:
    name: str
    hash: int
    public_key: Ed25519PublicKey

    @property
    def key(self) -> str:
        raw = self.public_key.public_bytes(Encoding.Raw, PublicFormat.Raw)
        return f"{self.name}+{self.hash:08x}+{base64.b64encode(bytes([ED25519]) + raw).decode()}"

    def verify(self, text: bytes, signature: bytes) -> bool:
        try:
            self.public_key.verify(signature, text)
        except InvalidSignature:
            return False
        return True


@dataclass(frozen=True)
class Signer:
    name: str
    seed: bytes = field(repr=False)

    @cached_property
    def private_key(self) -> Ed25519PrivateKey:
        return Ed25519PrivateKey.from_private_bytes(self.seed)

    @cached_property
    def verifier(self) -> Verifier:
        public = self.private_key.public_key()
        raw = public.public_bytes(Encoding.Raw, PublicFormat.Raw)
        return Verifier(self.name, key_hash(self.name, bytes([ED25519]) + raw), public)

    @property
    def key(self) -> str:
        """The C2SP private key string."""
        h = self.verifier.hash
        return f"PRIVATE+KEY+{self.name}+{h:08x}+{base64.b64encode(bytes([ED25519]) + self.seed).decode()}"


def signer_from_seed(name: str, seed: bytes) -> Signer:
    if not _valid_name(name):
        raise NoteError(NoteError.MALFORMED, f"{name!r} is not a key name: no spaces or '+'.")
    if len(seed) != 32:
        raise NoteError(NoteError.MALFORMED, "An Ed25519 seed is 32 bytes.")
    return Signer(name, seed)


def new_signer(name: str) -> Signer:
    return signer_from_seed(name, os.urandom(32))


def _hash_of(text: str) -> int:
    if not re.fullmatch(r"[0-9a-f]{8}", text):
        raise NoteError(NoteError.MALFORMED, f"{text!r} is not a key hash (8 lowercase hex digits).")
    return int(text, 16)


def signer_from_key(skey: str) -> Signer:
    parts = skey.split("+", 4)
    if len(parts) != 5 or parts[:2] != ["PRIVATE", "KEY"]:
        raise NoteError(NoteError.MALFORMED, "A private key reads PRIVATE+KEY+<name>+<hash>+<key>.")
    name, hash_, key = parts[2], _hash_of(parts[3]), _b64(parts[4])
    if len(key) != 33 or key[0] != ED25519:
        raise NoteError(NoteError.MALFORMED, "The private key is not an Ed25519 seed.")
    signer = signer_from_seed(name, key[1:])
    if signer.verifier.hash != hash_:
        raise NoteError(NoteError.MALFORMED, "The private key's hash does not match its name and key.")
    return signer


def verifier_from_key(vkey: str) -> Verifier:
    parts = vkey.split("+", 2)
    if len(parts) != 3 or not _valid_name(parts[0]):
        raise NoteError(NoteError.MALFORMED, "A verifier key reads <name>+<hash>+<key>.")
    name, hash_, key = parts[0], _hash_of(parts[1]), _b64(parts[2])
    if key_hash(name, key) != hash_:
        raise NoteError(NoteError.MALFORMED, "The verifier key's hash does not match its name and key.")
    if len(key) != 33 or key[0] != ED25519:
        raise NoteError(NoteError.MALFORMED, "The verifier key is not an Ed25519 public key.")
    return Verifier(name, hash_, Ed25519PublicKey.from_public_bytes(key[1:]))


def signature_line(signer: Signer, text: str) -> str:
    signature = signer.private_key.sign(text.encode("utf-8"))
    blob = signer.verifier.hash.to_bytes(4, "big") + signature
    return f"{SIGNATURE_PREFIX}{signer.name} {base64.b64encode(blob).decode()}\n"


def sign(text: str, signer: Signer) -> str:
    if not text.endswith("\n") or not _clean(text):
        raise NoteError(NoteError.MALFORMED, "A note's text ends in a newline and holds no other control characters.")
    return f"{text}\n{signature_line(signer, text)}"


def _clean(text: str) -> bool:
    return not any(ord(c) < 0x20 and c != "\n" for c in text)


def open_note(note: str, verifier: Verifier) -> str:
    """The note's text when `verifier` signed it; a NoteError otherwise."""
    if not note.endswith("\n") or not _clean(note):
        raise NoteError(NoteError.MALFORMED, "A note ends in a newline and holds no other control characters.")
    split = note.rfind("\n\n")
    if split < 0:
        raise NoteError(NoteError.MALFORMED, "A note has a blank line before its signatures.")
    text, signatures = note[: split + 1], note[split + 2:]
    if not signatures:
        raise NoteError(NoteError.MALFORMED, "The note carries no signature.")
    ours, others = False, []
    for line in signatures[:-1].split("\n"):
        if not line.startswith(SIGNATURE_PREFIX):
            raise NoteError(NoteError.MALFORMED, f"{line!r} is not a signature line.")
        name, _, b64 = line[len(SIGNATURE_PREFIX):].partition(" ")
        blob = _b64(b64)
        if not _valid_name(name) or len(blob) < 5:
            raise NoteError(NoteError.MALFORMED, f"{line!r} is not a signature line.")
        if name != verifier.name or int.from_bytes(blob[:4], "big") != verifier.hash:
            others.append(f"{name}+{int.from_bytes(blob[:4], 'big'):08x}")
            continue
        if not verifier.verify(text.encode("utf-8"), blob[4:]):
            raise NoteError(NoteError.BAD_SIGNATURE, f"The signature by {name} does not match the note.")
        ours = True
    if not ours:
        raise NoteError(NoteError.OTHER_KEY, f"It is signed by {' and '.join(others)}, and the key given is "
                        f"{verifier.name}+{verifier.hash:08x}: check that the key is this server's (its "
                        f"checkpointKey query, or `agentlog key` where it runs).")
    return text


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    head: str

    @property
    def body(self) -> str:
        return f"{self.origin}\n{self.size}\n{base64.b64encode(bytes.fromhex(self.head)).decode()}\n"


def origin_of(tenant: str, root: str) -> str:
    return f"agentlog/{tenant}/{root}"


def parse_checkpoint(body: str) -> Checkpoint:
    """A checkpoint body, exactly three lines: origin, decimal size, base64 of the 32-byte head."""
    lines = body.split("\n")
    if len(lines) != 4 or lines[3] != "" or not lines[0]:
        raise NoteError(NoteError.MALFORMED, "A checkpoint is three lines: origin, size, head.")
    if not _SIZE.fullmatch(lines[1]):
        raise NoteError(NoteError.MALFORMED, f"{lines[1]!r} is not a size.")
    head = _b64(lines[2])
    if len(head) != 32:
        raise NoteError(NoteError.MALFORMED, "A checkpoint's head is 32 bytes.")
    return Checkpoint(lines[0], int(lines[1]), head.hex())
