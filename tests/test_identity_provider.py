"""Against a real OpenID provider process (oidc-provider-mock): agentlog finds its keys through discovery, keeps
accepting people when the provider rotates its key mid-run, and reads the tenant, roles and name from the claims
the provider puts in the ID token after sign-in."""

from __future__ import annotations

import pytest

from permissions import oidc, provider_keys
from tests.identity import CALLBACK, MockProvider, mock_provider
from tests.shop import Shop

ME = "{ me { id name tenant roles } }"


@pytest.fixture
def provider(configure):
    with mock_provider() as found:
        found.client_id = found.public_client(CALLBACK)
        configure(oidc_issuer=found.issuer, oidc_audience=f"agentlog-api, {found.client_id}",
                  jwt_secret="kit-secret-" + "k" * 32)
        oidc.provider.cache_clear()
        yield found
        oidc.provider.cache_clear()


def signed_in(provider: MockProvider, sub: str, **claims: object) -> str:
    provider.set_user(sub, **claims)
    return provider.sign_in(sub, provider.client_id)["id_token"]


async def test_keys_are_found_through_discovery(client, provider):
    token = signed_in(provider, "mia", tenant="shop", name="Mia", roles=["Mechanic"])

    me = (await client.ok(ME, token=token))["me"]

    assert me == {"id": "mia", "name": "Mia", "tenant": "shop", "roles": ["Mechanic"]}
    keys = oidc.current_provider()
    assert keys.jwks_url is None and provider.kid() in keys.keys


async def test_a_key_set_url_given_directly_is_used(client, provider, configure):
    configure(jwks_url=provider.issuer + "/jwks")
    token = signed_in(provider, "mia", tenant="shop")
    assert (await client.ok(ME, token=token))["me"]["id"] == "mia"
    assert oidc.current_provider().jwks_url == provider.issuer + "/jwks"


async def test_a_rotated_key_is_fetched_once_and_the_old_tokens_key_is_let_go(client, provider, monkeypatch):
    monkeypatch.setattr(provider_keys, "REFRESH_EVERY", 0.0)
    before = signed_in(provider, "mia", tenant="shop")
    assert (await client.ok(ME, token=before))["me"]["id"] == "mia"
    generation = oidc.current_provider().generation

    provider.rotate_key()
    after = signed_in(provider, "noor", tenant="shop", roles=["Manager"])

    assert (await client.ok(ME, token=after))["me"]["id"] == "noor"
    assert (await client.ok(ME, token=after))["me"]["id"] == "noor"
    assert oidc.current_provider().generation == generation + 1
    assert (await client.error(ME, token=before))["extensions"]["code"] == "UNAUTHENTICATED"


async def test_unknown_kids_refresh_the_keys_at_most_once_an_interval(client, provider, monkeypatch):
    monkeypatch.setattr(provider_keys, "REFRESH_EVERY", 60.0)
    calls = []
    fetch = provider_keys.fetch_json
    monkeypatch.setattr(provider_keys, "fetch_json", lambda url: calls.append(url) or fetch(url))
    token = signed_in(provider, "mia", tenant="shop")
    assert (await client.ok(ME, token=token))["me"]["id"] == "mia"
    fetched = len(calls)

    provider.rotate_key()
    for sub in ("zoe", "ada", "lin"):
        stranger = signed_in(provider, sub, tenant="shop")
        assert (await client.error(ME, token=stranger))["extensions"]["code"] == "UNAUTHENTICATED"

    assert len(calls) == fetched


async def test_claims_mapping_from_the_providers_id_token(client, provider, configure):
    shop = Shop(client)
    await shop.setup()
    configure(claim_tenant="org.workshop", claim_roles="realm_access.roles", claim_name="preferred_username",
              role_map={"leads": ["Manager", "Auditor"]})
    token = signed_in(
        provider, "noor", org={"workshop": shop.tenant}, preferred_username="Noor K.",
        realm_access={"roles": ["leads", "offline_access"]}, kit=False,
    )

    me = (await client.ok(ME, token=token))["me"]

    assert me == {"id": "noor", "name": "Noor K.", "tenant": shop.tenant,
                  "roles": ["Auditor", "Manager", "offline_access"]}


async def test_a_provider_token_claiming_kit_rights_is_refused(client, provider):
    token = signed_in(provider, "mallory", tenant="shop", kit=True)
    error = await client.error(ME, token=token)
    assert error["extensions"]["code"] == "UNAUTHENTICATED"
    assert "kit" in error["message"]
