"""A frontend pages through a big tree: record, trace, children, subtree and calls, with the counts to page against."""

from __future__ import annotations

import httpx
import pytest

from tests.shop import Client, Shop
from tests.test_statement_counts import counted, grow


@pytest.fixture(scope="module")
async def shop(app) -> Shop:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agentlog.test") as http:
        shop = Shop(Client(http))
        await shop.setup()
        yield shop


@pytest.fixture(scope="module")
async def tree(shop) -> dict:
    """A root with seven children; the third has two of its own; the root makes five model calls."""
    root = (await shop.start())["id"]
    kids = [(await shop.start(parent=root, about=f"Part {n}"))["id"] for n in range(7)]
    grandkids = [(await shop.start(parent=kids[2]))["id"] for _ in range(2)]
    for _ in range(5):
        await shop.model_call(root)
    return {"root": root, "kids": kids, "grandkids": grandkids}


async def read(shop: Shop, task: str, fields: str, token: str | None = None) -> dict:
    return await shop.read(task, token or shop.noor, fields)


async def refused(shop: Shop, task: str, fields: str, token: str | None = None) -> dict:
    return await shop.client.error(f"query($id: ID!) {{ task(id: $id) {{ {fields} }} }}", {"id": task}, token or shop.noor)


async def test_the_record_read_page_by_page_is_the_whole_record(shop, tree):
    whole = (await read(shop, tree["root"], "chainLength record { seq hash task { id } }"))
    pages, after = [], 0
    while True:
        page = (await read(shop, tree["root"], f"record(first: 4, after: {after}) {{ seq hash task {{ id }} }}"))["record"]
        if not page:
            break
        pages.append(page)
        after = page[-1]["seq"]

    assert [line for page in pages for line in page] == whole["record"]
    assert [len(page) for page in pages] == [4] * (whole["chainLength"] // 4) + ([whole["chainLength"] % 4] if whole["chainLength"] % 4 else [])


async def test_a_task_s_own_lines_page_by_seq(shop, tree):
    everything = (await read(shop, tree["root"], "trace { seq kind }"))["trace"]
    first = (await read(shop, tree["root"], "trace(first: 2) { seq kind }"))["trace"]
    rest = (await read(shop, tree["root"], f"trace(after: {first[-1]['seq']}) {{ seq kind }}"))["trace"]

    assert first + rest == everything
    assert [line["kind"] for line in first] == ["STARTED", "MODEL_CALL"]


async def test_children_page_after_a_child_and_are_counted(shop, tree):
    first = (await read(shop, tree["root"], "childCount subtreeCount children(first: 3) { id childCount }"))
    rest = (await read(shop, tree["root"], f'children(first: 10, after: "{first["children"][-1]["id"]}") {{ id }}'))

    assert [c["id"] for c in first["children"]] == tree["kids"][:3]
    assert [c["id"] for c in rest["children"]] == tree["kids"][3:]
    assert (first["childCount"], first["subtreeCount"]) == (7, 9)
    assert [c["childCount"] for c in first["children"]] == [0, 0, 2]


async def test_the_subtree_pages_in_its_depth_first_order(shop, tree):
    whole = [t["id"] for t in (await read(shop, tree["root"], "subtree { id }"))["subtree"]]
    first = [t["id"] for t in (await read(shop, tree["root"], "subtree(first: 4) { id }"))["subtree"]]
    rest = [t["id"] for t in (await read(shop, tree["root"], f'subtree(after: "{first[-1]}") {{ id }}'))["subtree"]]

    assert whole == [*tree["kids"][:3], *tree["grandkids"], *tree["kids"][3:]]
    assert first + rest == whole


async def test_meter_rows_page_oldest_first(shop, tree):
    whole = [c["id"] for c in (await read(shop, tree["root"], "calls { id }"))["calls"]]
    first = [c["id"] for c in (await read(shop, tree["root"], "calls(first: 2) { id }"))["calls"]]
    rest = [c["id"] for c in (await read(shop, tree["root"], f'calls(first: 10, after: "{first[-1]}") {{ id }}'))["calls"]]

    assert len(whole) == 5
    assert first + rest == whole


@pytest.mark.parametrize("field", ["record", "trace", "children", "subtree", "calls"])
async def test_past_the_row_cap_a_list_without_first_is_refused_naming_the_field(shop, tree, configure, field):
    configure(max_list_rows=2)

    error = await refused(shop, tree["root"], f"{field} {{ __typename }}")
    paged = await read(shop, tree["root"], f"{field}(first: 2) {{ __typename }}")

    assert (error["extensions"]["code"], error["extensions"]["field"]) == ("BAD_INPUT", "first")
    assert error["message"].startswith(f"{field}:") and "first" in error["message"]
    assert len(paged[field]) == 2


async def test_a_level_read_without_first_is_whole_up_to_the_cap_on_each_task_and_refused_past_it(shop, configure):
    parent = (await shop.start())["id"]
    kids = [(await shop.start(parent=parent))["id"] for _ in range(2)]
    for kid in [*kids, kids[0]]:
        await shop.model_call(kid)
    paged = [(await read(shop, kid, "trace(first: 10) { seq kind }"))["trace"] for kid in kids]
    configure(max_list_rows=3)

    level = await read(shop, parent, "children { id trace { seq kind } }")
    configure(max_list_rows=2)
    error = await refused(shop, parent, "children { trace { seq } }")

    assert [len(lines) for lines in paged] == [3, 2]
    assert [(child["id"], child["trace"]) for child in level["children"]] == list(zip(kids, paged))
    assert error["extensions"]["code"] == "BAD_INPUT" and error["message"].startswith("trace:")


@pytest.mark.parametrize("field", ["record", "trace", "children", "subtree", "calls"])
@pytest.mark.parametrize("first", [0, -1, 5001])
async def test_first_is_1_to_5000_below_a_task(shop, tree, field, first):
    error = await refused(shop, tree["root"], f"{field}(first: {first}) {{ __typename }}")

    assert (error["extensions"]["code"], error["extensions"]["field"]) == ("BAD_INPUT", "first")
    assert error["message"].startswith(f"{field}:")


@pytest.mark.parametrize("field", ["record", "trace"])
async def test_a_seq_cursor_below_zero_is_refused(shop, tree, field):
    error = await refused(shop, tree["root"], f"{field}(after: -1) {{ seq }}")

    assert error["extensions"]["code"] == "BAD_INPUT"


async def test_an_id_cursor_from_elsewhere_is_refused_whoever_it_belongs_to(app, shop, tree):
    other = Shop(shop.client)
    await other.setup()
    theirs = (await other.start())["id"]
    their_kid = (await other.start(parent=theirs))["id"]
    root, kid, grandkid = tree["root"], tree["kids"][0], tree["grandkids"][0]
    own_call = (await read(shop, root, "calls(first: 1) { id }"))["calls"][0]["id"]

    cases = [
        f'children(after: "{grandkid}") {{ id }}',
        f'children(after: "{their_kid}") {{ id }}',
        'children(after: "not-an-id") { id }',
        f'subtree(after: "{their_kid}") {{ id }}',
        f'subtree(after: "{root}") {{ id }}',
        f'calls(after: "{their_kid}") {{ id }}',
    ]
    errors = [await refused(shop, root, case) for case in cases]
    errors.append(await refused(shop, kid, f'calls(after: "{own_call}") {{ id }}'))

    assert [e["extensions"]["code"] for e in errors] == ["BAD_INPUT"] * len(errors)


NESTED_PAGES = "id childCount " + "children(first: 10) { id childCount " * 5 + "}" * 5


async def test_children_first_10_five_levels_deep_takes_as_many_statements_in_a_big_tree_as_in_a_small_one(app, shop):
    counts, shown = {}, {}
    for name, levels in (("small", [1, 2, 2, 2, 2, 2]), ("large", [1, 12, 24, 48, 48, 60])):
        root = (await grow(shop, levels))[0][0]
        with counted() as sent:
            task = await read(shop, root, NESTED_PAGES)
        counts[name] = len(sent)
        level, found = [task], []
        for _ in range(5):
            assert all(len(t["children"]) == min(10, t["childCount"]) for t in level)
            level = [child for t in level for child in t["children"]]
            found.append(len(level))
        shown[name] = found

    assert shown == {"small": [2, 2, 2, 2, 2], "large": [10, 20, 40, 40, 50]}
    assert counts["small"] == counts["large"]


async def test_a_reader_who_reads_every_task_alike_pages_the_record_without_reading_the_trees_tasks(shop, tree):
    page = "record(first: 4, after: 2) { seq summary payload }"
    with counted() as auditor:
        noor = (await read(shop, tree["root"], page))["record"]
    with counted() as requester:
        mia = (await read(shop, tree["root"], page, shop.mia))["record"]

    assert noor == mia and [line["seq"] for line in noor] == [3, 4, 5, 6]
    assert [sql for sql in auditor if '"agent_task"' in sql or "agent_task " in sql] == auditor[:1]
    assert len([sql for sql in requester if "agent_task" in sql]) > 1
