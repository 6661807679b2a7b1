"""The inspector's reviews and hold, in Chromium: Ana approves the estimate on its page, Carla from counsel holds it
over Mia's complaint and releases it, and Abe the accountant is offered neither."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.browser import low_contrast, visit
from tests.shop import Shop

POLICIES = "mutation($input: PoliciesInput!) { definePolicies(input: $input) { holdsRecords } }"


@pytest.fixture
def origin(servers) -> str:
    return servers[0].url


async def estimated(client) -> tuple[Shop, str]:
    shop = Shop(client)
    await shop.setup()
    await client.ok(POLICIES, {"input": {"holdsRecords": ["Counsel"]}}, shop.kit)
    return shop, await shop.estimate()


async def test_an_auditor_approves_the_work_on_its_page(client, browser, origin):
    shop, task = await estimated(client)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.person("ana", "Auditor", name="Ana Auditor"))
        await expect(page.get_by_test_id("no-reviews")).to_be_visible()
        await expect(page.get_by_test_id("hold")).to_contain_text("Not held")
        await expect(page.get_by_role("button", name="Hold")).to_have_count(0)

        await page.get_by_label("Your note (optional)").fill("One hour is right for pads and a cable.")
        await page.get_by_role("button", name="Approve").click()

        await expect(page.get_by_test_id("review")).to_contain_text("Ana Auditor (ana) approved this work")
        await expect(page.get_by_test_id("review")).to_contain_text("One hour is right for pads and a cable.")
        await expect(page.get_by_test_id("verify-badge")).to_contain_text("Record intact: 10 lines checked")
        assert await low_contrast(page) == []
        await seen.screenshot("task-reviewed")
        assert seen.elsewhere == [] and seen.problems == []
    reviews = await shop.read(task, shop.noor, "reviews { by { id } verdict note }")
    assert reviews["reviews"] == [{"by": {"id": "ana"}, "verdict": "APPROVED",
                                   "note": "One hour is right for pads and a cable."}]


async def test_counsel_holds_the_work_and_releases_it_and_an_accountant_is_offered_neither(client, browser, origin):
    shop, task = await estimated(client)
    await client.ok("mutation($input: ReviewInput!) { reviewTask(input: $input) { verdict } }",
                    {"input": {"task": task, "verdict": "REJECTED", "note": "Two hours."}}, shop.noor)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.person("carla", "Counsel", "Accountant", name="Carla"))
        await expect(page.get_by_test_id("reviews-hidden")).to_have_text(
            "1 review; what they say is not shown to your role.")
        await expect(page.get_by_role("button", name="Approve")).to_have_count(0)

        await page.get_by_label("Why it is held").fill("Mia's complaint about the T-7 estimate is open.")
        await page.get_by_role("button", name="Hold").click()

        await expect(page.get_by_test_id("hold")).to_contain_text(
            "Held by Carla (carla) since")
        await expect(page.get_by_test_id("hold")).to_contain_text("Mia's complaint about the T-7 estimate is open.")
        await expect(page.get_by_test_id("verify-badge")).to_contain_text("Record intact: 11 lines checked")
        assert await low_contrast(page) == []
        await seen.screenshot("task-held")

        await page.get_by_label("Why the hold ends").fill("The complaint was settled.")
        await page.get_by_role("button", name="Release the hold").click()
        await expect(page.get_by_test_id("hold")).to_contain_text("Not held")

        page = await seen.open(f"/inspect/{task}", shop.person("abe", "Accountant", name="Abe"))
        await page.reload()
        await expect(page.get_by_test_id("hold")).to_contain_text("Not held")
        await expect(page.get_by_role("button", name="Hold")).to_have_count(0)
        await expect(page.get_by_role("button", name="Approve")).to_have_count(0)
        assert seen.elsewhere == [] and seen.problems == []
    assert (await shop.read(task, shop.noor, "hold { reason }"))["hold"] is None
