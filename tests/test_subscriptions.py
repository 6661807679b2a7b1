"""Live task events: Noor watches the workshop's work as it happens, each person hears only what they may read.

On PostgreSQL the kit writes through one server process and the subscribers listen on another; on SQLite both
are the one process.
"""

from __future__ import annotations

import asyncio
import gc
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone

import httpx
import pytest
from graphql.execution.collect_fields import CollectedFields
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from graph.api.context import Context
from graph.api.schema import build_schema
from graph.api.subscription import admit
from resolvers.events.bus import FellBehind, Hub
from resolvers.events.notices import TaskNotice
from tests.otlp_spans import agent, export, new_trace_id
from tests.servers import Server, Subscriber, subscribed
from tests.shop import Client, Shop

ACCOUNTANT = ("accountant", "Accountant")


@asynccontextmanager
async def shop_on(server: Server) -> AsyncIterator[Shop]:
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        shop = Shop(Client(http))
        await shop.setup()
        yield shop


async def live(sub: Subscriber, shop: Shop, **start: object) -> None:
    """Waits until the subscription hears events: starts probe tasks it may read until one is heard."""
    for _ in range(30):
        probe = (await shop.start(**start))["id"]
        try:
            await sub.event_of(probe, timeout=2)
            return
        except TimeoutError:
            continue
    raise AssertionError("the subscription never heard a probe task")


def writer_and_listener(servers: list[Server]) -> tuple[Server, Server]:
    return servers[0], servers[-1]


async def test_a_write_through_one_server_reaches_a_subscriber_on_the_other(servers):
    writer, listener = writer_and_listener(servers)
    async with shop_on(writer) as shop, subscribed(listener, shop.noor) as noor:
        await live(noor, shop)

        task = (await shop.start())["id"]
        await shop.end(task, outcome="Estimated one hour.")

        started, finished = await noor.event(), await noor.event()
    assert started["event"] == "AgentTaskStarted" and started["task"]["id"] == task
    assert finished["event"] == "AgentTaskFinished" and finished["task"]["id"] == task
    assert finished["task"]["status"] == "DONE"
    assert finished["task"]["about"] == "Ticket T-7"
    assert finished["task"]["agent"] == "Estimator"
    assert datetime.fromisoformat(started["at"]) <= datetime.fromisoformat(finished["at"])


async def test_each_subscriber_hears_only_the_tasks_it_may_read(servers):
    writer, listener = writer_and_listener(servers)
    async with shop_on(writer) as shop, shop_on(writer) as elsewhere:
        zoe = shop.person("zoe", "Mechanic")
        accountant = shop.person(*ACCOUNTANT)
        their_auditor = elsewhere.person("noor", "Auditor")
        async with (
            subscribed(listener, shop.mia) as mia_hears,
            subscribed(listener, shop.noor) as noor_hears,
            subscribed(listener, zoe) as zoe_hears,
            subscribed(listener, accountant) as accountant_hears,
            subscribed(listener, their_auditor) as elsewhere_hears,
        ):
            for sub, on, asker in [
                (mia_hears, shop, "mia"), (noor_hears, shop, "mia"), (zoe_hears, shop, "zoe"),
                (accountant_hears, shop, "mia"), (elsewhere_hears, elsewhere, "mia"),
            ]:
                await live(sub, on, requester={"id": asker})
            marks = {"mia": (await shop.start())["id"], "zoe": (await shop.start(requester={"id": "zoe"}))["id"]}
            elsewhere_mark = (await elsewhere.start())["id"]
            for sub, mark in [(mia_hears, marks["mia"]), (noor_hears, marks["zoe"]), (zoe_hears, marks["zoe"]),
                              (accountant_hears, marks["zoe"]), (elsewhere_hears, elsewhere_mark)]:
                await sub.event_of(mark)

            mias = (await shop.start())["id"]
            await shop.end(mias)
            sams = (await shop.start(requester={"id": "sam"}))["id"]
            await shop.end(sams, status="FAILED", outcome="The parts list was down.")
            above = (await shop.start(requester={"id": "sam"}))["id"]
            below = (await shop.start(parent=above, requester={"id": "mia"}))["id"]
            await shop.end(below, status="STOPPED")
            mia_fence = (await shop.start())["id"]
            zoe_fence = (await shop.start(requester={"id": "zoe"}))["id"]
            elsewhere_fence = (await elsewhere.start())["id"]

            mia = await mia_hears.events_until(mia_fence)
            noor = await noor_hears.events_until(zoe_fence)
            zoe_heard = await zoe_hears.events_until(zoe_fence)
            accountant_heard = await accountant_hears.events_until(zoe_fence)
            elsewhere_heard = await elsewhere_hears.events_until(elsewhere_fence)

    everything = [
        ("AgentTaskStarted", mias), ("AgentTaskFinished", mias),
        ("AgentTaskStarted", sams), ("AgentTaskFailed", sams),
        ("AgentTaskStarted", above), ("AgentTaskStarted", below), ("AgentTaskStopped", below),
        ("AgentTaskStarted", mia_fence), ("AgentTaskStarted", zoe_fence),
    ]
    assert noor == everything
    assert accountant_heard == everything
    assert mia == [
        ("AgentTaskStarted", mias), ("AgentTaskFinished", mias),
        ("AgentTaskStarted", below), ("AgentTaskStopped", below),
        ("AgentTaskStarted", mia_fence),
    ]
    assert zoe_heard == [("AgentTaskStarted", zoe_fence)]
    assert elsewhere_heard == [("AgentTaskStarted", elsewhere_fence)]


