"""The server's signing key: from AGENTLOG_SIGNING_KEY, or made on first start and kept beside the working files.

The file holds a C2SP private key (`PRIVATE+KEY+<name>+<hash>+<key>`), or a 32-byte Ed25519 seed (raw, or as
64 hex digits), which signs under the name `agentlog`.
"""

from __future__ import annotations

import os
import re
import tempfile
from functools import lru_cache
from pathlib import Path

from models import settings
from models.record.note import NoteError, Signer, new_signer, signer_from_key, signer_from_seed

DEFAULT_NAME = "agentlog"
DEFAULT_FILE = "agentlog-signing.key"


class SigningKeyError(Exception):
    """The key file named by AGENTLOG_SIGNING_KEY cannot be read as a key."""


def read_key(data: bytes, where: Path) -> Signer:
    text = data.decode("ascii", errors="replace").strip()
    try:
        if text.startswith("PRIVATE+KEY+"):
            return signer_from_key(text)
        if re.fullmatch(r"[0-9a-fA-F]{64}", text):
            return signer_from_seed(DEFAULT_NAME, bytes.fromhex(text))
        if len(data) == 32:
            return signer_from_seed(DEFAULT_NAME, data)
    except NoteError as exc:
        raise SigningKeyError(f"AGENTLOG_SIGNING_KEY: {where} does not hold a usable key: {exc.message}") from exc
    raise SigningKeyError(
        f"AGENTLOG_SIGNING_KEY: {where} holds neither a C2SP private key nor a 32-byte Ed25519 seed."
    )


def keep_new_key(path: Path) -> None:
    """Writes a new key to `path` unless a key is there already; two processes starting at once keep one key."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".agentlog-key-")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(new_signer(DEFAULT_NAME).key + "\n")
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
    finally:
        os.unlink(temporary)


@lru_cache(maxsize=4)
def _signer_named(named: str) -> Signer:
    path = Path(named) if named else Path(DEFAULT_FILE).resolve()
    if not path.exists():
        if named:
            raise SigningKeyError(f"AGENTLOG_SIGNING_KEY: there is no file {path}.")
        keep_new_key(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SigningKeyError(f"AGENTLOG_SIGNING_KEY: {path} cannot be read: {exc.strerror}.") from exc
    return read_key(data, path)


def signer() -> Signer:
    """The key named by AGENTLOG_SIGNING_KEY, or the one kept in the working directory (made when missing)."""
    return _signer_named(signing_key_file())


def signing_key_file() -> str:
    """The file AGENTLOG_SIGNING_KEY names, or "" for the one kept in the working directory."""
    return (settings.current().signing_key or "").strip()


def verifier_key() -> str:
    return signer().verifier.key
