"""The usage page in a real browser: a chart of spend, tokens, calls and failed tasks per agent and per model, drawn
by uPlot from this server's own files, and the same totals in a table; each person sees the totals of what they may
read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from playwright.async_api import expect

from tests.browser import low_contrast, visit
from tests.spend import two_days


@pytest.fixture
def origin(servers) -> str:
    return servers[0].url


async def shop_of(client):
    now = datetime.now(UTC)
    return await two_days(client, now - timedelta(hours=30), now - timedelta(hours=2))


async def totals(page, name: str) -> list[str]:
    rows = page.get_by_test_id(f"totals-{name}").get_by_test_id("usage-row")
    await expect(rows.first).to_be_visible()
    return await rows.all_inner_texts()


async def test_a_manager_sees_the_weeks_spend_by_agent_and_model_and_the_last_day_alone(client, browser, origin):
    shop = await shop_of(client)
    async with visit(browser, origin) as seen:
        page = await seen.open("/inspect", shop.noor)
        await page.get_by_role("link", name="Usage").click()
        await page.wait_for_url(f"{origin}/inspect/usage")
        for chart in ("agent-spend", "agent-tokens", "agent-calls", "agent-failures", "model-spend", "model-calls"):
            await expect(page.get_by_test_id(f"chart-{chart}").locator("canvas")).to_have_count(1)
        await expect(page.get_by_test_id("chart-model-failures")).to_have_count(0)
        assert await totals(page, "agent") == ["Estimator\t$0.0056\t1,360\t290\t4\t1"]
        assert await totals(page, "model") == ["Careful\t$0.005\t1,000\t200\t1", "Everyday\t$0.0006\t360\t90\t3"]
        legend = page.get_by_test_id("chart-model-spend").locator(".u-legend")
        await expect(legend).to_contain_text("Careful")
        await expect(legend).to_contain_text("Everyday")
        assert await low_contrast(page) == []
        await seen.docs_screenshot("inspector-usage")
        await seen.screenshot("usage-manager")

        await page.get_by_role("link", name="Last 24 hours").click()
        await page.wait_for_url(f"{origin}/inspect/usage?range=24h")
        assert await totals(page, "model") == ["Careful\t$0.005\t1,000\t200\t1"]
        await page.get_by_role("link", name="Last 30 days").click()
        assert await totals(page, "agent") == ["Estimator\t$0.0056\t1,360\t290\t4\t1"]
        await seen.screenshot("usage-month")
        assert seen.elsewhere == [] and seen.problems == []


async def test_the_requester_sees_the_spend_of_their_own_work_and_an_auditor_the_shops(client, browser, origin):
    shop = await shop_of(client)
    async with visit(browser, origin) as seen:
        page = await seen.open("/inspect/usage", shop.mia)
        assert await totals(page, "model") == ["Everyday\t$0.0006\t360\t90\t3"]
        assert "Careful" not in await page.inner_text("body")
        await seen.screenshot("usage-requester")

    async with visit(browser, origin) as seen:
        page = await seen.open("/inspect/usage", shop.person("ana", "Auditor", name="Ana"))
        assert await totals(page, "agent") == ["Estimator\t$0.0056\t1,360\t290\t4\t1"]
        stranger = await seen.open("/inspect/usage", shop.person("eve", "Mechanic", name="Eve"))
        await stranger.reload()
        await expect(stranger.get_by_text("No model calls you may see in this time.")).to_have_count(2)
        assert seen.problems == []