async def test_a_figures_reader_hears_the_event_without_the_words(servers):
    writer, listener = writer_and_listener(servers)
    async with shop_on(writer) as shop, subscribed(listener, shop.person(*ACCOUNTANT)) as accountant:
        await live(accountant, shop)
        task = (await shop.start())["id"]
        event = await accountant.event_of(task)
    assert event["event"] == "AgentTaskStarted"
    assert event["task"]["agent"] == "Estimator"
    assert event["task"]["about"] is None


async def test_a_traces_many_events_reach_a_subscriber_on_the_other_server_in_order(servers):
    writer, listener = writer_and_listener(servers)
    t = new_trace_id()
    root = agent(t, "Dispatcher")
    helpers = [agent(t, f"Helper{n}", parent=root.span_id) for n in range(40)]
    async with shop_on(writer) as shop, subscribed(listener, shop.noor) as noor:
        await live(noor, shop)

        sent = await shop.client.http.post("/v1/traces", content=export(*helpers, root).SerializeToString(),
                                           headers={"Authorization": f"Bearer {shop.kit}",
                                                    "Content-Type": "application/x-protobuf"})
        heard = [await noor.event() for _ in range(82)]
        tree = await shop.client.ok('{ tasks(filter: { rootsOnly: true, agent: "Dispatcher" }, first: 1) '
                                    '{ edges { node { id subtree { id } } } } }', token=shop.noor)

    [node] = [edge["node"] for edge in tree["tasks"]["edges"]]
    started = [(e["event"], e["task"]["id"]) for e in heard[:41]]
    finished = [(e["event"], e["task"]["id"]) for e in heard[41:]]
    assert sent.status_code == 200
    assert started[0] == ("AgentTaskStarted", node["id"])
    assert {i for _, i in started} == {node["id"]} | {task["id"] for task in node["subtree"]}
    assert finished == [("AgentTaskFinished", i) for _, i in started]


async def test_root_narrows_the_events_to_one_tree(servers):
    writer, listener = writer_and_listener(servers)
    async with shop_on(writer) as shop:
        root = (await shop.start())["id"]
        async with subscribed(listener, shop.noor, root=root) as noor:
            await live(noor, shop, parent=root)
            await shop.start()
            child = (await shop.start(parent=root))["id"]
            await shop.end(child)
            await shop.end(root)
            heard = await noor.events_until(root)
    assert heard == [("AgentTaskStarted", child), ("AgentTaskFinished", child), ("AgentTaskFinished", root)]


