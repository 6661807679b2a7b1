"""The inspector in a real browser: the estimate's money against its budget, with the 80% and 100% marks, and
Noor stopping the running work from the page, which the Estimator hears at its next write."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from agentlog_kit import Kit, StopAsked
from tests.browser import low_contrast, visit
from tests.shop import Shop

REASON = "The customer collected the bike."


@pytest.fixture
def origin(servers) -> str:
    return servers[0].url


async def running(client, spent: int, limit: int = 1000) -> tuple[Shop, str]:
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start(limitMicros=limit))["id"]
    for _ in range(spent // 300):
        await shop.model_call(task, costMicros=300)
    return shop, task


async def test_noor_stops_the_running_work_from_the_page_and_the_agent_stops_at_its_next_write(
        client, browser, origin):
    shop = Shop(client)
    await shop.setup()
    async with visit(browser, origin) as seen:
        with Kit(origin, shop.kit, batch_lines=1) as kit:
            with pytest.raises(StopAsked):
                with kit.task("Estimator", "EstimateRepair", requester={"id": "mia", "name": "Mia"},
                              limit_micros=1000, about="Ticket T-7") as t:
                    for _ in range(3):
                        t.model_call("Everyday", input_tokens=120, output_tokens=30, cost_micros=300)
                    page = await seen.open(f"/inspect/{t.id}", shop.noor)
                    await expect(page.get_by_test_id("budget-words")).to_have_text(
                        "$0.0009 of $0.001 spent all in: 90%, past 80%")
                    await expect(page.get_by_role("meter")).to_have_attribute("aria-valuenow", "900")
                    await seen.screenshot("stop-budget-near")

                    await page.get_by_role("button", name="Stop this work").click()
                    await page.get_by_role("button", name="Ask it to stop").click()
                    await expect(page.get_by_test_id("stop-problem")).to_contain_text("Say why it should stop")
                    await page.get_by_label("Why should it stop?").fill(REASON)
                    assert await low_contrast(page) == []
                    await seen.screenshot("stop-form")
                    await page.get_by_role("button", name="Ask it to stop").click()
                    await expect(page.get_by_test_id("stop-asked")).to_contain_text("Noor asked the work to stop")
                    await expect(page.get_by_test_id("stop-asked")).to_contain_text(REASON)
                    await expect(page.get_by_role("button", name="Stop this work")).to_have_count(0)
                    steps = 0
                    for _ in range(3):
                        t.model_call("Everyday", input_tokens=120, output_tokens=30, cost_micros=300)
                        steps += 1
            assert steps == 0

        await page.reload()
        await expect(page.get_by_test_id("outcome")).to_have_text(f"Noor asked the work to stop: {REASON}")
        await expect(page.get_by_text("stopped", exact=True).first).to_be_visible()
        await expect(page.get_by_test_id("budget-words")).to_have_text(
            "$0.0012 of $0.001 spent all in: 120%, past the budget")
        await expect(page.get_by_test_id("step").nth(4)).to_contain_text("Stop asked")
        await expect(page.get_by_test_id("step").nth(4)).to_contain_text(f"Noor asked the work to stop: {REASON}")
        assert await low_contrast(page) == []
        await seen.screenshot("stop-asked")
        assert seen.elsewhere == [] and seen.problems == []


async def test_an_auditor_is_told_who_may_stop_it_and_nothing_is_recorded(client, browser, origin):
    shop, task = await running(client, 300)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.person("ana", "Auditor", name="Ana"))
        await expect(page.get_by_test_id("budget-words")).to_have_text("$0.0003 of $0.001 spent all in: 30%")
        await page.get_by_role("button", name="Stop this work").click()
        await page.get_by_label("Why should it stop?").fill(REASON)
        await page.get_by_role("button", name="Ask it to stop").click()
        await expect(page.get_by_test_id("stop-problem")).to_have_text(
            "Only a supervisor of this agent, or who asked for the work, may stop it.")
        await seen.screenshot("stop-refused")
    assert (await shop.read(task, shop.noor, "stopAsked { reason } chainLength")) == {"stopAsked": None,
                                                                                      "chainLength": 2}


async def test_ended_work_offers_no_stop_and_work_without_a_budget_no_meter(client, browser, origin):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate(limitMicros=None)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.noor)
        await expect(page.get_by_test_id("verify-badge")).to_be_visible()
        await expect(page.get_by_test_id("cost-all-in").first).to_have_text("$0.0006")
        await expect(page.get_by_role("button", name="Stop this work")).to_have_count(0)
        await expect(page.get_by_test_id("budget-meter")).to_have_count(0)
