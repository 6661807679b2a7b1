"""Bearer tokens. HS256 JWTs carrying sub, name, tenant, roles, kit and exp are agentlog's own (kits and the
command line), signed with AGENTLOG_JWT_SECRET, or with a fixed development key while neither that secret nor an
identity provider is set. RS256, ES256 and EdDSA tokens are people's, from the provider (`permissions/oidc.py`).
Any other algorithm, `none` included, is refused."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from functools import lru_cache

import jwt

from models import AgentTask, ErasureRecord, settings
from models.errors import Unauthenticated
from permissions import oidc
from permissions.principal import Principal
from permissions.provider_keys import ALGORITHMS

DEV_SECRET = "agentlog-local-development-secret-change-me"
CLAIM_CHARS = {
    "sub": ErasureRecord._meta.fields_map["by_id"].max_length,
    "tenant": AgentTask._meta.fields_map["tenant"].max_length,
    "name": ErasureRecord._meta.fields_map["by_name"].max_length,
}


class NoSecret(Exception):
    """agentlog's own tokens cannot be made: an identity provider is set and AGENTLOG_JWT_SECRET is not."""


def secret() -> str | None:
    """The key of agentlog's own tokens; None when a provider is set without AGENTLOG_JWT_SECRET, so that no
    token signed with the development key is ever accepted beside a provider."""
    return settings.jwt_secret() or (None if oidc.configured() else DEV_SECRET)


def issue_token(
    sub: str,
    tenant: str,
    roles: list[str] | None = None,
    name: str | None = None,
    kit: bool = False,
    ttl: timedelta = timedelta(hours=12),
    key: str | None = None,
) -> str:
    claims = {
        "sub": sub,
        "tenant": tenant,
        "roles": list(roles or []),
        "kit": kit,
        "exp": datetime.now(timezone.utc) + ttl,
    }
    if name:
        claims["name"] = name
    key = key or secret()
    if key is None:
        raise NoSecret("An identity provider is set, so tokens of agentlog's own need AGENTLOG_JWT_SECRET.")
    return jwt.encode(claims, key, algorithm="HS256")


@lru_cache(maxsize=4096)
def _algorithm(token: str) -> str | None:
    """The `alg` of a token's header, decoded once per token string (a token is sent again on every request)."""
    try:
        return jwt.get_unverified_header(token).get("alg")
    except jwt.InvalidTokenError as exc:
        raise Unauthenticated(oidc.NOT_VALID) from exc


def read_token(token: str, key: str | None = None) -> Principal:
    algorithm = _algorithm(token)
    if algorithm in ALGORITHMS and oidc.configured():
        person = oidc.principal_of(_provider_verified(token))
        within_limits({"sub": person.sub, "tenant": person.tenant, "name": person.name})
        return person
    key = key or secret()
    if algorithm != "HS256" or key is None:
        raise Unauthenticated(oidc.NOT_VALID)
    principal, expires = _verified(token, key)
    if expires <= time.time():
        raise Unauthenticated("The token has expired.")
    return principal


def _provider_verified(token: str) -> dict:
    """A provider token's claims, its signature checked once per token and key set; its dates on every use."""
    keys = oidc.current_provider()
    claims = _provider_claims(token, keys.generation, keys.issuer, settings.oidc_audiences())
    now = time.time()
    if float(claims["exp"]) + oidc.LEEWAY_SECONDS <= now:
        raise Unauthenticated("The token has expired.")
    return claims


@lru_cache(maxsize=4096)
def _provider_claims(token: str, generation: int, issuer: str, audiences: tuple[str, ...]) -> dict:
    return oidc.provider_claims(token, jwt.get_unverified_header(token))


def within_limits(claims: dict) -> None:
    for claim, most in CLAIM_CHARS.items():
        value = claims.get(claim)
        if value is not None and (not isinstance(value, str) or len(value) > most or "\x00" in value):
            raise Unauthenticated(f"The token's {claim} claim is not valid: a string of at most {most} characters.")


@lru_cache(maxsize=4096)
def _verified(token: str, key: str) -> tuple[Principal, float]:
    """A token's principal and expiry, checked once per token string; expiry is checked again on every use."""
    try:
        claims = jwt.decode(token, key, algorithms=["HS256"], options={"require": ["sub", "tenant", "exp"]})
    except jwt.ExpiredSignatureError as exc:
        raise Unauthenticated("The token has expired.") from exc
    except jwt.InvalidTokenError as exc:
        raise Unauthenticated("The token is not valid.") from exc
    roles = claims.get("roles") or []
    tenant = claims.get("tenant")
    if not isinstance(tenant, str) or not tenant or not isinstance(roles, list):
        raise Unauthenticated("The token's tenant or roles are not valid.")
    within_limits(claims)
    principal = Principal(
        sub=claims["sub"],
        tenant=tenant,
        name=claims.get("name"),
        roles=frozenset(str(r) for r in roles),
        kit=claims.get("kit") is True,
    )
    return principal, float(claims["exp"])


async def keys_ready(authorization: str | None) -> None:
    """Before a provider token is read: fetches the provider's keys off the event loop if reading it would."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not oidc.configured():
        return
    try:
        header = jwt.get_unverified_header(token.strip())
    except jwt.InvalidTokenError:
        return
    keys = oidc.current_provider()
    kid = header.get("kid")
    if header.get("alg") in ALGORITHMS and isinstance(kid, str | None) and keys.wanted(kid):
        await keys.refresh_aside()


def principal_from_header(authorization: str | None) -> Principal | None:
    """None when no token was sent; Unauthenticated when one was sent and is bad."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("The Authorization header must be 'Bearer <token>'.")
    return read_token(token.strip())
