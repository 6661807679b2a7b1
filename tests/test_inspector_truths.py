"""The inspector never says what is not so: what was never recorded reads "not recorded", what the viewer may not
read "not shown to your role", withheld content gives its one reason, money keeps every micro and an unpriced call
says so, and the list shows pieces of work rather than every sub-task. Screenshots for Mia, a supervisor and an
auditor are saved in tests/screenshots/."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.browser import low_contrast, visit
from tests.otlp_spans import agent, export, new_trace_id
from tests.shop import Shop
from tests.test_money_words import WRITTEN

RECORD_LINES = "mutation($input: RecordLinesInput!) { recordLines(input: $input) { lastSeq } }"


@pytest.fixture
def origin(servers) -> str:
    return servers[0].url


async def test_a_field_never_recorded_reads_not_recorded_and_one_withheld_reads_not_shown(client, browser, origin):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start(trigger=None, about=None))["id"]
    await shop.end(task)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.mia)
        await expect(page.get_by_test_id("trigger")).to_have_text("not recorded")
        await expect(page.get_by_test_id("outcome")).to_have_text("not recorded")
        await expect(page.get_by_test_id("requester")).to_have_text("Mia")
        assert "not shown to your role" not in await page.inner_text("main")

        await page.goto(f"{origin}/inspect#token={shop.person('ada', 'Accountant', name='Ada')}")
        await page.goto(f"{origin}/inspect/{task}")
        await expect(page.get_by_test_id("trigger")).to_have_text("not shown to your role")
        await expect(page.get_by_test_id("requester")).to_have_text("not shown to your role")


async def test_a_sub_task_without_a_requester_shows_its_roots_marked_inherited(client, browser, origin):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start(about="Service the bicycle"))["id"]
    child = (await shop.start(parent=root, requester=None, about="Check the brakes"))["id"]
    alone = (await shop.start(requester=None, about="Tidy the workshop"))["id"]
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{child}", shop.noor)
        requester = page.get_by_test_id("requester")
        await expect(requester).to_contain_text("Mia")
        await expect(requester.get_by_test_id("inherited")).to_contain_text("inherited from Estimator · EstimateRepair")
        await expect(requester.get_by_role("link")).to_have_attribute("href", f"/inspect/{root}")

        await page.goto(f"{origin}/inspect/{alone}")
        await expect(page.get_by_test_id("requester")).to_have_text("not recorded")


@pytest.mark.parametrize(("logging", "classification", "reason"), [
    ("METADATA_ONLY", None, "Content never recorded: the agent records figures only."),
    ("FULL", "REDACTED", "Content never recorded: the call was marked redacted."),
])
async def test_withheld_content_gives_its_one_reason(client, browser, origin, logging, classification, reason):
    shop = Shop(client)
    await shop.setup(logging=logging)
    task = (await shop.start())["id"]
    await shop.model_call(task, classification=classification)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.mia)
        await expect(page.get_by_test_id("step").nth(1)).to_contain_text(reason)


async def test_a_supervisor_is_told_why_the_transcript_is_shown_when_step_content_is_not(client, browser, origin):
    shop = Shop(client)
    await shop.setup(transcript_readers=["Manager"])
    task = await shop.estimate()
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.person("sam", "Manager", name="Sam"))
        await expect(page.get_by_test_id("content-reason").first).to_have_text("Content not shown to your role.")
        await page.get_by_text("Show the transcript").click()
        await expect(page.get_by_test_id("transcript-turn")).to_have_count(3)
        await expect(page.get_by_test_id("transcript-why")).to_contain_text(
            "because Estimator lets the role Manager read its transcripts")
        assert await low_contrast(page) == []
        await seen.screenshot("task-supervisor-transcript")


async def test_an_auditor_reads_the_content_and_is_told_the_transcript_is_not_for_them(client, browser, origin):
    shop = Shop(client)
    await shop.setup(transcript_readers=["Manager"])
    task = await shop.estimate()
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.person("ana", "Auditor", name="Ana"))
        await expect(page.get_by_test_id("step-content").first).to_contain_text("rear brake does not bite")
        await expect(page.get_by_test_id("trigger")).to_have_text("Mia asked for an estimate of T-7.")
        await page.get_by_text("Show the transcript").click()
        await expect(page.get_by_test_id("transcript-reason")).to_be_visible()
        assert await low_contrast(page) == []
        await seen.screenshot("task-auditor")


async def test_money_keeps_every_micro_and_an_unpriced_call_says_so(client, browser, origin):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start(limitMicros=None))["id"]
    await shop.model_call(root, costMicros=210)
    await shop.model_call(root, costMicros=None)
    child = (await shop.start(parent=root, limitMicros=None))["id"]
    await shop.model_call(child, costMicros=20)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{root}", shop.mia)
        facts = page.locator(".facts")
        await expect(facts).to_contain_text("own $0.00021")
        await expect(facts.get_by_test_id("cost-all-in")).to_have_text("$0.00023")
        await expect(facts.get_by_test_id("unpriced-calls")).to_have_text("1 call of its own unpriced")
        steps = page.get_by_test_id("step")
        await expect(steps.nth(1)).to_contain_text("$0.00021")
        await expect(steps.nth(2).locator(".unpriced")).to_have_text("unpriced")
        await expect(steps.nth(2)).to_contain_text("it is unpriced.")
        assert not re.search(r"\$0\.0000(?!\d)", await page.inner_text("main"))
        await seen.screenshot("task-money")
        written = await page.evaluate(
            "async (all) => { const { dollars } = await import('/inspect/assets/format.js');"
            " return all.map(([micros]) => [micros, dollars(micros)]); }", WRITTEN)
        assert [tuple(pair) for pair in written] == WRITTEN
        await page.get_by_test_id("tree-node").nth(1).get_by_role("link").click()
        await expect(page.get_by_test_id("step").nth(1)).to_contain_text("$0.00002")


async def test_the_list_shows_pieces_of_work_with_a_switch_for_every_task_and_a_search_box(client, browser, origin):
    """A tree of 2,000 sub-tasks, as an agent framework exports it, leaves the walkthrough's task on the first page."""
    shop = Shop(client)
    await shop.setup()
    estimate = await shop.estimate(about="Ticket T-7")
    trace = new_trace_id()
    fleet = agent(trace, **{"agentlog.requester": "mia", "agentlog.skill": "ServiceFleet"})
    bicycles = [agent(trace, parent=fleet.span_id, **{"agentlog.skill": "CheckBicycle"}) for _ in range(2000)]
    taken = await client.http.post("/v1/traces", content=export(fleet, *bicycles).SerializeToString(), headers={
        "Content-Type": "application/x-protobuf", "Authorization": f"Bearer {shop.kit}"})
    assert taken.status_code == 200, taken.text
    async with visit(browser, origin) as seen:
        page = await seen.open("/inspect", shop.mia)
        rows = page.get_by_test_id("task-row")
        await expect(rows).to_have_count(2)
        await expect(rows.nth(1)).to_contain_text("Ticket T-7")
        await expect(page.locator("caption")).to_contain_text("2 pieces of work")
        await seen.screenshot("list-mia")

        await page.get_by_label("Sub-tasks too").check()
        await page.get_by_role("button", name="Filter").click()
        await expect(page.locator("caption")).to_contain_text("2,002 tasks")
        await expect(rows).to_have_count(50)

        await page.get_by_label("Search", exact=True).fill("Ticket")
        await page.get_by_role("button", name="Search", exact=True).click()
        await expect(rows).to_have_count(1)
        await rows.get_by_role("link").click()
        await page.wait_for_url(f"{origin}/inspect/{estimate}")


