"""Bearer tokens: HS256 JWTs carrying sub, name, tenant, roles, kit and exp."""

from __future__ import annotations

import os
import time
from datetime import datetime, timedelta, timezone
from functools import lru_cache

import jwt

from permissions.principal import Principal
from models import AgentTask, ErasureRecord
from models.errors import Unauthenticated

DEV_SECRET = "agentlog-local-development-secret-change-me"
CLAIM_CHARS = {
    "sub": ErasureRecord._meta.fields_map["by_id"].max_length,
    "tenant": AgentTask._meta.fields_map["tenant"].max_length,
    "name": ErasureRecord._meta.fields_map["by_name"].max_length,
}


def secret() -> str:
    return os.environ.get("AGENTLOG_JWT_SECRET", DEV_SECRET)


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
    return jwt.encode(claims, key or secret(), algorithm="HS256")


def read_token(token: str, key: str | None = None) -> Principal:
    principal, expires = _verified(token, key or secret())
    if expires <= time.time():
        raise Unauthenticated("The token has expired.")
    return principal


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
    for claim, most in CLAIM_CHARS.items():
        value = claims.get(claim)
        if value is not None and (not isinstance(value, str) or len(value) > most or "\x00" in value):
            raise Unauthenticated(f"The token's {claim} claim is not valid: a string of at most {most} characters.")
    principal = Principal(
        sub=claims["sub"],
        tenant=tenant,
        name=claims.get("name"),
        roles=frozenset(str(r) for r in roles),
        kit=claims.get("kit") is True,
    )
    return principal, float(claims["exp"])


def principal_from_header(authorization: str | None) -> Principal | None:
    """None when no token was sent; Unauthenticated when one was sent and is bad."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("The Authorization header must be 'Bearer <token>'.")
    return read_token(token.strip())
