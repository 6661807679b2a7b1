"""The inspector in a real browser: each person in the shop sees what they may read, and says why the rest is
missing; the record's badge turns red at the line changed behind the server's back; GraphiQL works offline."""

from __future__ import annotations

from datetime import timedelta

import pytest
from playwright.async_api import expect

from models import AgentTask, TraceEvent
from permissions.tokens import issue_token
from tests.browser import low_contrast, visit
from tests.shop import Shop


@pytest.fixture
def origin(servers) -> str:
    return servers[0].url


async def estimated(client, transcript_readers: list[str] | None = None) -> tuple[Shop, str]:
    shop = Shop(client)
    await shop.setup(transcript_readers=transcript_readers)
    return shop, await shop.estimate()


async def steps_of(page) -> list[str]:
    await expect(page.get_by_test_id("step").first).to_be_visible()
    return await page.get_by_test_id("step").all_inner_texts()


async def test_the_requester_reads_the_list_the_steps_with_content_and_the_transcript(client, browser, origin):
    shop, task = await estimated(client, transcript_readers=["Mechanic"])
    async with visit(browser, origin) as seen:
        page = await seen.open("/inspect", shop.mia)
        await expect(page.get_by_test_id("task-row")).to_have_count(1)
        await expect(page.get_by_test_id("task-row")).to_contain_text("Ticket T-7")
        assert await low_contrast(page) == []
        await seen.screenshot("inspect")
        started = page.get_by_test_id("task-row").locator("time")
        assert (await started.get_attribute("title")).endswith(" UTC")

        await page.get_by_label("Status").select_option("FAILED")
        await page.get_by_role("button", name="Filter").click()
        await page.wait_for_url(f"{origin}/inspect?**status=FAILED**")
        await expect(page.get_by_text("No tasks you may see match these filters.")).to_be_visible()
        await page.get_by_label("Status").select_option("DONE")
        await page.get_by_role("button", name="Filter").click()
        await expect(page.get_by_test_id("task-row")).to_have_count(1)

        await page.get_by_role("link", name="Estimator · EstimateRepair").click()
        await page.wait_for_url(f"{origin}/inspect/{task}")
        steps = await steps_of(page)
        assert len(steps) == 9 and "asked for a tool" in steps[1]
        await expect(page.get_by_test_id("step-content").first).to_contain_text("rear brake does not bite")
        await expect(page.get_by_test_id("content-reason")).to_have_count(0)
        await expect(page.get_by_test_id("verify-badge")).to_contain_text("Record intact: 9 lines checked")
        all_in = page.get_by_test_id("cost-all-in").first
        await expect(all_in).to_have_text("$0.0006")
        await expect(all_in).to_have_attribute("title", "600 micros")
        await expect(page.get_by_test_id("tree-node")).to_have_count(0)
        await expect(page.get_by_test_id("no-sub-tasks")).to_be_visible()
        await expect(page.get_by_test_id("trigger")).to_have_text("Mia asked for an estimate of T-7.")
        await expect(page.get_by_test_id("steps-hidden")).to_have_count(0)
        await seen.docs_screenshot("inspector")

        await page.get_by_text("Show the transcript").click()
        await expect(page.get_by_test_id("transcript-turn")).to_have_count(3)
        await expect(page.get_by_test_id("transcript-turn").first).to_contain_text("You estimate bicycle repairs.")
        await expect(page.get_by_test_id("transcript-why")).to_contain_text("Estimator lets the role Mechanic read its transcripts")
        assert await low_contrast(page) == []
        await seen.screenshot("task-requester")
        assert seen.elsewhere == [] and seen.problems == []


