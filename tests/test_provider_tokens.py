"""People's tokens from the workshop's identity provider: accepted when the provider signed them for agentlog and
in date, with the tenant, roles and name read from the configured claims; every classic forgery refused
UNAUTHENTICATED, reading nothing and writing nothing."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time

import pytest
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from permissions import oidc, provider_keys
from tests.identity import KeyServer, SigningKey
from tests.shop import Shop

SECRET = "kit-secret-" + "k" * 32
ME = "{ me { id name tenant roles } }"
TASKS = "{ tasks(first: 50) { edges { node { id } } } }"
START = """mutation($input: StartTaskInput!) { startTask(input: $input) { id } }"""


@pytest.fixture
def provider(configure, monkeypatch):
    with KeyServer("RS256", "ES256", "EdDSA") as keys:
        configure(oidc_issuer=keys.issuer, oidc_audience="agentlog", jwt_secret=SECRET)
        monkeypatch.setattr(provider_keys, "REFRESH_EVERY", 0.0)
        oidc.provider.cache_clear()
        yield keys
        oidc.provider.cache_clear()


@pytest.fixture
async def shop(client, provider) -> Shop:
    shop = Shop(client)
    await shop.setup()
    return shop


@pytest.mark.parametrize("algorithm", ["RS256", "ES256", "EdDSA"])
async def test_a_provider_token_names_the_person(client, provider, shop, algorithm):
    key = next(k for k in provider.keys if k.algorithm == algorithm)
    token = provider.token(key, tenant=shop.tenant, name="Mia", roles=["Mechanic"])

    me = (await client.ok(ME, token=token))["me"]

    assert me == {"id": "mia", "name": "Mia", "tenant": shop.tenant, "roles": ["Mechanic"]}


async def test_nested_and_namespaced_claims_and_the_role_map(client, provider, shop, configure):
    configure(claim_tenant="https://agentlog.example/tenant", claim_roles="realm_access.roles",
              claim_name="preferred_username", role_map={"workshop-leads": ["Manager", "Auditor"], "ledger": "Accountant"})
    token = provider.token(**{
        "https://agentlog.example/tenant": shop.tenant, "preferred_username": "noor.k",
        "realm_access": {"roles": ["workshop-leads", "ledger", "offline_access"]},
    })

    me = (await client.ok(ME, token=token))["me"]

    assert me["tenant"] == shop.tenant and me["name"] == "noor.k"
    assert me["roles"] == ["Accountant", "Auditor", "Manager", "offline_access"]


async def test_a_provider_token_without_a_tenant_is_refused(client, provider):
    error = await client.error(ME, token=provider.token(name="Mia"))
    assert error["extensions"]["code"] == "UNAUTHENTICATED"
    assert "'tenant'" in error["message"]


async def test_a_persons_provider_token_may_not_write(client, provider, shop):
    token = provider.token(tenant=shop.tenant, roles=["Manager"])
    error = await client.error(START, {"input": {"agent": "Estimator"}}, token)
    assert error["extensions"]["code"] in ("FORBIDDEN", "BAD_INPUT")
    assert await tasks_of(client, shop) == []


async def test_kit_tokens_still_come_from_the_secret(client, provider, shop):
    task = await shop.start()
    assert [t["id"] for t in await tasks_of(client, shop)] == [task["id"]]


def b64(value: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def unsigned(claims: dict, **header: object) -> str:
    return f"{b64({'typ': 'JWT', **header})}.{b64(claims)}."


def forgeries(provider: KeyServer, stranger: KeyServer, tenant: str) -> dict[str, str]:
    claims = {"tenant": tenant, "roles": ["Manager", "Auditor"]}
    now = int(time.time())
    rsa = provider.keys[0]
    public_pem = rsa.private.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    return {
        "alg none": unsigned({"iss": provider.issuer, "aud": "agentlog", "sub": "mia", "exp": now + 600, **claims},
                             alg="none", kid=rsa.kid),
        "HS256 with the provider's public key": hs256_with(public_pem, provider, tenant, rsa.kid),
        "unknown kid": provider.token(SigningKey("RS256", private=rsa.private, kid="not-a-kid"), **claims),
        "key from another issuer": stranger.token(stranger.keys[0], iss=provider.issuer, **claims),
        "another issuer's own token": stranger.token(**claims),
        "another issuer's key under our kid": provider.token(SigningKey("RS256", kid=rsa.kid), **claims),
        "expired": provider.token(exp=now - 600, iat=now - 1200, **claims),
        "not yet valid": provider.token(nbf=now + 600, **claims),
        "wrong audience": provider.token(aud="someone-else", **claims),
        "no audience": provider.token(aud=None, **claims),
        "wrong issuer": provider.token(iss="https://login.example", **claims),
        "no expiry": provider.token(exp=None, **claims),
        "jku elsewhere": stranger.token(headers={"jku": stranger.issuer + "/jwks"}, iss=provider.issuer, **claims),
        "x5u elsewhere": stranger.token(headers={"x5u": stranger.issuer + "/cert.pem"}, iss=provider.issuer, **claims),
        "claims kit": provider.token(**claims, kit=True),
    }


def hs256_with(key: bytes, provider: KeyServer, tenant: str, kid: str) -> str:
    """HMAC over the provider's public key, which anyone can read: PyJWT itself refuses to make it, so by hand."""
    now = int(time.time())
    body = {"iss": provider.issuer, "aud": "agentlog", "sub": "mia", "exp": now + 600, "tenant": tenant, "kit": True}
    signing = f"{b64({'alg': 'HS256', 'typ': 'JWT', 'kid': kid})}.{b64(body)}"
    signature = base64.urlsafe_b64encode(hmac.new(key, signing.encode(), hashlib.sha256).digest()).rstrip(b"=")
    return f"{signing}.{signature.decode()}"


