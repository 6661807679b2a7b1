"""Two runs side by side in a real browser: yesterday's estimate and today's, their steps aligned, the step today's
run added marked, the cost and token deltas, both verify badges; a reader sees only runs they may read."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.browser import low_contrast, visit
from tests.shop import Shop


@pytest.fixture
def origin(servers) -> str:
    return servers[0].url


async def two_runs(client) -> tuple[Shop, str, str]:
    """The first estimate as usual; the second also calls StockOf, and its last model call is on Careful."""
    shop = Shop(client)
    await shop.setup()
    first = await shop.estimate()
    second = (await shop.start())["id"]
    await shop.model_call(second)
    await shop.tool(second, "PartsFor", {"fault": "rear brake"}, ["pads"], "c1")
    await shop.tool(second, "StockOf", {"part": "pads"}, {"left": 2}, "c2")
    await shop.model_call(second, model="Careful", costMicros=1200, inputTokens=400, outputTokens=60)
    await shop.end(second, outcome="Estimated.")
    return shop, first, second


async def test_a_manager_compares_a_run_with_the_one_before_it(client, browser, origin):
    shop, first, second = await two_runs(client)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{second}", shop.noor)
        await page.get_by_test_id("compare-link").click()
        await page.wait_for_url(f"{origin}/inspect/compare?a={second}")
        rows = page.get_by_test_id("compare-row")
        await expect(rows.first).to_be_visible()
        states = await rows.evaluate_all("(els) => els.map((e) => e.dataset.state)")
        texts = await rows.all_inner_texts()
        assert states == ["same"] * 4 + ["alone", "changed", "changed", "changed", "same"]
        assert texts[4] == "—\tModel call · Everyday\t—\t—\t—"
        assert texts[5].startswith("Tool call · StockOf\tTool call · NoteRepair")
        assert texts[7] == "Model call · Careful\tModel call · Everyday\t−310\t−$0.001\tsame"
        await expect(page.get_by_test_id("cost-a")).to_have_text("$0.0014")
        await expect(page.get_by_test_id("cost-b")).to_have_text("$0.0006")
        await expect(page.get_by_test_id("verify-badge")).to_have_count(2)
        await expect(page.get_by_test_id("verify-badge").first).to_contain_text("Record intact")
        await expect(page.get_by_test_id("compare-summary")).to_contain_text("5 of 9 steps are the same, 3 differ in model or tool, 1 is in one run only")
        assert await low_contrast(page) == []
        await seen.docs_screenshot("inspector-compare")
        await seen.screenshot("compare-manager")
        assert seen.elsewhere == [] and seen.problems == []


async def test_with_no_earlier_run_the_page_says_so_and_a_stranger_sees_nothing(client, browser, origin):
    shop, first, second = await two_runs(client)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/compare?a={first}", shop.mia)
        await expect(page.get_by_test_id("no-other-run")).to_be_visible()
        page = await seen.open("/inspect", Shop(client).person("mia", "Manager", name="Mia"))
        await page.goto(f"{origin}/inspect/compare?a={second}&b={first}")
        await expect(page.get_by_test_id("no-task")).to_be_visible()
        assert "Estimator" not in await page.locator("main").inner_text()