async def test_a_supervisor_reads_the_sentences_and_is_told_the_content_is_not_for_their_role(client, browser, origin):
    shop, task = await estimated(client)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.person("sam", "Manager", name="Sam"))
        steps = await steps_of(page)
        assert "asked for a tool" in steps[1]
        await expect(page.get_by_test_id("step-content")).to_have_count(0)
        await expect(page.get_by_test_id("content-reason").first).to_have_text("Content not shown to your role.")
        assert "rear brake" not in await page.inner_text("body")

        await page.get_by_text("Show the transcript").click()
        await expect(page.get_by_test_id("transcript-reason")).to_be_visible()
        await expect(page.get_by_test_id("transcript-turn")).to_have_count(0)
        await seen.screenshot("task-supervisor")


async def test_a_figures_only_reader_sees_no_words(client, browser, origin):
    shop, task = await estimated(client)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.person("ada", "Accountant", name="Ada"))
        steps = await steps_of(page)
        assert len(steps) == 9 and all("Sentence not shown to your role." in s for s in steps)
        await expect(page.get_by_test_id("step-content")).to_have_count(0)
        await expect(page.get_by_test_id("cost-all-in").first).to_have_text("$0.0006")
        body = await page.inner_text("body")
        for words in ("T-7", "brake", "Mia asked", "Estimated one hour", "PartsFor was"):
            assert words not in body
        await seen.screenshot("task-figures-only")


async def test_a_token_of_another_tenant_sees_nothing(client, browser, origin):
    shop, task = await estimated(client)
    stranger = Shop(client).person("mia", "Mechanic", "Manager", "Auditor", name="Mia")
    async with visit(browser, origin) as seen:
        page = await seen.open("/inspect", stranger)
        await expect(page.get_by_text("No tasks you may see.")).to_be_visible()
        await expect(page.get_by_test_id("task-row")).to_have_count(0)

        await page.goto(f"{origin}/inspect/{task}")
        await expect(page.get_by_test_id("no-task")).to_be_visible()
        await expect(page.get_by_test_id("step")).to_have_count(0)
        await expect(page.get_by_test_id("verify-badge")).to_have_count(0)
        assert "T-7" not in await page.inner_text("body")


async def test_an_erased_line_shows_as_erased(client, browser, origin):
    shop, task = await estimated(client)
    erased = await client.ok(
        "mutation($id: ID!) { eraseAgentWorkContent(task: $id, why: \"Mia asked.\") }", {"id": task},
        shop.person("priya", "Privacy", name="Priya"),
    )
    assert erased["eraseAgentWorkContent"] == 9
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.mia)
        steps = await steps_of(page)
        assert len(steps) == 10 and "Erasure" in steps[9]
        await expect(page.get_by_test_id("step-content")).to_have_count(0)
        reasons = await page.get_by_test_id("content-reason").all_inner_texts()
        assert len(reasons) == 9 and all(r.startswith("Content erased on ") for r in reasons)
        await expect(page.get_by_test_id("verify-badge")).to_contain_text("intact: 10 lines checked, 9 erased")


async def test_a_tampered_chain_turns_the_badge_red_and_links_to_the_line(client, browser, origin):
    shop, task = await estimated(client)
    root = (await AgentTask.get(id=task)).root_id
    await TraceEvent.filter(root_id=root, seq=4).update(summary="PartsFor was never asked for.")
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.noor)
        badge = page.get_by_test_id("verify-badge")
        await expect(badge).to_contain_text("Record broken at line 4")
        assert "broken" in (await badge.get_attribute("class"))
        await badge.click()
        line = page.locator("#line-4")
        await expect(line).to_be_focused()
        await expect(line).to_have_class("step broken chosen")
        await expect(page.get_by_test_id("step").and_(page.locator(".broken"))).to_have_count(1)
        assert await low_contrast(page) == []
        await seen.screenshot("task-tampered")


