"""The waterfall in a real browser: each task, model call and tool call of the tree a bar in tree order, the
critical path marked down to the call that ended last, tokens and cost on hover, and a row chosen zooms to it."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.browser import low_contrast, visit
from tests.shop import Shop


@pytest.fixture
def origin(servers) -> str:
    return servers[0].url


async def handed_on(client) -> tuple[Shop, str]:
    """The estimate calls a model, hands the part search on (a model call and a tool), and ends with it."""
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start())["id"]
    await shop.model_call(root, durationMs=30)
    child = (await shop.start(parent=root, skill="FindParts", about="Part search"))["id"]
    await shop.model_call(child, model="Careful", costMicros=900, inputTokens=500, outputTokens=80, durationMs=20)
    await shop.tool(child, "PartsFor", {"fault": "brake"}, ["pads"], "c1")
    await shop.end(child)
    await shop.end(root)
    return shop, root


async def bars(page) -> list[tuple[str, str, str]]:
    await expect(page.get_by_test_id("bar").first).to_be_visible()
    return await page.get_by_test_id("bar").evaluate_all(
        "(els) => els.map((e) => [e.dataset.kind, e.innerText.trim(), e.dataset.critical])")


async def test_a_manager_sees_the_tree_as_bars_with_the_critical_path_and_zooms_to_a_row(client, browser, origin):
    shop, root = await handed_on(client)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{root}", shop.noor)
        assert await bars(page) == [
            ["task", "Estimator · EstimateRepair", "yes"],
            ["model", "Model call · Everyday", "no"],
            ["task", "Estimator · FindParts", "yes"],
            ["model", "Model call · Careful", "no"],
            ["tool", "Tool · PartsFor", "yes"],
        ]
        careful = page.get_by_test_id("bar").nth(3)
        assert await careful.get_attribute("title") == "Model call · Careful · 20 ms · 500 tokens in, 80 out · $0.0009"
        assert "no result recorded" not in (await page.get_by_test_id("bar").nth(4).get_attribute("title"))
        assert await low_contrast(page) == []
        await page.get_by_test_id("waterfall").scroll_into_view_if_needed()
        await seen.docs_screenshot("inspector-waterfall")
        await seen.screenshot("waterfall-manager")

        await page.get_by_role("button", name="Estimator · FindParts").click()
        await expect(page.get_by_test_id("zoomed")).to_be_visible()
        await expect(page.get_by_test_id("bar")).to_have_count(5)
        everyday = page.get_by_test_id("bar").nth(1).locator(".wf-bar")
        assert await everyday.count() == 0 or (await everyday.bounding_box())["width"] <= 3
        await seen.screenshot("waterfall-zoomed")
        await page.get_by_role("button", name="Show the whole run").click()
        await expect(page.get_by_test_id("zoomed")).to_have_count(0)
        assert seen.elsewhere == [] and seen.problems == []


async def test_the_requester_and_a_figures_only_reader_see_the_same_bars_and_no_words(client, browser, origin):
    shop, root = await handed_on(client)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{root}", shop.mia)
        mine = await bars(page)
        assert len(mine) == 5
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{root}", shop.person("ada", "Accountant", name="Ada"))
        assert await bars(page) == mine
        titles = " ".join(await page.get_by_test_id("bar").evaluate_all("(els) => els.map((e) => e.title)"))
        assert "brake" not in titles and "Part search" not in titles
        assert seen.problems == []


async def test_a_long_run_puts_only_the_rows_in_view_in_the_page(client, browser, origin):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    for n in range(200):
        await shop.model_call(task, model=f"Call{n}", durationMs=5)
    await shop.end(task)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.noor)
        await expect(page.get_by_test_id("waterfall")).to_contain_text("201 bars over")
        drawn = await page.get_by_test_id("bar").count()
        assert 16 <= drawn <= 40
        await page.locator(".wf-box").evaluate("(box) => { box.scrollTop = box.scrollHeight; }")
        await expect(page.get_by_test_id("bar").last).to_contain_text("Model call · Call199")
        assert await page.get_by_test_id("bar").count() <= 40
        assert seen.problems == []
