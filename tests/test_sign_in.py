"""Sam, the workshop's manager, signs in to the inspector with the workshop's identity provider (a real OpenID
provider process): the authorization-code flow with PKCE, in Chromium, through the provider's own sign-in page.
He lands on /inspect as himself, reads what a manager may read and no more, and signs out; GraphiQL signs him in
the same way, and a pasted token still works."""

from __future__ import annotations

import base64
import hashlib
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import httpx
import jwt
import pytest
from playwright.async_api import Page, Route, expect

from tests.identity import MockProvider, mock_provider
from tests.servers import Server, start_server
from tests.shop import Client, Shop

CLIENT_ID = "agentlog-inspector"
KIT_SECRET = "kit-secret-" + "k" * 32
SHOTS = Path(os.environ.get("AGENTLOG_SCREENSHOTS", Path(__file__).resolve().parent / "screenshots"))


@pytest.fixture
def provider():
    with mock_provider() as found:
        yield found


@pytest.fixture
def server(database, provider, monkeypatch, configure) -> Server:
    """A server process signed in through the provider; this process makes the kit's tokens with its secret."""
    monkeypatch.setenv("AGENTLOG_OIDC_ISSUER", provider.issuer)
    monkeypatch.setenv("AGENTLOG_OIDC_AUDIENCE", CLIENT_ID)
    monkeypatch.setenv("AGENTLOG_OIDC_CLIENT_ID", CLIENT_ID)
    monkeypatch.setenv("AGENTLOG_JWT_SECRET", KIT_SECRET)
    configure(jwt_secret=KIT_SECRET)
    started = start_server(database)
    yield started
    started.stop()


@asynccontextmanager
async def tab(browser, *origins: str) -> AsyncIterator[tuple[Page, list]]:
    """A page that may reach only these origins, and the requests it made."""
    context = await browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-GB")
    made: list = []

    async def only_these(route: Route) -> None:
        if route.request.url.startswith(tuple(o + "/" for o in origins)):
            made.append(route.request)
            await route.continue_()
        else:
            await route.abort()

    await context.route("**/*", only_these)
    try:
        yield await context.new_page(), made
    finally:
        await context.close()


async def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / f"sign-in-{name}.png"), full_page=True)


async def through_the_provider(page: Page, provider: MockProvider, sub: str, name: str) -> None:
    await page.wait_for_url(f"{provider.issuer}/oauth2/authorize?**")
    await page.fill("input[name=sub]", sub)
    await shot(page, name)
    await page.get_by_role("button", name="Authorize").click()


