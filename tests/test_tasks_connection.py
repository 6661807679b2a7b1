"""tasks(filter, first, after): newest first, paged with opaque cursors, narrowed by filters a reader may use."""

from __future__ import annotations

import pytest

from tests.shop import Shop

PAGE = """query($first: Int, $after: String, $filter: TaskFilter) {
  tasks(first: $first, after: $after, filter: $filter) {
    edges { cursor node { id startedAt } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}"""
DEFAULT_PAGE = "{ tasks { edges { node { id } } pageInfo { hasNextPage } } }"


async def page(shop: Shop, token: str, **variables) -> dict:
    return (await shop.client.ok(PAGE, variables, token))["tasks"]


def ids(connection: dict) -> list[str]:
    return [edge["node"]["id"] for edge in connection["edges"]]


async def started(shop: Shop, count: int, **fields) -> list[str]:
    return [(await shop.start(**fields))["id"] for _ in range(count)]


@pytest.fixture
async def shop(client) -> Shop:
    shop = Shop(client)
    await shop.setup()
    return shop


async def test_tasks_come_newest_first_and_pages_follow_on_from_their_cursor(shop):
    made = await started(shop, 7)

    seen, after, pages = [], None, 0
    while True:
        connection = await page(shop, shop.noor, first=3, after=after)
        seen += ids(connection)
        pages += 1
        info = connection["pageInfo"]
        assert info["hasPreviousPage"] is (after is not None)
        assert info["startCursor"] == connection["edges"][0]["cursor"]
        assert info["endCursor"] == connection["edges"][-1]["cursor"]
        if not info["hasNextPage"]:
            break
        after = info["endCursor"]

    assert pages == 3
    assert seen == list(reversed(made))
    stamps = [(edge["node"]["startedAt"], edge["node"]["id"]) for edge in (await page(shop, shop.noor))["edges"]]
    assert stamps == sorted(stamps, reverse=True)


async def test_first_is_fifty_unless_asked_and_at_most_five_hundred(shop):
    await started(shop, 52)

    default = (await shop.client.ok(DEFAULT_PAGE, token=shop.noor))["tasks"]
    most = await page(shop, shop.noor, first=500)
    too_many = await shop.client.error(PAGE, {"first": 501}, shop.noor)
    none = await shop.client.error(PAGE, {"first": 0}, shop.noor)

    assert len(default["edges"]) == 50 and default["pageInfo"]["hasNextPage"] is True
    assert len(most["edges"]) == 52 and most["pageInfo"]["hasNextPage"] is False
    for error in (too_many, none):
        assert error["extensions"]["code"] == "BAD_INPUT"
        assert error["message"].startswith("first:")
    assert "501" in too_many["message"] and "500" in too_many["message"]


async def test_a_cursor_this_server_did_not_give_out_is_bad_input(shop):
    await started(shop, 2)

    for cursor in ("not-a-cursor", "WyJ5ZXN0ZXJkYXkiLCAiMSJd"):
        error = await shop.client.error(PAGE, {"after": cursor}, shop.noor)
        assert error["extensions"]["code"] == "BAD_INPUT"
        assert error["message"].startswith("after:")


async def test_each_filter_narrows_the_tasks(shop):
    await shop.write("registerAgent", {"name": "Scheduler", "purpose": "Books repairs in.", "roles": ["Helper"]})
    estimate = (await shop.start(session="chat-1"))["id"]
    booking = (await shop.start(agent="Scheduler", skill="BookRepair", requester={"id": "sam", "name": "Sam"}))["id"]
    sub = (await shop.start(parent=estimate, skill="FindParts"))["id"]
    failed = (await shop.start(session="chat-2"))["id"]
    await shop.end(failed, status="FAILED", outcome="No parts.")
    await shop.end(sub)

    async def found(**flt) -> set[str]:
        return set(ids(await page(shop, shop.noor, filter=flt)))

    assert await found(agent="Scheduler") == {booking}
    assert await found(skill="FindParts") == {sub}
    assert await found(status="FAILED") == {failed}
    assert await found(status="DONE") == {sub}
    assert await found(status="RUNNING") == {estimate, booking}
    assert await found(requester="sam") == {booking}
    assert await found(session="chat-1") == {estimate, sub}
    assert await found(rootsOnly=True) == {estimate, booking, failed}
    assert await found(agent="Estimator", rootsOnly=True, session="chat-2") == {failed}
    assert await found(agent="Nobody") == set()


async def test_started_after_and_before_are_strict_bounds(shop):
    made = await started(shop, 5)
    stamps = {edge["node"]["id"]: edge["node"]["startedAt"] for edge in (await page(shop, shop.noor))["edges"]}
    middle = stamps[made[2]]

    after = ids(await page(shop, shop.noor, filter={"startedAfter": middle}))
    before = ids(await page(shop, shop.noor, filter={"startedBefore": middle}))
    between = ids(await page(shop, shop.noor, filter={"startedAfter": stamps[made[0]], "startedBefore": stamps[made[4]]}))

    assert after == [made[4], made[3]]
    assert before == [made[1], made[0]]
    assert between == [made[3], made[2], made[1]]


async def test_a_requester_lists_what_they_asked_for_and_what_it_led_to(shop):
    mine = (await shop.start())["id"]
    handed_on = (await shop.start(parent=mine, requester={"id": "sam", "name": "Sam"}))["id"]
    sams = (await shop.start(requester={"id": "sam", "name": "Sam"}))["id"]

    assert set(ids(await page(shop, shop.mia))) == {mine, handed_on}
    assert set(ids(await page(shop, shop.person("sam", "Mechanic")))) == {handed_on, sams}
    assert ids(await page(shop, shop.person("olga", "Mechanic"))) == []
    assert ids(await page(shop, shop.mia, filter={"requester": "sam"})) == [handed_on]


async def test_filtering_by_requester_is_refused_to_readers_who_may_not_read_it(shop):
    await started(shop, 1)

    for token in (shop.kit, shop.person("ann", "Accountant")):
        error = await shop.client.error(PAGE, {"filter": {"requester": "mia"}}, token)
        assert error["extensions"]["code"] == "FORBIDDEN"
        assert error["message"].startswith("filter.requester:")
    assert len(ids(await page(shop, shop.noor, filter={"requester": "mia"}))) == 1


async def test_another_tenants_tasks_are_not_listed(client, shop):
    theirs = Shop(client)
    await theirs.setup()
    await started(theirs, 2)
    mine = await started(shop, 1)

    assert ids(await page(shop, shop.noor)) == mine
    assert ids(await page(shop, shop.kit)) == mine