async def test_the_tree_is_walked_with_the_keyboard(client, browser, origin):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start(about="Service the bicycle"))["id"]
    first = (await shop.start(parent=root, about="Check the brakes"))["id"]
    second = (await shop.start(parent=root, about="Check the gears"))["id"]
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{root}", shop.mia)
        nodes = page.get_by_test_id("tree-node")
        await expect(nodes).to_have_count(3)
        await nodes.first.focus()
        await page.keyboard.press("ArrowDown")
        await expect(page.locator(f'[data-task="{first}"]')).to_be_focused()
        await page.keyboard.press("ArrowDown")
        await expect(page.locator(f'[data-task="{second}"]')).to_be_focused()
        await page.keyboard.press("ArrowLeft")
        await expect(nodes.first).to_be_focused()
        await page.keyboard.press("ArrowLeft")
        await expect(nodes).to_have_count(1)
        await expect(nodes.first).to_have_attribute("aria-expanded", "false")
        await page.keyboard.press("ArrowRight")
        await expect(nodes).to_have_count(3)
        await page.keyboard.press("End")
        await page.keyboard.press("Enter")
        await page.wait_for_url(f"{origin}/inspect/{second}")
        await expect(page.get_by_test_id("no-sub-tasks")).to_be_visible()
        await expect(page.get_by_test_id("tree-node")).to_have_count(0)


async def test_no_token_and_an_expired_token_are_said_plainly(client, browser, origin):
    shop, _ = await estimated(client)
    expired = issue_token("mia", shop.tenant, roles=["Mechanic"], ttl=timedelta(seconds=-60))
    async with visit(browser, origin) as seen:
        page = await seen.open("/inspect")
        await expect(page.get_by_test_id("sign-in-problem")).to_have_text("Not signed in.")
        await expect(page.locator("main")).to_contain_text("agentlog token --sub YOU --tenant TENANT --roles ROLE")
        await page.goto(f"{origin}/inspect#token={expired}")
        await page.reload()
        await expect(page.get_by_test_id("sign-in-problem")).to_contain_text("Token expired")
        await expect(page.get_by_test_id("task-row")).to_have_count(0)

        await page.get_by_label("Your token").fill(shop.mia)
        await page.get_by_role("button", name="Sign in").click()
        await expect(page.get_by_test_id("task-row")).to_have_count(1)


async def test_graphiql_renders_and_runs_a_query_with_no_other_host(client, browser, origin):
    shop, _ = await estimated(client)
    async with visit(browser, origin) as seen:
        page = await seen.open("/graphql", shop.mia)
        await expect(page.locator(".graphiql-container")).to_be_visible()
        await expect(page.locator("#who")).to_contain_text("signed in as Mia")
        await page.locator(".graphiql-execute-button").click()
        await expect(page.locator(".graphiql-response")).to_contain_text('"tenant": "' + shop.tenant + '"')
        await seen.screenshot("graphiql")
        assert seen.elsewhere == [] and seen.problems == []


async def test_a_wide_tree_shows_its_children_a_page_at_a_time(client, browser, origin):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start(about="Service the fleet"))["id"]
    children = [(await shop.start(parent=root, about=f"Bicycle {n + 1}"))["id"] for n in range(55)]
    await shop.start(parent=children[0], about="Its wheels")
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{root}", shop.mia)
        nodes = page.get_by_test_id("tree-node")
        await expect(nodes).to_have_count(51)
        await expect(page.locator(f'[data-task="{children[0]}"]')).to_have_attribute("aria-expanded", "false")
        assert await page.locator(f'[data-task="{children[1]}"]').get_attribute("aria-expanded") is None
        await page.get_by_role("button", name="Show 5 more (50 of 55 shown)").click()
        await expect(nodes).to_have_count(56)
        await expect(nodes.last).to_contain_text("Bicycle 55")


async def test_a_long_record_is_read_a_page_at_a_time_and_keeps_only_the_rows_in_view_in_the_page(client, browser, origin):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    lines = [{"toolCall": {"tool": "PartsFor", "input": {"wheel": n}}} for n in range(300)]
    await client.ok("mutation($input: RecordLinesInput!) { recordLines(input: $input) { lastSeq } }",
                    {"input": {"task": task, "lines": lines}}, shop.kit)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.mia)
        await expect(page.get_by_role("heading", name="Steps (100 read so far)")).to_be_visible()
        steps = page.get_by_test_id("step")
        assert 5 < await steps.count() < 40
        await steps.first.click()
        await page.keyboard.press("PageDown")
        await expect(page.locator("#line-11")).to_be_focused()
        await page.keyboard.press("End")
        await expect(page.locator("#line-301")).to_be_focused()
        await expect(page.get_by_role("heading", name="Steps (301)")).to_be_visible()
        await expect(page.locator("#line-301")).to_contain_text("wheel: 299")
        assert 5 < await steps.count() < 40
        await expect(page.locator("#line-1")).to_have_count(0)


