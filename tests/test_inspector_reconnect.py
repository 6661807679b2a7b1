"""The inspector's live pages when the server they talk to goes away and comes back: each says it is
reconnecting, finds the server again on its own, and shows what happened meanwhile (the end of the task it
watched, the work started while it was away), with no reload."""

from __future__ import annotations

from playwright.async_api import expect

from tests.browser import visit
from tests.pg_cluster import free_port
from tests.servers import start_server
from tests.shop import Shop

RECONNECTING = "Not live: the connection to the server was lost. Reconnecting…"
BACK_MS = 60_000


async def test_the_pages_say_they_are_reconnecting_and_show_what_happened_while_the_server_was_away(
        client, browser, database):
    shop = Shop(client)
    await shop.setup()
    watched = (await shop.start(about="Ticket T-7"))["id"]
    port = free_port()
    server = start_server(database, port=port)
    try:
        async with visit(browser, server.url) as seen:
            task_page = await seen.open(f"/inspect/{watched}", shop.noor)
            await expect(task_page.get_by_test_id("live-state")).to_have_text("live")
            await expect(task_page.get_by_test_id("bar")).to_have_count(1)
            list_page = await task_page.context.new_page()
            await list_page.goto(f"{server.url}/inspect#token={shop.noor}")
            await expect(list_page.get_by_test_id("live-state")).to_have_text("live")
            await expect(list_page.get_by_test_id("running-task")).to_have_count(1)
            for page in (task_page, list_page):
                await page.evaluate("window.stillThisPage = true")

            server.stop()
            for page in (task_page, list_page):
                await expect(page.get_by_test_id("live-state")).to_have_text(RECONNECTING)
            await shop.model_call(watched)
            await shop.end(watched)
            started = (await shop.start(about="Ticket T-8"))["id"]
            await task_page.wait_for_timeout(2500)
            await expect(task_page.locator(".facts .status")).to_have_text("running")
            await task_page.bring_to_front()
            await seen.screenshot("reconnecting-task-page")

            server = start_server(database, port=port)
            await expect(task_page.locator(".facts .status")).to_have_text("done", timeout=BACK_MS)
            await expect(task_page.get_by_test_id("verify-badge")).to_have_text("✓ Record intact: 3 lines checked")
            await expect(task_page.get_by_test_id("bar")).to_have_count(2)
            await expect(task_page.get_by_test_id("step")).to_have_count(3)
            await expect(task_page.get_by_role("alert")).to_have_count(0)
            await expect(list_page.get_by_test_id("live-state")).to_have_text("live", timeout=BACK_MS)
            running = list_page.get_by_test_id("running-task")
            await expect(running).to_have_count(1)
            await expect(running.get_by_role("link").first).to_have_attribute("href", f"/inspect/{started}")
            for page in (task_page, list_page):
                assert await page.evaluate("window.stillThisPage") is True
            await task_page.bring_to_front()
            await seen.screenshot("reconnected-task-page")
            assert seen.elsewhere == []
            assert [p for p in seen.problems if "WebSocket" not in p and "Failed to load resource" not in p] == []
    finally:
        server.stop()
