"""The session page in a real browser: the turns of one conversation in order, each with its requester, outcome
and cost as the reader may see them, and what the conversation cost all in; the list groups its rows by session."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.browser import low_contrast, visit
from tests.conversation import conversation


@pytest.fixture
def origin(servers) -> str:
    return servers[0].url


async def test_a_manager_reads_the_whole_conversation_and_follows_a_turn(client, browser, origin):
    shop, turns = await conversation(client)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{turns[0]}", shop.noor)
        await page.get_by_test_id("session-link").click()
        await page.wait_for_url(f"{origin}/inspect/session/chat-7")
        rows = page.get_by_test_id("session-turn")
        await expect(rows).to_have_count(3)
        await expect(page.get_by_test_id("turn-requester")).to_have_text(["Mia", "Mia", "Noor"])
        await expect(page.get_by_test_id("turn-outcome").nth(1)).to_have_text("No parts in stock.")
        await expect(page.get_by_test_id("turn-cost")).to_have_text(["$0.0006", "$0.00105", "$0.0006"])
        await expect(page.get_by_test_id("session-cost")).to_have_text("$0.00225")
        await expect(page.get_by_test_id("session-facts")).to_contain_text("3, 4 tasks in all")
        await expect(page.get_by_test_id("session-facts")).to_contain_text("1 task")
        assert await low_contrast(page) == []
        await seen.docs_screenshot("inspector-session")
        await seen.screenshot("session-manager")
        await rows.nth(2).get_by_role("link").click()
        await page.wait_for_url(f"{origin}/inspect/{turns[2]}")
        await expect(page.get_by_test_id("requester")).to_have_text("Noor")
        assert seen.elsewhere == [] and seen.problems == []


async def test_the_requester_sees_their_turns_and_their_totals_only(client, browser, origin):
    shop, turns = await conversation(client)
    async with visit(browser, origin) as seen:
        page = await seen.open("/inspect/session/chat-7", shop.mia)
        await expect(page.get_by_test_id("session-turn")).to_have_count(2)
        await expect(page.get_by_test_id("session-cost")).to_have_text("$0.00165")
        assert "Turn three" not in await page.inner_text("body")
        await seen.screenshot("session-requester")

        await page.goto(f"{origin}/inspect?bySession=1&all=1")
        groups = page.get_by_test_id("session-group")
        await expect(groups).to_have_count(2)
        await expect(groups.first.get_by_role("link", name="Session chat-8")).to_be_visible()
        await expect(groups.first.get_by_test_id("task-row")).to_have_count(1)
        await expect(groups.last.get_by_role("link", name="Session chat-7")).to_be_visible()
        await expect(groups.last.get_by_test_id("task-row")).to_have_count(3)
        await expect(groups.last).to_contain_text("Part search")
        await seen.screenshot("list-by-session")
        assert seen.problems == []


async def test_a_figures_only_reader_sees_the_spend_and_why_the_words_are_missing(client, browser, origin):
    shop, _ = await conversation(client)
    async with visit(browser, origin) as seen:
        page = await seen.open("/inspect/session/chat-7", shop.person("ada", "Accountant", name="Ada"))
        await expect(page.get_by_test_id("session-turn")).to_have_count(3)
        await expect(page.get_by_test_id("session-cost")).to_have_text("$0.00225")
        await expect(page.get_by_test_id("turn-requester")).to_have_text(["not shown to your role"] * 3)
        await expect(page.get_by_test_id("turn-outcome").first).to_have_text("not shown to your role")
        for words in ("Turn one", "No parts in stock", "Mia"):
            assert words not in await page.locator("main").inner_text()

        stranger = shop.person("eve", "Mechanic", name="Eve")
        page = await seen.open("/inspect", stranger)
        await page.goto(f"{origin}/inspect/session/chat-7")
        await expect(page.get_by_test_id("no-session")).to_be_visible()
        await expect(page.get_by_test_id("session-turn")).to_have_count(0)
