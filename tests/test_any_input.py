"""Any input the schema's own types allow, to any mutation or query, works or is refused cleanly.

Documents are drawn by hypothesis-graphql from the schema itself, so a new argument or field is covered
without a word here. For every answer: no INTERNAL, no traceback; for every refused mutation and every
query, not one row anywhere changed and no chain moved.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import graphql
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis_graphql import mutations, nodes, queries

from graph.api.schema import build_schema
from tests.shop import ROLES, Shop
from tests.tables import state

EXAMPLES = {"mutation": 150, "query": 80}
CALLERS = ("kit", "kit", "kit", "eraser", "noor", "mia", "nobody")
LONG = 2**63 - 1
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True)


def json_node(value: Any) -> graphql.ValueNode:
    if value is None:
        return graphql.NullValueNode()
    if isinstance(value, bool):
        return nodes.Boolean(value)
    if isinstance(value, int):
        return nodes.Int(value)
    if isinstance(value, float):
        return nodes.Float(value)
    if isinstance(value, str):
        return nodes.String(value)
    if isinstance(value, list):
        return nodes.List([json_node(v) for v in value])
    return nodes.Object([graphql.ObjectFieldNode(name=graphql.NameNode(value=k), value=json_node(v))
                         for k, v in value.items()])


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=8,
)


def scalars(ids: list[str]) -> dict[str, st.SearchStrategy]:
    """The custom scalars, and ids that are sometimes real, so inputs reach past the id checks."""
    return {
        "Long": st.one_of(st.integers(-(2**64), 2**64), st.sampled_from([0, 1, LONG, LONG + 1, -1])).map(nodes.Int),
        "JSON": JSON_VALUES.map(json_node),
        "ID": st.one_of(st.sampled_from(ids), st.text(max_size=40)).map(nodes.String),
        "DateTime": st.one_of(st.datetimes(timezones=st.sampled_from([UTC, None])).map(datetime.isoformat),
                              st.text(max_size=30)).map(nodes.String),
    }


async def a_shop_at_work(client) -> tuple[Shop, list[str], dict[str, str]]:
    """A shop with finished and running work, and help asked inside work and outside it."""
    shop = Shop(client)
    await shop.setup()
    done = await shop.estimate()
    running = (await shop.start())["id"]
    child = (await shop.start(parent=running))["id"]
    inside = (await shop.write("askForHelp", {"task": running, "question": "Pads?", "askedOf": {"id": "noor"}}))["id"]
    outside = (await shop.write("askForHelp", {"question": "Hours?", "askedOf": {"id": "noor"}}))["id"]
    tokens = {"kit": shop.kit, "eraser": shop.person("pia", ROLES["erasesAgentRecords"]), "noor": shop.noor,
              "mia": shop.mia, "nobody": ""}
    return shop, [done, running, child, inside, outside], tokens


async def answer(client, document: str, token: str) -> tuple[int, str, dict]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = await client.http.post("/graphql", json={"query": document}, headers=headers)
    return response.status_code, response.text, response.json()


def assert_clean(status: int, text: str, body: dict, document: str) -> None:
    assert status == 200, (document, text)
    assert "Traceback" not in text and 'File "' not in text, (document, text)
    for error in body.get("errors") or []:
        assert error.get("extensions", {}).get("code") not in (None, "INTERNAL"), (document, error)


def refused(body: dict) -> bool:
    """The mutation itself was refused: its root field answered no data. An error below an answered root field
    (a bad argument in the selection read back) comes after the write, which stands."""
    data = body.get("data") or {}
    return bool(body.get("errors")) and not any(value is not None for value in data.values())


def run_examples(
    examples: int, strategy: st.SearchStrategy, tokens: dict[str, str], check: Callable[[str, str], Awaitable[None]]
) -> Awaitable[None]:
    """Runs hypothesis on this worker thread; each example is sent on the test's event loop."""
    loop = asyncio.get_running_loop()

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(document=strategy, caller=st.sampled_from(CALLERS))
    def example(document: str, caller: str) -> None:
        asyncio.run_coroutine_threadsafe(check(document, tokens[caller]), loop).result(timeout=120)

    return asyncio.to_thread(example)


async def test_any_mutation_input_works_or_is_refused_writing_nothing(client):
    shop, ids, tokens = await a_shop_at_work(client)
    schema = build_schema()._schema
    names = sorted(schema.mutation_type.fields)
    strategy = st.one_of([mutations(schema, fields=[name], custom_scalars=scalars(ids)) for name in names])

    async def check(document: str, token: str) -> None:
        before = await state()
        status, text, body = await answer(client, document, token)
        assert_clean(status, text, body, document)
        if refused(body):
            assert await state() == before, (document, body["errors"])

    await run_examples(EXAMPLES["mutation"], strategy, tokens, check)


async def test_any_query_argument_answers_without_internal_errors_or_writes(client):
    shop, ids, tokens = await a_shop_at_work(client)
    strategy = queries(build_schema()._schema, custom_scalars=scalars(ids))

    async def check(document: str, token: str) -> None:
        before = await state()
        status, text, body = await answer(client, document, token)
        assert_clean(status, text, body, document)
        assert await state() == before, document

    await run_examples(EXAMPLES["query"], strategy, tokens, check)

