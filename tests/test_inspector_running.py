"""The inspector's "Running now" in a real browser: work the kit is writing, and work sent over OpenTelemetry
(opened by a start marker, or waiting as provisional spans), listed with what it has spent so far while the page
stays open; when it ends, the page shows its end from the subscription, with no reload."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta

import httpx
from playwright.async_api import expect

from agentlog_kit import Kit
from permissions.tokens import issue_token
from tests.browser import low_contrast, visit
from tests.frameworks import Workshop
from tests.otlp_spans import agent, chat, export, marker, new_span_id, new_trace_id
from tests.shop import Shop

PROTOBUF = {"Content-Type": "application/x-protobuf"}


def send(workshop: Workshop | tuple[str, str], *spans) -> None:
    url, kit = (workshop.server.url, workshop.kit) if isinstance(workshop, Workshop) else workshop
    response = httpx.post(f"{url}/v1/traces", content=export(*spans).SerializeToString(),
                          headers={**PROTOBUF, "Authorization": f"Bearer {kit}"}, timeout=60)
    assert response.status_code == 200, response.text


async def not_reloaded(page) -> None:
    """The page is the one opened: a mark set on its window after loading is still there."""
    assert await page.evaluate("window.stillThisPage") is True


async def test_kit_work_is_listed_running_with_its_spend_and_shows_its_end_without_a_reload(client, browser, servers):
    origin = servers[0].url
    shop = Shop(client)
    await shop.setup()
    async with visit(browser, origin) as seen:
        page = await seen.open("/inspect", shop.noor)
        await expect(page.get_by_test_id("nothing-running")).to_be_visible()
        await expect(page.get_by_test_id("live-state")).to_have_text("live")
        await page.evaluate("window.stillThisPage = true")
        with Kit(origin, shop.kit, batch_lines=1) as kit:
            with kit.task("Estimator", "EstimateRepair", requester={"id": "mia", "name": "Mia"},
                          about="Ticket T-7") as t:
                row = page.get_by_test_id("running-task")
                await expect(row).to_have_count(1)
                await expect(row).to_contain_text("Estimator · EstimateRepair")
                await expect(row).to_contain_text("Ticket T-7")
                await expect(row.locator(".status")).to_have_text("running")
                await expect(row.get_by_test_id("running-took")).to_contain_text("running for")
                t.model_call("Everyday", input_tokens=120, output_tokens=30, cost_micros=300)
                t.model_call("Everyday", input_tokens=80, output_tokens=20, cost_micros=200)
                await expect(row.get_by_test_id("running-spent")).to_contain_text("$0.0005 all in")
                await expect(row.get_by_test_id("running-spent")).to_contain_text("2 model calls, 0 tool calls")
                await expect(row.get_by_test_id("running-spent")).to_contain_text("200 tokens in, 50 out")
                await expect(page.get_by_test_id("task-row").locator(".status")).to_have_text("running")
                assert await low_contrast(page) == []
                await seen.screenshot("running-now-kit")

        await expect(row.locator(".status")).to_have_text("done")
        await expect(row.get_by_test_id("running-took")).to_contain_text("ended")
        await expect(page.get_by_test_id("running-now").locator("caption")).to_contain_text(
            "Nothing is running now; 1 task ended while you watched")
        await expect(page.get_by_test_id("task-row").locator(".status")).to_have_text("done")
        await not_reloaded(page)
        assert await low_contrast(page) == []
        await seen.screenshot("running-now-kit-ended")
        assert seen.elsewhere == [] and seen.problems == []


async def test_otlp_work_is_running_from_its_marker_and_waiting_spans_are_provisional_until_placed(browser, servers):
    workshop = Workshop(servers[0])
    marked, unmarked = new_trace_id(), new_trace_id()
    estimator = agent(marked, "Estimator")
    stockist = agent(unmarked, "Stockist")
    async with visit(browser, workshop.server.url) as seen:
        page = await seen.open("/inspect", workshop.noor)
        await expect(page.get_by_test_id("live-state")).to_have_text("live")
        await page.evaluate("window.stillThisPage = true")

        send(workshop, marker(estimator))
        row = page.get_by_test_id("running-task")
        await expect(row).to_contain_text("Estimator · Estimator")
        await expect(row.locator(".status")).to_have_text("running")
        send(workshop, chat(marked, estimator.span_id, "Everyday"))
        await expect(row.get_by_test_id("running-spent")).to_contain_text("1 model call, 0 tool calls")

        send(workshop, chat(unmarked, stockist.span_id, "Quick"), chat(unmarked, stockist.span_id, "Quick"))
        waiting = page.get_by_test_id("running-trace")
        await expect(waiting).to_have_count(1)
        await expect(waiting).to_contain_text("agent not yet known")
        await expect(waiting).to_contain_text("not yet in the record")
        await expect(waiting.get_by_test_id("trace-spent")).to_contain_text(
            "2 spans waiting: 2 model calls, 0 tool calls, 240 tokens in, 60 out")
        assert await low_contrast(page) == []
        await seen.screenshot("running-now-otlp")
        await seen.docs_screenshot("inspector-running")

        send(workshop, estimator)
        await expect(row.first.locator(".status")).to_have_text("done")
        send(workshop, stockist)
        await expect(waiting).to_have_count(0)
        await expect(page.get_by_test_id("running-now").locator("caption")).to_have_text(
            "Nothing is running now; 2 tasks ended while you watched")
        await expect(page.get_by_test_id("running-task").filter(has_text="Stockist · Stockist")
                     .locator(".status")).to_have_text("done")
        await not_reloaded(page)
        await seen.screenshot("running-now-otlp-ended")
        assert seen.elsewhere == [] and seen.problems == []


async def test_a_requester_sees_her_running_work_and_no_waiting_spans(client, browser, servers):
    """runningTraces is for the tenant's supervisors, auditors and those who read all work: Mia sees her running
    task, and no provisional trace of the kit's."""
    origin = servers[0].url
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    send((origin, shop.kit), chat(new_trace_id(), new_span_id(), "Quick"))
    async with visit(browser, origin) as seen:
        page = await seen.open("/inspect", shop.mia)
        await expect(page.get_by_test_id("running-task")).to_have_count(1)
        await expect(page.get_by_test_id("running-task").get_by_role("link").first).to_have_attribute(
            "href", f"/inspect/{task}")
        await expect(page.get_by_test_id("live-state")).to_have_text("live")
        await expect(page.get_by_test_id("running-trace")).to_have_count(0)
        await page.goto("about:blank")
        page = await seen.open("/inspect", shop.noor)
        await expect(page.get_by_test_id("running-trace")).to_have_count(1)
        assert seen.elsewhere == [] and seen.problems == []


