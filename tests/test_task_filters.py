"""tasks(filter, orderBy): the new filters, the three orders with their cursors, and totalCount under the caller's access."""

from __future__ import annotations

import httpx
import pytest

from tests.shop import Client, Shop

QUERY = """query($first: Int, $after: String, $filter: TaskFilter, $orderBy: TaskOrder) {
  tasks(first: $first, after: $after, filter: $filter, orderBy: $orderBy) {
    totalCount edges { cursor node { id } } pageInfo { hasNextPage endCursor }
  }
}"""


@pytest.fixture(scope="module")
async def shop(app) -> Shop:
    """Eight tasks: two agents, two entity types, two workflow runs, two models; some running, some failed."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agentlog.test") as http:
        shop = Shop(Client(http))
        await shop.setup(agent="Clerk")
        await shop.setup()
        shop.made = []
        for n in range(8):
            task = (await shop.start(
                agent="Clerk" if n % 4 == 0 else "Estimator",
                entityType="Repair" if n % 2 else "Invoice", entityId=f"T-{n % 3}",
                workflowRun=f"run-{n % 2}", requester={"id": "mia" if n < 3 else "sam"},
            ))["id"]
            await shop.model_call(task, model="Careful" if n in (1, 6) else "Everyday")
            shop.made.append(task)
        for n in (5, 2, 7, 0, 3):
            await shop.end(shop.made[n], status="FAILED" if n == 3 else "DONE")
        yield shop


async def every_page(shop: Shop, token: str, first: int = 3, **variables) -> tuple[list[str], list[int]]:
    """The ids of every page, followed to the end, and each page's totalCount."""
    seen, totals, after = [], [], None
    while True:
        tasks = (await shop.client.ok(QUERY, {"first": first, "after": after, **variables}, token))["tasks"]
        seen += [edge["node"]["id"] for edge in tasks["edges"]]
        totals.append(tasks["totalCount"])
        if not tasks["pageInfo"]["hasNextPage"]:
            return seen, totals
        after = tasks["pageInfo"]["endCursor"]


def pick(shop: Shop, numbers) -> list[str]:
    return [shop.made[n] for n in numbers]


FILTERS = [
    ({"entityType": "Repair"}, [1, 3, 5, 7]),
    ({"entityId": "T-1"}, [1, 4, 7]),
    ({"workflowRun": "run-0"}, [0, 2, 4, 6]),
    ({"model": "Careful"}, [1, 6]),
    ({"statusIn": ["RUNNING", "FAILED"]}, [1, 3, 4, 6]),
    ({"agentIn": ["Clerk"]}, [0, 4]),
    ({"agentIn": ["Clerk", "Estimator"], "entityType": "Invoice", "statusIn": ["DONE"]}, [0, 2]),
]


@pytest.mark.parametrize("flt,expected", FILTERS, ids=[str(f) for f, _ in FILTERS])
async def test_each_filter_finds_exactly_its_tasks_and_counts_them_on_every_page(shop, flt, expected):
    seen, totals = await every_page(shop, shop.noor, first=1, filter=flt)

    assert seen == pick(shop, reversed(expected))
    assert set(totals) == {len(expected)}


async def test_the_three_orders_each_page_to_the_end_once(shop):
    newest, _ = await every_page(shop, shop.noor, filter={"agentIn": ["Clerk", "Estimator"]})
    oldest, _ = await every_page(shop, shop.noor, orderBy="STARTED_AT_ASC", filter={"agentIn": ["Clerk", "Estimator"]})
    ended, _ = await every_page(shop, shop.noor, orderBy="ENDED_AT_DESC", filter={"agentIn": ["Clerk", "Estimator"]})

    assert newest == pick(shop, range(7, -1, -1))
    assert oldest == pick(shop, range(8))
    assert ended[:5] == pick(shop, [3, 0, 7, 2, 5])
    assert ended[5:] == sorted(pick(shop, [1, 4, 6]), reverse=True)


async def test_total_count_counts_only_what_the_caller_may_see(shop):
    _, mias = await every_page(shop, shop.mia)
    _, kits = await every_page(shop, shop.kit)
    stranger = (await shop.client.ok(QUERY, {}, shop.person("stan", "Mechanic")))["tasks"]

    assert set(mias) == {3}
    assert set(kits) == {8}
    assert stranger["totalCount"] == 0


async def test_a_cursor_from_another_order_or_filter_is_refused(shop):
    tasks = (await shop.client.ok(QUERY, {"first": 2, "filter": {"entityType": "Repair"}}, shop.noor))["tasks"]
    cursor = tasks["pageInfo"]["endCursor"]

    other_order = await shop.client.error(QUERY, {"after": cursor, "filter": {"entityType": "Repair"},
                                                  "orderBy": "STARTED_AT_ASC"}, shop.noor)
    other_filter = await shop.client.error(QUERY, {"after": cursor, "filter": {"entityType": "Invoice"}}, shop.noor)
    no_filter = await shop.client.error(QUERY, {"after": cursor}, shop.noor)

    assert {e["extensions"]["code"] for e in (other_order, other_filter, no_filter)} == {"BAD_INPUT"}
    assert other_order["message"].startswith("after:")


@pytest.mark.parametrize("token", ["accountant", "kit"])
async def test_filtering_by_entity_id_needs_the_words(shop, token):
    who = shop.person("ada", "Accountant") if token == "accountant" else shop.kit

    error = await shop.client.error(QUERY, {"filter": {"entityId": "T-1"}}, who)

    assert error["extensions"]["code"] == "FORBIDDEN"
    assert error["message"].startswith("filter.entityId")


@pytest.mark.parametrize("flt", [
    {"statusIn": []}, {"agentIn": []}, {"agentIn": ["x"] * 101}, {"agentIn": ["x" * 201]},
    {"model": "m" * 201}, {"entityType": "e" * 201}, {"search": "w " * 501}, {"search": "?!* ()"},
])
async def test_bad_filter_values_are_refused_naming_the_filter(shop, flt):
    error = await shop.client.error(QUERY, {"filter": flt}, shop.noor)

    assert error["extensions"]["code"] == "BAD_INPUT"
    assert error["message"].startswith(f"filter.{next(iter(flt))}")
