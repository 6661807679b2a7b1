"""A person's token from the organisation's identity provider: signed by one of the provider's keys (RS256, ES256
or EdDSA, the key named by `kid`), from its issuer, for one of agentlog's audiences, and in date. Which claims hold
the tenant, roles and name is configured; such a token never carries kit rights, whatever it claims."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

import jwt

from models import settings
from models.errors import Unauthenticated
from permissions.principal import Principal
from permissions.provider_keys import ALGORITHMS, ProviderKeys

LEEWAY_SECONDS = 60
NOT_VALID = "The token is not valid."


def configured() -> bool:
    return settings.oidc_issuer() is not None


@lru_cache(maxsize=8)
def provider(issuer: str, jwks_url: str | None) -> ProviderKeys:
    return ProviderKeys(issuer, jwks_url)


def current_provider() -> ProviderKeys:
    issuer = settings.oidc_issuer()
    assert issuer is not None
    return provider(issuer, settings.jwks_url())


def claim(claims: Mapping[str, object], path: str) -> object:
    """The claim named `path`, or reached by its dots (`realm_access.roles`); a name that is itself a claim
    (`https://agentlog.example/roles`, as Auth0 namespaces them) is taken whole."""
    if path in claims:
        return claims[path]
    found: object = claims
    for part in path.split("."):
        if not isinstance(found, Mapping) or part not in found:
            return None
        found = found[part]
    return found


def mapped_roles(value: object, role_map: Mapping[str, list[str]]) -> frozenset[str]:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Unauthenticated("The token's roles claim is not valid: a list of strings.")
    return frozenset(role for group in value for role in role_map.get(group, [group]))


def principal_of(claims: Mapping[str, object]) -> Principal:
    """The person the claims name, under the configured claim paths and role map; never a kit."""
    if claims.get("kit") not in (None, False):
        raise Unauthenticated("A provider's token never carries kit rights: kits use agentlog's own tokens.")
    tenant_path, roles_path, name_path = settings.claim_paths()
    tenant, name = claim(claims, tenant_path), claim(claims, name_path)
    if not isinstance(tenant, str) or not tenant:
        raise Unauthenticated(f"The token has no tenant: its {tenant_path!r} claim must be a string.")
    return Principal(
        sub=str(claims["sub"]),
        tenant=tenant,
        name=name if isinstance(name, str) else None,
        roles=mapped_roles(claim(claims, roles_path), settings.role_map()),
        kit=False,
    )


def provider_claims(token: str, header: Mapping[str, object]) -> dict:
    """The token's claims once its signature, issuer, audience and dates hold. Only the provider's own keys are
    tried: the one its `kid` names, or with no `kid`, the set's one key of its algorithm. `jku`, `x5u`, `jwk` and
    `x5c` headers are never followed."""
    algorithm, kid = header.get("alg"), header.get("kid")
    if algorithm not in ALGORITHMS or not isinstance(kid, str | None):
        raise Unauthenticated(NOT_VALID)
    keys = current_provider()
    if kid is not None:
        return decoded(token, keys.key(kid), algorithm, keys.issuer)
    try:
        return decoded(token, keys.sole_key(algorithm), algorithm, keys.issuer)
    except Unsigned:
        return decoded(token, keys.sole_key(algorithm, again=True), algorithm, keys.issuer)


class Unsigned(Unauthenticated):
    """The signature does not hold under the key tried."""


def decoded(token: str, key: jwt.PyJWK | None, algorithm: str, issuer: str) -> dict:
    if key is None or key.algorithm_name != algorithm:
        raise Unsigned(NOT_VALID)
    try:
        return jwt.decode(
            token, key, algorithms=[algorithm], issuer=issuer, audience=list(settings.oidc_audiences()),
            leeway=LEEWAY_SECONDS, options={"require": ["iss", "aud", "exp", "sub"]},
        )
    except jwt.InvalidSignatureError as exc:
        raise Unsigned(NOT_VALID) from exc
    except jwt.ExpiredSignatureError as exc:
        raise Unauthenticated("The token has expired.") from exc
    except jwt.ImmatureSignatureError as exc:
        raise Unauthenticated("The token is not valid yet.") from exc
    except jwt.InvalidTokenError as exc:
        raise Unauthenticated(NOT_VALID) from exc
