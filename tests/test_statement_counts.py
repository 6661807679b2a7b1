"""A nested read of a whole tree costs the same number of SQL statements at 10 tasks as at 500."""

from __future__ import annotations

import httpx
import pytest

from tests.shop import Client, Shop
from tests.statements import counted


async def grow(shop: Shop, levels: list[int]) -> list[list[str]]:
    """A finished tree with `levels[d]` tasks at depth d, siblings spread evenly over the level above.

    Every task makes a model call; every third also calls a tool that makes a model call of its own.
    """
    tree = [[(await shop.start())["id"]]]
    for size in levels[1:]:
        above = tree[-1]
        tree.append([(await shop.start(parent=above[i % len(above)]))["id"] for i in range(size)])
    for n, task in enumerate(t for level in tree for t in level):
        await shop.model_call(task, costMicros=100 + n)
        if n % 3 == 0:
            await shop.write("recordToolCall", {"task": task, "tool": "PartsFor", "toolCallId": "c1", "input": {}})
            await shop.model_call(task, byTool="PartsFor", costMicros=7, response={"text": "pads"})
            await shop.write("recordToolResult", {"task": task, "tool": "PartsFor", "toolCallId": "c1", "output": []})
    for level in reversed(tree):
        for task in level:
            await shop.end(task)
    return tree


TASK = """
  id status depth sequence path spentMicros modelCalls toolCalls turns inputTokens outputTokens chainLength chainHead
  about given requester { id } actor { id } readableGroups
  cost { ownMicros allInMicros ownInputTokens allInInputTokens ownModelCalls allInModelCalls }
  parent { id status } root { id chainLength } lineage { id } subtree { id sequence }
  calls { id costMicros byTool task { id } }
  trace { seq kind summary payload contentAccess costMicros call { id } task { id } }
"""


def nested(levels: int) -> str:
    body = TASK
    for _ in range(levels):
        body = f"{TASK} children {{ {body} }}"
    return body


TREE_READ = f"""query($id: ID!) {{ task(id: $id) {{ {nested(3)} record {{ seq kind summary }}
  transcript {{ turn model tools {{ name }} }} }} }}"""

LIST_READ = f"""query {{ tasks(first: 500, filter: {{rootsOnly: true}}) {{
  edges {{ cursor node {{ {nested(3)} }} }} pageInfo {{ hasNextPage endCursor }} }} }}"""


@pytest.fixture(scope="module")
async def trees(app) -> dict[str, tuple[Shop, list[list[str]]]]:
    """Two shops, one tree each, of the same depth: 10 tasks and 500."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agentlog.test") as http:
        out = {}
        for name, levels in (("small", [1, 3, 3, 3]), ("large", [1, 9, 90, 400])):
            shop = Shop(Client(http))
            await shop.setup(transcript_readers=["Auditor"])
            out[name] = (shop, await grow(shop, levels))
        yield out


def count_tasks(task: dict) -> int:
    return 1 + sum(count_tasks(child) for child in task.get("children", []))


async def read_counting(client: Client, query: str, variables: dict, token: str) -> tuple[dict, int]:
    with counted() as sent:
        data = await client.ok(query, variables, token)
    return data, len(sent)


@pytest.mark.fast_executor
@pytest.mark.parametrize("reader", ["mia", "noor"])
async def test_a_nested_read_of_a_tree_takes_as_many_statements_at_500_tasks_as_at_10(client, trees, reader):
    counts, sizes = {}, {}
    for name, (shop, tree) in trees.items():
        token = getattr(shop, reader)
        data, counts[name] = await read_counting(client, TREE_READ, {"id": tree[0][0]}, token)
        sizes[name] = count_tasks(data["task"])
        assert len(data["task"]["record"]) == data["task"]["chainLength"]

    assert sizes == {"small": 10, "large": 500}
    assert counts["small"] == counts["large"]


@pytest.mark.fast_executor
async def test_a_page_of_trees_takes_as_many_statements_at_500_tasks_as_at_10(client, trees):
    counts, sizes = {}, {}
    for name, (shop, _) in trees.items():
        data, counts[name] = await read_counting(client, LIST_READ, {}, shop.noor)
        [edge] = data["tasks"]["edges"]
        sizes[name] = count_tasks(edge["node"])

    assert sizes == {"small": 10, "large": 500}
    assert counts["small"] == counts["large"]


async def test_the_large_tree_read_in_one_request_adds_up(client, trees):
    shop, tree = trees["large"]
    root = (await client.ok(TREE_READ, {"id": tree[0][0]}, shop.noor))["task"]

    tasks = [root]
    for task in tasks:
        tasks.extend(task.get("children", []))
    spent = sum(task["spentMicros"] for task in tasks)
    assert root["cost"]["allInMicros"] == spent == sum(100 + n + (7 if n % 3 == 0 else 0) for n in range(500))
    assert root["cost"]["allInModelCalls"] == 500 + len(range(0, 500, 3))
    assert [len(level) for level in tree] == [1, 9, 90, 400]
    assert len(root["subtree"]) == 499
    assert all(len(task["trace"]) == (6 if task["toolCalls"] else 3) for task in tasks)
    assert all(task["turns"] == 1 and task["modelCalls"] == (2 if task["toolCalls"] else 1) for task in tasks)


@pytest.mark.parametrize("query", [
    "query($id: ID!) {{ task(id: $id) {{ id {fields} subtree {{ id }} }} }}",
    'query {{ tasks(filter: {{ rootsOnly: true }}, first: 1) {{ edges {{ node {{ id {fields} subtree {{ id }} }} }} }} }}',
])
async def test_a_roots_chain_length_read_beside_its_subtree_costs_no_statement_more(client, trees, query):
    shop, tree = trees["small"]

    _, without = await read_counting(client, query.format(fields=""), {"id": tree[0][0]}, shop.noor)
    data, with_chain = await read_counting(client, query.format(fields="chainLength"), {"id": tree[0][0]}, shop.noor)

    assert "chainLength" in str(data)
    assert with_chain == without
