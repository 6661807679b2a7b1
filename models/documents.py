"""The trusted documents' file (AGENTLOG_TRUSTED_DOCUMENTS) read strictly: a JSON object from the sha256 hex of a
GraphQL document to the document, every key its own document's hash."""

from __future__ import annotations

import hashlib
import json


class DocumentsUnreadable(ValueError):
    pass


def sha256_hex(document: str) -> str:
    return hashlib.sha256(document.encode()).hexdigest()


def read_documents(path: str) -> dict[str, str]:
    """The file's documents; every key must be the sha256 hex of its document, so a hash names one text only."""
    try:
        with open(path, encoding="utf-8") as file:
            found = json.load(file)
    except (OSError, ValueError) as exc:
        raise DocumentsUnreadable(f"a readable JSON file ({exc})") from exc
    if not isinstance(found, dict) or not all(isinstance(v, str) for v in found.values()):
        raise DocumentsUnreadable("a JSON object from sha256 hex to a GraphQL document")
    for digest, document in found.items():
        if digest != sha256_hex(document):
            raise DocumentsUnreadable(f"a file whose keys are their documents' sha256 hex, unlike {digest!r}")
    return found
