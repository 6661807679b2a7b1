"""From sign-in to proof: Ana, the shop's auditor, signs in to the inspector through the shop's identity provider
(a real OpenID provider process), approves Mia's estimate on its page, and takes it in an incident bundle with her
provider token; checked offline, the bundle holds her approval, named by the provider's `sub`, whole up to its
signed checkpoint."""

from __future__ import annotations

import httpx
import orjson
from playwright.async_api import expect

from tests.shop import Client, Shop
from tests.test_bundle import OFFLINE, agentlog
from tests.test_sign_in import provider, server, tab, through_the_provider  # noqa: F401 (fixtures)


async def test_an_auditor_signed_in_through_the_provider_approves_and_the_approval_verifies_offline_in_a_bundle(
    browser, provider, server, tmp_path  # noqa: F811
):
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        shop = Shop(Client(http))
        await shop.setup()
        task = await shop.estimate()
        key = (await shop.client.ok("{ checkpointKey }"))["checkpointKey"]
    provider.set_user("ana", tenant=shop.tenant, name="Ana", roles=["Auditor"])

    async with tab(browser, server.url, provider.issuer) as (page, _):
        await page.goto(f"{server.url}/inspect/{task}")
        await page.get_by_role("button", name="Sign in with your organisation").click()
        await through_the_provider(page, provider, "ana", "auditor")
        await page.wait_for_url(f"{server.url}/inspect/{task}")
        await expect(page.locator(".viewer")).to_contain_text("Signed in as Ana")
        await page.get_by_label("Your note (optional)").fill("Pads and a cable: one hour is right.")
        await page.get_by_role("button", name="Approve").click()
        await expect(page.get_by_test_id("review")).to_contain_text("Ana (ana) approved this work")
        token = await page.evaluate("() => sessionStorage.getItem('agentlog.token')")

    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        response = await http.get(f"/export/bundle?task={task}", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    reviewed = [orjson.loads(raw) for raw in response.content.splitlines() if b'"REVIEWED"' in raw]
    assert len(reviewed) == 1 and "Ana (ana) approved" in reviewed[0]["summary"], reviewed
    bundle, keyfile = tmp_path / "bundle.jsonl", tmp_path / "key.txt"
    bundle.write_bytes(response.content)
    keyfile.write_text(key)

    checked = agentlog("verify", "--bundle", str(bundle), "--key", str(keyfile), "--json", database=OFFLINE)

    verdict = orjson.loads(checked.stdout)
    assert (checked.returncode, verdict["intact"], verdict["faults"]) == (0, True, []), checked.stdout
    assert [(p["root"], p["intact"], p["wholeToCheckpoint"]) for p in verdict["parts"]][0] == (task, True, True)