async def test_the_page_says_it_is_no_longer_live_once_the_token_expires(client, browser, servers):
    origin = servers[0].url
    shop = Shop(client)
    await shop.setup()
    short = issue_token("noor", shop.tenant, roles=["Manager", "Auditor"], name="Noor", ttl=timedelta(seconds=4))
    async with visit(browser, origin) as seen:
        page = await seen.open("/inspect", short)
        await expect(page.get_by_test_id("live-state")).to_have_text("live")
        await asyncio.sleep(5)
        with Kit(origin, shop.kit) as kit, kit.task("Estimator", "EstimateRepair", about="Ticket T-8"):
            pass
        await expect(page.get_by_test_id("live-state")).to_have_text(
            "Not live: your token expired. Reload with a fresh token.")
        await expect(page.get_by_test_id("nothing-running")).to_have_count(0)
        await seen.screenshot("running-now-expired")


async def test_a_running_tasks_page_shows_new_steps_and_its_end_without_a_reload(client, browser, servers):
    origin = servers[0].url
    shop = Shop(client)
    await shop.setup()
    async with visit(browser, origin) as seen:
        with Kit(origin, shop.kit, batch_lines=1) as kit:
            with kit.task("Estimator", "EstimateRepair", requester={"id": "mia", "name": "Mia"},
                          about="Ticket T-7") as t:
                page = await seen.open(f"/inspect/{t.id}", shop.noor)
                steps = page.get_by_test_id("step")
                await expect(steps).to_have_count(1)
                await expect(page.locator(".facts .status")).to_have_text("running")
                await page.evaluate("window.stillThisPage = true")
                t.model_call("Everyday", input_tokens=120, output_tokens=30, cost_micros=300)
                await expect(steps).to_have_count(2)
                await expect(steps.nth(1)).to_contain_text("Everyday")
                await seen.screenshot("running-task-page")
        await expect(page.locator(".facts .status")).to_have_text("done")
        await expect(steps).to_have_count(3)
        await expect(page.get_by_test_id("verify-badge")).to_contain_text("3 lines checked")
        await expect(page.get_by_role("button", name="Stop this work")).to_have_count(0)
        took = await page.locator(".facts dt:text-is('Took') + dd").inner_text()
        await expect(page.get_by_test_id("waterfall")).to_contain_text(f"2 bars over {took}")
        await not_reloaded(page)
        await seen.screenshot("running-task-page-ended")
        assert seen.elsewhere == [] and seen.problems == []