def b64url_sha256(text: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()


async def test_a_manager_signs_in_reads_as_a_manager_and_signs_out(browser, provider, server):
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        shop = Shop(Client(http))
        await shop.setup()
        task = await shop.estimate()
    provider.set_user("sam", tenant=shop.tenant, name="Sam", roles=["Manager"])

    async with tab(browser, server.url, provider.issuer) as (page, made):
        await page.goto(f"{server.url}/inspect/{task}")
        await expect(page.get_by_role("button", name="Sign in with your organisation")).to_be_visible()
        await shot(page, "1-inspector")
        await page.get_by_role("button", name="Sign in with your organisation").click()
        await through_the_provider(page, provider, "sam", "2-provider")

        await page.wait_for_url(f"{server.url}/inspect/{task}")
        await expect(page.locator(".viewer")).to_contain_text("Signed in as Sam")
        await expect(page.get_by_test_id("step").first).to_be_visible()
        await expect(page.get_by_test_id("content-reason").first).to_have_text("Content not shown to your role.")
        await expect(page.get_by_test_id("step-content")).to_have_count(0)
        assert "rear brake" not in await page.inner_text("body")
        await shot(page, "3-signed-in")

        stored = await page.evaluate("() => ({...sessionStorage})")
        assert stored["agentlog.token"].count(".") == 2 and "agentlog.refresh" in stored
        authorize = parse_qs(urlparse(next(r.url for r in made if "/oauth2/authorize" in r.url)).query)
        exchange = parse_qs(next(r.post_data for r in made if r.url.endswith("/oauth2/token")))
        assert authorize["code_challenge_method"] == ["S256"] and authorize["client_id"] == [CLIENT_ID]
        assert authorize["code_challenge"] == [b64url_sha256(exchange["code_verifier"][0])]
        assert authorize["redirect_uri"] == exchange["redirect_uri"] == [f"{server.url}/inspect"]

        await page.get_by_role("button", name="Sign out").click()
        await expect(page.get_by_test_id("sign-in-problem")).to_have_text("Not signed in.")
        assert await page.evaluate("() => Object.keys(sessionStorage).filter((k) => k.startsWith('agentlog.'))") == []
        await shot(page, "4-signed-out")

        await page.fill("#token", shop.mia)
        await page.get_by_role("button", name="Sign in", exact=True).click()
        await expect(page.locator(".viewer")).to_contain_text("Signed in as Mia")
        await expect(page.get_by_test_id("step-content").first).to_contain_text("rear brake does not bite")


async def test_graphiql_signs_in_with_the_organisation(browser, provider, server):
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        shop = Shop(Client(http))
        await shop.setup()
    provider.set_user("sam", tenant=shop.tenant, name="Sam", roles=["Manager"])

    async with tab(browser, server.url, provider.issuer) as (page, _):
        await page.goto(f"{server.url}/graphql")
        await expect(page.locator("#who")).to_have_text("not signed in")
        await page.get_by_role("button", name="Sign in with your organisation").click()
        await through_the_provider(page, provider, "sam", "5-graphiql-provider")
        await page.wait_for_url(f"{server.url}/graphql")
        await expect(page.locator("#who")).to_have_text(f"signed in as Sam ({shop.tenant})")
        await shot(page, "6-graphiql-signed-in")
        await page.get_by_role("button", name="Forget").click()
        await expect(page.locator("#who")).to_have_text("not signed in")
        assert await page.evaluate("() => Object.keys(sessionStorage).filter((k) => k.startsWith('agentlog.'))") == []


async def test_without_a_client_id_the_pages_offer_only_pasting(browser, database, provider, monkeypatch):
    monkeypatch.setenv("AGENTLOG_OIDC_ISSUER", provider.issuer)
    monkeypatch.setenv("AGENTLOG_OIDC_AUDIENCE", CLIENT_ID)
    server = start_server(database)
    try:
        async with tab(browser, server.url) as (page, _):
            await page.goto(f"{server.url}/inspect")
            await expect(page.get_by_test_id("sign-in-problem")).to_have_text("Not signed in.")
            await expect(page.get_by_role("button", name="Sign in with your organisation")).to_have_count(0)
            policy = (await page.request.get(f"{server.url}/inspect")).headers["content-security-policy"]
            assert "connect-src 'self';" in policy
    finally:
        server.stop()


async def test_the_token_is_refreshed_before_it_expires(browser, database, monkeypatch, configure):
    """The provider's ID tokens live 20 s here; the page trades its refresh token at the provider halfway through.
    oidc-provider-mock answers a refresh with a new access token only, where Keycloak, Entra ID and Auth0 also give
    a new ID token: the test adds one to the provider's real answer, signed with the provider's own key."""
    with mock_provider(access_token_max_age=timedelta(seconds=20)) as provider:
        monkeypatch.setenv("AGENTLOG_OIDC_ISSUER", provider.issuer)
        monkeypatch.setenv("AGENTLOG_OIDC_AUDIENCE", CLIENT_ID)
        monkeypatch.setenv("AGENTLOG_OIDC_CLIENT_ID", CLIENT_ID)
        monkeypatch.setenv("AGENTLOG_JWT_SECRET", KIT_SECRET)
        configure(jwt_secret=KIT_SECRET)
        server = start_server(database)
        try:
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
                shop = Shop(Client(http))
                await shop.setup()
            provider.set_user("sam", tenant=shop.tenant, name="Sam", roles=["Manager"])
            refreshed_at: list[float] = []

            async def with_an_id_token(route: Route) -> None:
                answer = await route.fetch()
                if "grant_type=refresh_token" not in (route.request.post_data or ""):
                    return await route.fulfill(response=answer)
                body = await answer.json()
                now = int(time.time())
                refreshed_at.append(now)
                claims = {"iss": provider.issuer, "aud": [CLIENT_ID], "sub": "sam", "iat": now, "exp": now + 20,
                          "tenant": shop.tenant, "name": "Sam", "roles": ["Manager"]}
                body["id_token"] = jwt.encode(claims, provider.storage.jwk.as_pem(is_private=True), algorithm="RS256")
                await route.fulfill(response=answer, json=body)

            async with tab(browser, server.url, provider.issuer) as (page, _):
                await page.route(f"{provider.issuer}/oauth2/token", with_an_id_token)
                await page.goto(f"{server.url}/inspect")
                await page.get_by_role("button", name="Sign in with your organisation").click()
                await through_the_provider(page, provider, "sam", "7-refresh-provider")
                await expect(page.locator(".viewer")).to_contain_text("Signed in as Sam")
                first = await page.evaluate("() => sessionStorage.getItem('agentlog.token')")
                await page.wait_for_function(
                    "(first) => sessionStorage.getItem('agentlog.token') !== first", arg=first, timeout=30_000
                )
                second = await page.evaluate("() => sessionStorage.getItem('agentlog.token')")
                await page.get_by_role("link", name="Tasks").click()
                await expect(page.locator(".viewer")).to_contain_text("Signed in as Sam")
        finally:
            server.stop()
    expiry = jwt.decode(first, options={"verify_signature": False})["exp"]
    assert refreshed_at and refreshed_at[0] < expiry
    assert jwt.decode(second, options={"verify_signature": False})["exp"] > expiry
