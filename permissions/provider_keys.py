"""An identity provider's signing keys: found through its discovery document (or a key-set URL given directly),
kept by `kid`, and fetched again when a token names a `kid` not held (or, naming none, fails the set's one key) — at most once every REFRESH_EVERY seconds,
so a stream of made-up `kid`s costs the provider one request per interval, never one per token."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import urllib.request
from dataclasses import dataclass, field

import jwt

log = logging.getLogger("agentlog.identity")

ALGORITHMS = frozenset({"RS256", "ES256", "EdDSA"})
REFRESH_EVERY = 5.0
KEEP_FOR = 3600.0
FETCH_TIMEOUT = 5.0


class KeysUnavailable(Exception):
    pass


def fetch_json(url: str) -> dict:
    try:
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT) as answer:
            found = json.load(answer)
    except (OSError, ValueError) as exc:
        raise KeysUnavailable(f"{url}: {exc}") from exc
    if not isinstance(found, dict):
        raise KeysUnavailable(f"{url}: not a JSON object")
    return found


def discovered_jwks_url(issuer: str) -> str:
    """The key set's URL from the issuer's discovery document, whose `issuer` must be the issuer itself."""
    document = fetch_json(issuer.rstrip("/") + "/.well-known/openid-configuration")
    if document.get("issuer") != issuer:
        raise KeysUnavailable(f"the discovery document names issuer {document.get('issuer')!r}, not {issuer!r}")
    url = document.get("jwks_uri")
    if not isinstance(url, str):
        raise KeysUnavailable(f"{issuer}'s discovery document has no jwks_uri")
    return url


def usable_keys(jwks: dict) -> dict[str, jwt.PyJWK]:
    """The set's signing keys with a kid and an algorithm accepted here; the others are left out."""
    keys: dict[str, jwt.PyJWK] = {}
    for entry in jwks.get("keys") or []:
        if not isinstance(entry, dict) or not entry.get("kid") or entry.get("use", "sig") != "sig":
            continue
        try:
            key = jwt.PyJWK(entry)
        except jwt.PyJWTError:
            continue
        if key.algorithm_name in ALGORITHMS:
            keys[entry["kid"]] = key
    return keys


@dataclass
class ProviderKeys:
    issuer: str
    jwks_url: str | None = None
    keys: dict[str, jwt.PyJWK] = field(default_factory=dict)
    fetched_at: float = float("-inf")
    generation: int = 0

    def key(self, kid: str) -> jwt.PyJWK | None:
        """The key of this kid; an unknown kid, or keys held too long, fetch the set again if the interval allows."""
        if self.wanted(kid):
            self.refresh()
        return self.keys.get(kid)

    def sole_key(self, algorithm: str, again: bool = False) -> jwt.PyJWK | None:
        """For a token that names no kid: the set's one key of its algorithm, if it has exactly one. `again` (its
        signature did not hold) fetches the set anew if the interval allows, as an unknown kid does."""
        if self.wanted(None, again):
            self.refresh()
        found = [key for key in self.keys.values() if key.algorithm_name == algorithm]
        return found[0] if len(found) == 1 else None

    def wanted(self, kid: str | None, again: bool = False) -> bool:
        """Whether reading a token with this kid would fetch the set now."""
        missing = again or (kid not in self.keys if kid is not None else not self.keys)
        now = time.monotonic()
        return (missing or now - self.fetched_at > KEEP_FOR) and now - self.fetched_at >= REFRESH_EVERY

    def refresh(self) -> None:
        self.fetched_at = time.monotonic()
        self.fetch()

    async def refresh_aside(self) -> None:
        """The same fetch in a worker thread, so that the event loop serves others while the provider answers."""
        self.fetched_at = time.monotonic()
        await asyncio.to_thread(self.fetch)

    def fetch(self) -> None:
        try:
            url = self.jwks_url or discovered_jwks_url(self.issuer)
            self.keys = usable_keys(fetch_json(url))
            self.generation += 1
        except KeysUnavailable as exc:
            log.warning("the identity provider's keys could not be fetched: %s", exc)