CHECKS = """() => { window.checks = []; const sent = window.fetch;
  window.fetch = (url, init) => {
    if (init && String(init.body).includes("verifyTrace")) window.checks.push(performance.now());
    return sent(url, init);
  }; }"""


async def test_a_running_tasks_waterfall_and_badge_grow_as_its_lines_arrive(client, browser, servers):
    """Each line written adds its bar with no reload, and the badge says the chain so far is intact, checked again
    as lines arrive but never twice within a second; at the end the badge tells the whole chain."""
    origin = servers[0].url
    shop = Shop(client)
    await shop.setup()
    async with visit(browser, origin) as seen:
        with Kit(origin, shop.kit, batch_lines=1) as kit:
            with kit.task("Estimator", "EstimateRepair", requester={"id": "mia", "name": "Mia"},
                          about="Ticket T-9") as t:
                await seen.page.add_init_script(f"({CHECKS})()")
                page = await seen.open(f"/inspect/{t.id}", shop.noor)
                bars = page.get_by_test_id("bar")
                badge = page.get_by_test_id("verify-badge")
                await expect(bars).to_have_count(1)
                await expect(badge).to_have_text("✓ Record intact so far: 1 line checked")
                await page.evaluate("window.stillThisPage = true")

                t.model_call("Everyday", input_tokens=120, output_tokens=30, cost_micros=300, duration_ms=40)
                await expect(bars).to_have_count(2)
                await expect(bars.nth(1)).to_have_attribute(
                    "title", "Model call · Everyday · 40 ms · 120 tokens in, 30 out · $0.0003")
                await expect(badge).to_have_text("✓ Record intact so far: 2 lines checked")
                call = t.tool_call("PartsFor", tool_call_id="c1", input={"fault": "brake"})
                await expect(bars).to_have_count(3)
                await expect(bars.nth(2)).to_have_attribute("title", re.compile("no result recorded"))
                call.result(["pads"])
                await expect(bars.nth(2)).not_to_have_attribute("title", re.compile("no result recorded"))
                await expect(badge).to_have_text("✓ Record intact so far: 4 lines checked")
                await expect(page.get_by_test_id("step")).to_have_count(4)
                await page.get_by_test_id("waterfall").scroll_into_view_if_needed()
                await seen.screenshot("running-task-waterfall")
                checks = await page.evaluate("window.checks")
        await expect(badge).to_have_text("✓ Record intact: 5 lines checked")
        await expect(bars).to_have_count(3)
        await not_reloaded(page)
        assert len(checks) >= 3
        assert min(b - a for a, b in zip(checks, checks[1:])) >= 990
        await seen.screenshot("running-task-waterfall-ended")
        assert seen.elsewhere == [] and seen.problems == []