async def test_scrolling_the_steps_reads_the_next_page(client, browser, origin):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    lines = [{"toolCall": {"tool": "PartsFor", "input": {"wheel": n}}} for n in range(150)]
    await client.ok("mutation($input: RecordLinesInput!) { recordLines(input: $input) { lastSeq } }",
                    {"input": {"task": task, "lines": lines}}, shop.kit)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{task}", shop.mia)
        await expect(page.get_by_role("heading", name="Steps (100 read so far)")).to_be_visible()
        await expect(page.locator("#line-101")).to_have_count(0)
        await page.locator(".steps-box").evaluate("(box) => { box.scrollTop = box.scrollHeight; }")
        await expect(page.get_by_role("heading", name="Steps (151)")).to_be_visible()
        await page.locator(".steps-box").evaluate("(box) => { box.scrollTop = box.scrollHeight; }")
        await expect(page.locator("#line-151")).to_contain_text("wheel: 149")


async def test_the_list_is_searched_counted_and_ordered(client, browser, origin):
    shop = Shop(client)
    await shop.setup()
    for about in ("Fit a new chain", "True the rear wheel", "Replace the brake pads"):
        await shop.end((await shop.start(about=about))["id"])
    async with visit(browser, origin) as seen:
        page = await seen.open("/inspect", shop.mia)
        rows = page.get_by_test_id("task-row")
        await expect(rows).to_have_count(3)
        await expect(page.locator("caption")).to_contain_text("3 pieces of work, newest first")
        await expect(rows.first).to_contain_text("Replace the brake pads")

        await page.get_by_label("Order").select_option("STARTED_AT_ASC")
        await page.get_by_role("button", name="Filter").click()
        await page.wait_for_url(f"{origin}/inspect?**order=STARTED_AT_ASC**")
        await expect(page.locator("caption")).to_contain_text("3 pieces of work, oldest first")
        await expect(rows.first).to_contain_text("Fit a new chain")

        await page.get_by_label("Search", exact=True).fill("wheel")
        await page.get_by_role("button", name="Search", exact=True).click()
        await page.wait_for_url(f"{origin}/inspect?search=wheel**")
        await expect(rows).to_have_count(1)
        await expect(rows.first).to_contain_text("True the rear wheel")
        await expect(page.locator("caption")).to_contain_text("1 piece of work, oldest first")

    async with visit(browser, origin) as seen:
        page = await seen.open("/inspect?search=wheel", shop.person("ada", "Accountant", name="Ada"))
        await expect(page.get_by_text("No tasks you may see match these filters.")).to_be_visible()


async def test_a_broken_line_of_a_sub_task_is_reached_from_the_root(client, browser, origin):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start(about="Service the bicycle"))["id"]
    child = await shop.estimate(parent=root, about="Check the brakes")
    await TraceEvent.filter(root_id=root, seq=5).update(cost_micros=1)
    async with visit(browser, origin) as seen:
        page = await seen.open(f"/inspect/{root}", shop.noor)
        await expect(page.get_by_test_id("step")).to_have_count(1)
        await page.get_by_test_id("verify-badge").click()
        await expect(page.get_by_role("heading", name="Steps of the whole tree (10)")).to_be_visible()
        line = page.locator("#line-5")
        await expect(line).to_be_focused()
        await expect(line).to_contain_text("broken here")
        await expect(line.get_by_role("link", name="Estimator · EstimateRepair")).to_have_attribute("href", f"/inspect/{child}")