async def test_a_sub_task_requester_is_offered_the_sub_tasks_when_no_piece_of_work_is_theirs(client, browser, origin):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start(requester={"id": "noor"}))["id"]
    await shop.start(parent=root, about="Mia's part")
    async with visit(browser, origin) as seen:
        page = await seen.open("/inspect", shop.mia)
        await page.get_by_role("link", name="Show the sub-tasks you may see (1)").click()
        await expect(page.get_by_test_id("task-row")).to_contain_text("Mia's part")


async def test_the_step_box_says_how_many_steps_are_out_of_view(client, browser, origin):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    lines = [{"toolCall": {"tool": "PartsFor", "input": {"wheel": n}}} for n in range(20)]
    await client.ok(RECORD_LINES, {"input": {"task": task, "lines": lines}}, shop.kit)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.mia)
        hidden = page.get_by_test_id("steps-hidden")
        await expect(hidden).to_have_text("Scroll the box for the rest: 16 steps below.")
        await page.locator(".steps-box").evaluate("(box) => { box.scrollTop = box.scrollHeight; }")
        await expect(hidden).to_have_text("Scroll the box for the rest: 15 steps above.")


async def test_status_pills_line_up_at_every_depth_of_the_tree(client, browser, origin):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start(about="Service the bicycle"))["id"]
    brakes = (await shop.start(parent=root, about="Check the brakes"))["id"]
    await shop.end((await shop.start(parent=brakes, about="The rear pads, which are worn down to the metal"))["id"])
    await shop.end((await shop.start(parent=root, about="Gears"))["id"])
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{root}", shop.mia)
        await page.locator(f'[data-task="{brakes}"] .toggle').first.click()
        nodes = page.get_by_test_id("tree-node")
        await expect(nodes).to_have_count(4)
        await expect(page.get_by_test_id("cost-all-in")).to_have_count(5)
        pills = page.locator(".node-row .status")
        boxes = [await pills.nth(i).bounding_box() for i in range(4)]
        for edge in ("x", "width"):
            assert max(b[edge] for b in boxes) - min(b[edge] for b in boxes) < 1, boxes
        await seen.screenshot("tree-pills")


async def test_what_the_viewer_types_in_the_filters_stays_while_the_list_is_drawn_again(client, browser, origin):
    """The list is drawn again every second, for the running times."""
    shop = Shop(client)
    await shop.setup()
    await shop.estimate(about="Ticket T-7")
    async with visit(browser, origin) as seen:
        page = await seen.open("/inspect", shop.mia)
        await expect(page.get_by_test_id("task-row")).to_have_count(1)
        await page.get_by_label("Search", exact=True).fill("Ticket")
        await page.get_by_label("Sub-tasks too").check()
        await page.wait_for_timeout(2500)
        await expect(page.get_by_label("Search", exact=True)).to_have_value("Ticket")
        await expect(page.get_by_label("Sub-tasks too")).to_be_checked()
