"""A step's content reads as what it is: a model call as its conversation (the kit's shape, the GenAI conventions'
parts and OpenInference's messages alike), a tool's arguments and result as a small table, the raw JSON a click
away; a reader whose role may not read content sees none of it."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.browser import visit
from tests.shop import Shop

GENAI_MESSAGES = [
    {"role": "system", "parts": [{"type": "text", "content": "Answer as the workshop."}]},
    {"role": "user", "parts": [{"type": "text", "content": "How long for T-9?"}]},
    {"role": "assistant", "parts": [{"type": "tool_call", "id": "c9", "name": "HoursFor", "arguments": {"repair": "T-9"}}]},
    {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c9", "response": {"hours": 2}}]},
]
GENAI_RESPONSE = [{"role": "assistant", "parts": [{"type": "text", "content": "Two hours."}], "finish_reason": "stop"}]
OPENINFERENCE = {"messages": [{"role": "user", "content": "Is the chain worn?"}]}
OPENAI_CHOICE = {"message": {"role": "assistant", "content": "Yes, replace it.",
                             "tool_calls": [{"function": {"name": "OrderPart", "arguments": "{\"part\": \"chain\"}"}}]}}


@pytest.fixture
def origin(servers) -> str:
    return servers[0].url


async def worked(client) -> tuple[Shop, str]:
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    await shop.model_call(task)
    await shop.tool(task, "PartsFor", {"fault": "rear brake does not bite", "urgent": True}, ["brake pads"], "c1")
    await shop.model_call(task, systemPrompt=None, messages=GENAI_MESSAGES, response=GENAI_RESPONSE)
    await shop.model_call(task, systemPrompt=None, messages=OPENINFERENCE, response=OPENAI_CHOICE)
    await shop.end(task, outcome="Estimated.")
    return shop, task


async def choose(page, seq: int):
    await page.locator(f'[data-testid="step"][data-seq="{seq}"]').click()
    return page.locator(".step-whole")


async def test_the_requester_reads_each_call_as_a_conversation_and_the_raw_json_a_click_away(client, browser, origin):
    shop, task = await worked(client)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.mia)
        row = page.locator('[data-testid="step"][data-seq="2"]').get_by_test_id("step-content")
        await expect(row).to_have_text("User: T-7 → Reply: asks for PartsFor")

        whole = await choose(page, 2)
        await expect(whole.get_by_test_id("system-prompt")).to_contain_text("You estimate bicycle repairs.")
        await expect(whole.get_by_test_id("message")).to_have_count(1)
        await expect(whole.get_by_test_id("message")).to_contain_text("User")
        await expect(whole.get_by_test_id("tool-request")).to_contain_text("Asks for PartsFor")
        await expect(whole.get_by_test_id("raw-json")).to_have_count(0)
        await whole.get_by_role("button", name="Show the raw JSON").click()
        await expect(whole.get_by_test_id("raw-json")).to_contain_text('"systemPrompt": "You estimate bicycle repairs."')
        await whole.get_by_role("button", name="Show it readable").click()
        await expect(whole.get_by_test_id("conversation")).to_be_visible()

        whole = await choose(page, 3)
        table = whole.get_by_test_id("fields")
        await expect(table.locator("tr")).to_have_count(2)
        await expect(table.locator("tr").first).to_have_text("faultrear brake does not bite")
        await expect(table.locator("tr").last).to_have_text("urgenttrue")

        whole = await choose(page, 5)
        await expect(whole.get_by_test_id("system-prompt")).to_contain_text("Answer as the workshop.")
        roles = await whole.get_by_test_id("message").evaluate_all("(els) => els.map((e) => e.dataset.role)")
        assert roles == ["user", "assistant", "tool"]
        await expect(whole.get_by_test_id("tool-request")).to_contain_text("Asks for HoursFor with")
        await expect(whole.get_by_test_id("message").last).to_contain_text("hours2")
        await expect(whole.get_by_test_id("response")).to_have_text("AssistantTwo hours.")
        await seen.screenshot("content-genai")
        await whole.scroll_into_view_if_needed()
        await seen.docs_screenshot("inspector-content")

        whole = await choose(page, 6)
        await expect(whole.get_by_test_id("message")).to_have_text("UserIs the chain worn?")
        await expect(whole.get_by_test_id("response")).to_contain_text("Yes, replace it.")
        await expect(whole.get_by_test_id("tool-request")).to_contain_text("Asks for OrderPart with")
        await expect(whole.get_by_test_id("tool-request").get_by_test_id("fields")).to_have_text("partchain")

        await page.get_by_text("Show the transcript").click()
        await expect(page.get_by_test_id("transcript-turn")).to_have_count(0)
        assert seen.elsewhere == [] and seen.problems == []


async def test_the_transcript_reads_as_a_conversation_with_each_tools_fields(client, browser, origin):
    shop = Shop(client)
    await shop.setup(transcript_readers=["Mechanic"])
    task = await shop.estimate()
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.mia)
        await page.get_by_text("Show the transcript").click()
        first = page.get_by_test_id("transcript-turn").first
        await expect(first.get_by_test_id("system-prompt")).to_contain_text("You estimate bicycle repairs.")
        await expect(first.get_by_test_id("tool-request")).to_contain_text("Asks for PartsFor")
        await expect(first.locator(".tool-io").get_by_test_id("fields")).to_have_text("faultrear brake does not bite")
        await first.get_by_role("button", name="Show the raw JSON").click()
        await expect(first.get_by_test_id("raw-json")).to_contain_text('"role": "user"')
        await seen.screenshot("transcript-conversation")
        assert seen.problems == []


async def test_a_manager_sees_no_conversation_and_is_told_why(client, browser, origin):
    shop, task = await worked(client)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.person("sam", "Manager", name="Sam"))
        whole = await choose(page, 5)
        await expect(whole.get_by_test_id("content-reason")).to_have_text("Content not shown to your role.")
        await expect(page.get_by_test_id("conversation")).to_have_count(0)
        await expect(page.get_by_test_id("fields")).to_have_count(0)
        body = await page.inner_text("body")
        for words in ("Answer as the workshop", "Two hours", "HoursFor", "rear brake"):
            assert words not in body
        assert seen.problems == []
