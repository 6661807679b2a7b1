"""Trusted documents (persisted queries): AGENTLOG_TRUSTED_DOCUMENTS is a JSON file from the sha256 hex of a GraphQL
document to the document. A request may send the hash alone, in `extensions.persistedQuery.sha256Hash` (the Apollo
and Relay convention); with AGENTLOG_ONLY_TRUSTED_DOCUMENTS, only those documents run for callers other than the kit."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from models.documents import read_documents, sha256_hex
from models.errors import AgentlogError, Forbidden
from permissions.principal import Principal


class PersistedQueryNotFound(AgentlogError):
    code = "PERSISTED_QUERY_NOT_FOUND"


@lru_cache(maxsize=4)
def _documents(path: str, modified: float) -> dict[str, str]:
    return read_documents(path)


def documents(path: str | None) -> dict[str, str]:
    """The documents of the file at `path` (AGENTLOG_TRUSTED_DOCUMENTS), read again only when it changes."""
    return _documents(path, os.stat(path).st_mtime) if path else {}


def persisted_hash(extensions: dict[str, Any] | None) -> str | None:
    persisted = (extensions or {}).get("persistedQuery")
    digest = persisted.get("sha256Hash") if isinstance(persisted, dict) else None
    return digest if isinstance(digest, str) else None


def document_to_run(
    query: str | None, extensions: dict[str, Any] | None, caller: Principal | None, path: str | None, only: bool
) -> str | None:
    """The document a request runs: its own, or the trusted one its hash names. Refused when the hash names none,
    when the hash is not its own document's, or, while only trusted documents run, when an untrusted document
    comes from anyone but the kit. `path` names the trusted documents' file, `only` says only they run."""
    digest = persisted_hash(extensions)
    if digest is not None:
        trusted = documents(path).get(digest)
        if query is None and trusted is None:
            raise PersistedQueryNotFound(
                "PersistedQueryNotFound: no trusted document has this sha256Hash; send the document itself."
            )
        if query is not None and sha256_hex(query) != digest:
            raise PersistedQueryNotFound("PersistedQueryNotFound: the sha256Hash is not the hash of the document sent.")
        query = query if query is not None else trusted
    if only and not (caller is not None and caller.kit):
        if query is None or sha256_hex(query) not in documents(path):
            raise Forbidden("Only trusted documents run here: send the sha256Hash of one of the server's documents.")
    return query