async def tasks_of(client, shop: Shop) -> list[dict]:
    return [edge["node"] for edge in (await client.ok(TASKS, token=shop.noor))["tasks"]["edges"]]


async def test_every_forgery_is_refused_and_nothing_is_read_or_written(client, provider, shop):
    task = await shop.start()
    with KeyServer("RS256") as stranger:
        for name, token in forgeries(provider, stranger, shop.tenant).items():
            for query, variables in ((ME, None), (TASKS, None), (START, {"input": {"agent": "Estimator"}})):
                body = await client.post(query, variables, token)
                assert body["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED", (name, body)
                assert not body.get("data") or not any(body["data"].values()), (name, body)
        assert stranger.requests == []
    assert [t["id"] for t in await tasks_of(client, shop)] == [task["id"]]


async def test_jku_and_x5u_are_never_followed(client, provider, shop):
    with KeyServer("RS256") as elsewhere:
        for header in ("jku", "x5u"):
            token = elsewhere.token(headers={header: elsewhere.issuer + "/jwks"}, iss=provider.issuer, tenant=shop.tenant)
            assert (await client.error(ME, token=token))["extensions"]["code"] == "UNAUTHENTICATED"
    assert elsewhere.requests == []


async def test_without_the_secret_no_hs256_token_is_taken_beside_a_provider(client, provider, shop, configure):
    dev_token = shop.noor
    configure(jwt_secret=None)
    from permissions.tokens import DEV_SECRET, issue_token

    for token in (dev_token, issue_token("noor", shop.tenant, roles=["Manager"], key=DEV_SECRET)):
        assert (await client.error(ME, token=token))["extensions"]["code"] == "UNAUTHENTICATED"


async def test_others_are_served_while_the_providers_keys_are_fetched(client, provider, shop):
    provider.delay = 1.0
    order: list[str] = []

    async def ask(name: str, token: str) -> None:
        await client.ok(ME, token=token)
        order.append(name)

    person = provider.token(tenant=shop.tenant, name="Mia")
    await asyncio.gather(ask("provider token", person), ask("HS256 token", shop.noor))

    assert order == ["HS256 token", "provider token"]