async def test_erasing_work_is_told_to_those_who_may_read_it(servers):
    writer, listener = writer_and_listener(servers)
    async with shop_on(writer) as shop, subscribed(listener, shop.noor) as noor:
        erase_as = shop.person("pria", "Privacy")
        await live(noor, shop)
        kept, forgotten = await shop.estimate(), await shop.estimate()
        await shop.client.ok(
            "mutation($id: ID!) { eraseAgentWorkContent(task: $id, why: \"Mia asked.\") }", {"id": kept}, erase_as
        )
        await shop.client.ok("mutation($id: ID!) { forgetAgentWork(task: $id) }", {"id": forgotten}, erase_as)

        content_erased = await noor.event_of(kept)
        while content_erased["event"] != "AgentWorkErased":
            content_erased = await noor.event_of(kept)
        gone = await noor.event_of(forgotten)
        while gone["event"] != "AgentWorkErased":
            gone = await noor.event_of(forgotten)
    assert content_erased["task"]["about"] == "Ticket T-7"
    assert gone["task"]["id"] == forgotten and gone["task"]["agent"] == "Estimator"


async def test_a_connection_without_a_good_token_is_refused(servers):
    for payload in ({}, {"Authorization": "Bearer not-a-token"}):
        async with connect(servers[0].ws_url, subprotocols=["graphql-transport-ws"], open_timeout=15) as ws:
            await ws.send(json.dumps({"type": "connection_init", "payload": payload}))
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 15)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4403


async def test_a_root_that_is_not_a_task_id_is_refused(servers):
    async with shop_on(servers[0]) as shop, subscribed(servers[0], shop.noor, root="T-7") as noor:
        message = await noor.message()
    assert message["type"] == "next"
    assert message["payload"]["errors"][0]["extensions"]["code"] == "BAD_INPUT"


async def test_a_disconnected_subscriber_does_not_hold_up_the_others(servers):
    writer, listener = writer_and_listener(servers)
    async with shop_on(writer) as shop, subscribed(listener, shop.noor) as noor:
        await live(noor, shop)
        async with subscribed(listener, shop.noor) as gone:
            await live(gone, shop)
        task = (await shop.start())["id"]
        assert (await noor.event_of(task))["event"] == "AgentTaskStarted"


SUBSCRIPTION = "subscription { taskEvents { event task { id } } }"


def _context(token: str) -> Context:
    context = Context(request=None, response=None, principal=None)
    admit(context, f"Bearer {token}")
    return context


async def _registered(hub: Hub, count: int) -> None:
    async with asyncio.timeout(15):
        while len(hub) < count:
            await asyncio.sleep(0.01)


async def _all_ended(hub: Hub) -> None:
    async with asyncio.timeout(15):
        while not all(feed.ended for feed in hub.feeds):
            await asyncio.sleep(0.01)


async def test_a_subscriber_that_falls_behind_is_ended_and_writes_go_on(client, event_bus, configure):
    configure(subscriber_queue=2)
    shop = Shop(client)
    await shop.setup()
    stream = await build_schema().subscribe(SUBSCRIPTION, context_value=_context(shop.noor))
    waiting = asyncio.ensure_future(stream.__anext__())
    await _registered(event_bus, 1)

    first = (await shop.start())["id"]
    assert (await asyncio.wait_for(waiting, 15)).data["taskEvents"]["task"]["id"] == first
    written = [(await shop.start())["id"] for _ in range(5)]
    await _all_ended(event_bus)
    ended = await asyncio.wait_for(stream.__anext__(), 15)
    await stream.aclose()

    assert len(written) == 5
    assert ended.errors[0].extensions["code"] == "FELL_BEHIND"
    assert len(event_bus) == 0


async def test_a_closed_subscription_leaves_the_hub(client, event_bus):
    shop = Shop(client)
    await shop.setup()
    stream = await build_schema().subscribe(SUBSCRIPTION, context_value=_context(shop.noor))
    waiting = asyncio.ensure_future(stream.__anext__())
    await _registered(event_bus, 1)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    await stream.aclose()

    assert len(event_bus) == 0
    await shop.start()


async def test_a_subscription_ends_when_its_token_expires(client, event_bus):
    shop = Shop(client)
    await shop.setup()
    context = _context(shop.noor)
    stream = await build_schema().subscribe(SUBSCRIPTION, context_value=context)
    waiting = asyncio.ensure_future(stream.__anext__())
    await _registered(event_bus, 1)
    context.expires_at = datetime.now(timezone.utc) - timedelta(seconds=1)

    await shop.start()
    result = await asyncio.wait_for(waiting, 15)
    await stream.aclose()

    assert result.errors[0].extensions["code"] == "UNAUTHENTICATED"


def _notice(tenant: str) -> TaskNotice:
    task_id = uuid.uuid4()
    return TaskNotice("AgentTaskStarted", tenant, datetime.now(timezone.utc), {"id": task_id, "path": str(task_id)})


async def test_a_full_queue_never_blocks_delivery():
    hub = Hub()
    async with hub.subscribe("shop", size=3) as slow, hub.subscribe("shop", size=100) as quick:
        for _ in range(10):
            hub.deliver(_notice("shop"))
        heard = [await anext(quick) for _ in range(10)]
        with pytest.raises(FellBehind):
            await anext(slow)
    assert len(heard) == 10
    assert len(hub) == 0


async def test_noor_hears_a_stop_asked_and_a_budget_passed_with_its_share_from_the_other_server(servers):
    writer, listener = writer_and_listener(servers)
    fields = "event at share task { id status }"
    async with shop_on(writer) as shop, subscribed(listener, shop.noor, fields=fields) as noor:
        await live(noor, shop)
        task = (await shop.start(limitMicros=500))["id"]
        await shop.model_call(task, costMicros=450)
        await shop.client.ok("mutation($input: StopTaskInput!) { stopTask(input: $input) { id } }",
                             {"input": {"task": task, "reason": "Parts are known."}}, shop.noor)
        await shop.model_call(task, costMicros=100)

        heard = [await noor.event() for _ in range(4)]
    assert [(e["event"], e["share"], e["task"]["id"]) for e in heard] == [
        ("AgentTaskStarted", None, task), ("AgentTaskBudgetCrossed", 80, task), ("AgentTaskStopAsked", None, task),
        ("AgentTaskBudgetCrossed", 100, task)]
    assert heard[2]["task"]["status"] == "RUNNING"


RICH_SUBSCRIPTION = "subscription { taskEvents { event at task { id agent skill status requester { id } } } }"


def _collected_fields() -> int:
    """How many collected field sets (graphql-core's memo of an object's subfields) are alive."""
    gc.collect()
    return sum(1 for found in gc.get_objects() if isinstance(found, CollectedFields))


async def _alive_after(shop: Shop, stream, first: int, then: int) -> tuple[int, int]:
    """The collected field sets alive after `first` events heard, and after `then` more."""
    counts = []
    for heard in (first, then):
        for _ in range(heard):
            waiting = asyncio.ensure_future(stream.__anext__())
            task = (await shop.start())["id"]
            assert (await asyncio.wait_for(waiting, 15)).data["taskEvents"]["task"]["id"] == task
        counts.append(_collected_fields())
    return counts[0], counts[1]


async def test_a_long_subscription_keeps_nothing_of_the_events_it_delivered(client, event_bus, configure):
    configure(executor="fast")
    shop = Shop(client)
    await shop.setup()
    stream = await build_schema().subscribe(RICH_SUBSCRIPTION, context_value=_context(shop.noor))
    try:
        after_ten, after_sixty = await _alive_after(shop, stream, 10, 50)
    finally:
        await stream.aclose()

    assert after_sixty <= after_ten


async def test_graphql_cores_own_executor_keeps_each_events_fields_until_the_subscription_ends(
        client, event_bus, configure):
    configure(executor="stock")
    shop = Shop(client)
    await shop.setup()
    stream = await build_schema().subscribe(RICH_SUBSCRIPTION, context_value=_context(shop.noor))
    try:
        after_ten, after_sixty = await _alive_after(shop, stream, 10, 50)
    finally:
        await stream.aclose()

    assert after_sixty >= after_ten + 50
