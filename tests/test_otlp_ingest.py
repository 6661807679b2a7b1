"""POST /v1/traces in the server's own process: what an export becomes, what is refused, and what waits."""

import asyncio
import gzip
import json
import sqlite3
from datetime import datetime, timedelta, timezone

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from tortoise.exceptions import OperationalError

from models import OtlpPlacedSpan, OtlpSpan, TraceEvent
from resolvers.otlp.ingest import take_export
from resolvers.otlp.sweep import sweep
from tests.otlp_spans import agent, chat, export, new_span_id, new_trace_id, span, tool
from tests.shop import LINE_FIELDS, Shop, work, work_lines

PROTOBUF = {"Content-Type": "application/x-protobuf"}
TREE = f"""
  id agent skill status requester {{ id }} session given result chainLength spentMicros modelCalls toolCalls
  inputTokens outputTokens depth
  children {{ id agent skill status depth }}
  record {{ {LINE_FIELDS} task {{ id }} at }}
"""
ROOTS = f"{{ tasks(filter: {{ rootsOnly: true }}, first: 50) {{ edges {{ node {{ {TREE} }} }} }} }}"


async def post(shop: Shop, request, token: str | None = "kit", headers: dict | None = None, body: bytes | None = None):
    sent = {**PROTOBUF, **(headers or {})}
    if token:
        sent["Authorization"] = f"Bearer {shop.kit if token == 'kit' else token}"
    return await shop.client.http.post("/v1/traces", content=body if body is not None else request.SerializeToString(),
                                       headers=sent)


async def roots(shop: Shop, token: str | None = None) -> list[dict]:
    data = await shop.client.ok(ROOTS, token=token or shop.noor)
    return [e["node"] for e in data["tasks"]["edges"]]


async def times_taken(tenant: str, span_id: str) -> int:
    """How often the span is held: waiting in `otlp_span`, or placed in `otlp_placed_span`."""
    placed = await OtlpPlacedSpan.filter(tenant=tenant, span_id=span_id).count()
    return await OtlpSpan.filter(tenant=tenant, span_id=span_id).count() + placed


def estimate(t: bytes):
    """The estimate as a framework reports it: the Estimator, a model call, a tool, and a helper sub-agent."""
    root = agent(t, "Estimator", **{"agentlog.skill": "EstimateRepair", "enduser.id": "mia",
                                    "gen_ai.conversation.id": "s-7", "input.value": "Ticket T-7"})
    call = chat(t, root.span_id, **{"agentlog.cost_micros": 200,
                                   "gen_ai.input.messages": [{"role": "user", "content": "T-7?"}],
                                   "gen_ai.output.messages": [{"role": "assistant", "content": "Pads."}]})
    parts = tool(t, root.span_id)
    helper = agent(t, "Stockist", parent=root.span_id, **{"gen_ai.usage.input_tokens": 5000})
    lookup = chat(t, helper.span_id, **{"agentlog.cost_micros": 50})
    return root, call, parts, helper, lookup


async def test_an_export_in_order_becomes_a_work_tree_like_any_other(client):
    shop = Shop(client)
    await shop.setup()
    root, call, parts, helper, lookup = estimate(new_trace_id())

    response = await post(shop, export(lookup, helper, call, parts, root))

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-protobuf"
    answer = ExportTraceServiceResponse.FromString(response.content)
    assert answer.partial_success.rejected_spans == 0
    [task] = await roots(shop)
    assert (task["agent"], task["skill"], task["status"], task["requester"], task["session"]) == (
        "Estimator", "EstimateRepair", "DONE", {"id": "mia"}, "s-7")
    assert task["given"] == "Ticket T-7"
    assert task["spentMicros"] == 200 and task["modelCalls"] == 1 and task["toolCalls"] == 1
    assert [(c["agent"], c["depth"]) for c in task["children"]] == [("Stockist", 1)]
    kinds = [(line["kind"], line["task"]["id"] == task["id"]) for line in task["record"]]
    assert sorted(kinds) == sorted([("STARTED", True), ("MODEL_CALL", True), ("TOOL_CALL", True),
                                    ("TOOL_RESULT", True), ("STARTED", False), ("MODEL_CALL", False),
                                    ("ENDED", False), ("ENDED", True)])
    assert task["record"][0]["kind"] == "STARTED" and task["record"][-1]["kind"] == "ENDED"
    assert [line["seq"] for line in task["record"]] == list(range(1, 9))
    assert (await shop.verify(task["id"]))["intact"] is True


async def test_usage_on_agent_spans_is_not_counted(client):
    shop = Shop(client)
    await shop.setup()
    root, call, parts, helper, lookup = estimate(new_trace_id())

    await post(shop, export(lookup, helper, call, parts, root))

    [task] = await roots(shop)
    cost = await shop.client.ok("query($id: ID!) { task(id: $id) { cost { allInInputTokens allInMicros } } }",
                                {"id": task["id"]}, shop.noor)
    assert cost["task"]["cost"] == {"allInInputTokens": 240, "allInMicros": 250}


async def test_children_sent_before_their_parent_wait_and_are_placed_under_it(client):
    shop = Shop(client)
    await shop.setup()
    root, call, parts, helper, lookup = estimate(new_trace_id())

    await post(shop, export(lookup, call))
    assert await roots(shop) == []
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 2
    await post(shop, export(helper, parts))
    assert await roots(shop) == []
    await post(shop, export(root))

    [task] = await roots(shop)
    assert task["modelCalls"] == 1 and task["toolCalls"] == 1 and len(task["children"]) == 1
    assert len(task["record"]) == 8
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 0
    assert (await shop.verify(task["id"]))["intact"] is True


async def test_spans_whose_parent_never_comes_hang_under_a_stand_in_after_the_wait(client, configure):
    configure(otlp_wait_s=60)
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    missing = new_span_id()

    await post(shop, export(chat(t, missing), tool(t, missing)))
    await sweep(datetime.now(timezone.utc) + timedelta(seconds=30))
    assert await roots(shop) == []
    await sweep(datetime.now(timezone.utc) + timedelta(seconds=61))

    [task] = await roots(shop)
    assert (task["agent"], task["skill"]) == ("unknown", "unknown")
    assert task["modelCalls"] == 1 and task["toolCalls"] == 1
    assert (await shop.verify(task["id"]))["intact"] is True


async def test_a_parent_that_comes_places_its_spans_and_leaves_the_others_waiting(client, configure):
    configure(otlp_wait_s=60)
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root, missing = agent(t, "Estimator"), new_span_id()
    helper, stray = agent(t, "Stockist", parent=root.span_id), agent(t, "Lost", parent=missing)
    under_helper, under_stray = chat(t, helper.span_id), chat(t, stray.span_id)

    await post(shop, export(under_helper, helper, under_stray, stray))
    await post(shop, export(root))

    [task] = await roots(shop)
    assert [child["agent"] for child in task["children"]] == ["Stockist"] and task["chainLength"] == 5
    waiting = sorted(span.span_id for span in await OtlpSpan.filter(tenant=shop.tenant))
    assert waiting == sorted([stray.span_id.hex(), under_stray.span_id.hex()])
    await sweep(datetime.now(timezone.utc) + timedelta(seconds=61))
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 0
    assert sorted(t["agent"] for t in await roots(shop)) == ["Estimator", "unknown"]


async def test_the_same_span_twice_is_recorded_once_and_a_replayed_export_appends_nothing(client):
    shop = Shop(client)
    await shop.setup()
    spans = estimate(new_trace_id())
    whole = export(*spans)

    await post(shop, whole)
    await post(shop, export(spans[1], spans[1]))
    await post(shop, whole)

    [task] = await roots(shop)
    assert task["chainLength"] == 8 and task["modelCalls"] == 1
    assert await work(shop.tenant).count() == 2
    assert [await times_taken(shop.tenant, span.span_id.hex()) for span in spans] == [1] * len(spans)


async def test_one_export_may_hold_several_traces_each_its_own_tree(client):
    shop = Shop(client)
    await shop.setup()
    first, second = estimate(new_trace_id()), estimate(new_trace_id())

    response = await post(shop, export(*first[1:], *second, first[0]))

    assert response.status_code == 200
    trees = await roots(shop)
    assert [(t["agent"], t["chainLength"], t["modelCalls"]) for t in trees] == [("Estimator", 8, 1)] * 2
    assert all([(await shop.verify(t["id"]))["intact"] for t in trees])


async def test_exports_of_one_trace_taken_at_once_each_record_every_span_once(client):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")
    helpers = [agent(t, f"Helper{n}", parent=root.span_id) for n in range(6)]
    below = [[chat(t, h.span_id, **{"agentlog.cost_micros": 10}), tool(t, h.span_id)] for h in helpers]
    exports = [export(*calls, helper) for calls, helper in zip(below, helpers)]
    exports += [export(*below[0], helpers[0]), export(root), export(root, *below[3])]

    answers = await asyncio.gather(*(post(shop, e) for e in exports))

    assert [a.status_code for a in answers] == [200] * len(exports)
    [task] = await roots(shop)
    assert sorted(child["agent"] for child in task["children"]) == [f"Helper{n}" for n in range(6)]
    read = await shop.read(task["id"], shop.noor, "cost { allInModelCalls } subtreeCount")
    assert (read["cost"]["allInModelCalls"], read["subtreeCount"]) == (6, 6)
    assert task["chainLength"] == 2 + 6 * 5
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 0
    assert (await shop.verify(task["id"]))["intact"] is True


async def test_a_tenant_attribute_is_ignored_the_token_decides(client):
    shop, other = Shop(client), Shop(client)
    await shop.setup()
    await other.setup()
    t = new_trace_id()

    await post(shop, export(agent(t, "Estimator", tenant=other.tenant), resource={"service.name": "w",
                                                                                "tenant": other.tenant}))

    assert len(await roots(shop)) == 1
    assert await roots(other) == []


async def test_json_and_gzip_bodies_are_taken(client):
    shop = Shop(client)
    await shop.setup()
    first, second = agent(new_trace_id(), "Estimator"), agent(new_trace_id(), "Stockist")
    as_json = json_format.MessageToJson(export(first))
    document = json.loads(as_json)
    span_json = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span_json["traceId"], span_json["spanId"] = first.trace_id.hex(), first.span_id.hex()

    by_json = await post(shop, None, headers={"Content-Type": "application/json"}, body=json.dumps(document).encode())
    by_gzip = await post(shop, None, headers={"Content-Encoding": "gzip"},
                         body=gzip.compress(export(second).SerializeToString()))

    assert by_json.status_code == 200 and by_json.headers["content-type"] == "application/json"
    assert by_gzip.status_code == 200
    assert sorted(task["agent"] for task in await roots(shop)) == ["Estimator", "Stockist"]
    assert await times_taken(shop.tenant, first.span_id.hex()) == 1


async def test_rejected_spans_are_counted_and_the_rest_recorded(client):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t)

    response = await post(shop, export(root, span(t, "chat", {"gen_ai.operation.name": "chat"}, parent=root.span_id)))

    answer = ExportTraceServiceResponse.FromString(response.content)
    assert answer.partial_success.rejected_spans == 1
    assert "no model" in answer.partial_success.error_message
    assert len(await roots(shop)) == 1


async def test_without_a_kit_token_nothing_is_taken(client):
    shop = Shop(client)
    await shop.setup()
    request = export(agent(new_trace_id()))

    assert (await post(shop, request, token=None)).status_code == 401
    assert (await post(shop, request, token=shop.noor)).status_code == 401
    assert (await post(shop, request, token="not-a-token")).status_code == 401
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 0
    assert await OtlpPlacedSpan.filter(tenant=shop.tenant).count() == 0


async def test_hostile_bodies_answer_400_or_413_and_write_nothing(client, configure):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    deep = "[" * 100_000 + "]" * 100_000
    huge = export(agent(t, **{"input.value": "x" * 10_000_000})).SerializeToString()
    bad_utf8 = export(agent(t, "ZZZZ")).SerializeToString().replace(b"ZZZZ", b"\xff\xfe\xfd\xfc")
    nested = _nested_any_value(200)

    answers = [
        await post(shop, None, body=b"not a protobuf at all \xff"),
        await post(shop, None, headers={"Content-Type": "application/json"}, body=deep.encode()),
        await post(shop, None, body=huge),
        await post(shop, None, body=bad_utf8),
        await post(shop, None, body=nested),
        await post(shop, None, headers={"Content-Encoding": "gzip"}, body=b"\x1f\x8b not gzip"),
    ]
    configure(max_body_bytes=100000)
    bomb = await post(shop, None, headers={"Content-Encoding": "gzip"}, body=gzip.compress(b"\0" * 1_000_000))
    too_big = await post(shop, None, body=b"\0" * 100_001)

    assert [a.status_code for a in answers] == [400] * 6
    assert bomb.status_code == 413 and too_big.status_code == 413
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 0
    assert await OtlpPlacedSpan.filter(tenant=shop.tenant).count() == 0
    assert await work(shop.tenant).count() == 0


def _nested_any_value(depth: int) -> bytes:
    """An export whose one attribute is an array in an array in an array …, `depth` deep, written byte by byte
    (protobuf itself refuses to write it)."""
    value = b"\x0a\x06bottom"
    for _ in range(depth):
        array = b"\x0a" + _varint(len(value)) + value
        value = b"\x2a" + _varint(len(array)) + array
    key_value = b"\x0a\x01k\x12" + _varint(len(value)) + value
    span_bytes = b"\x0a\x10" + b"\x01" * 16 + b"\x12\x08" + b"\x02" * 8 + b"\x4a" + _varint(len(key_value)) + key_value
    scope = b"\x12" + _varint(len(span_bytes)) + span_bytes
    resource = b"\x12" + _varint(len(scope)) + scope
    return b"\x0a" + _varint(len(resource)) + resource


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


async def test_ingested_work_is_read_erased_and_verified_like_kit_work(client):
    shop = Shop(client)
    await shop.setup()
    await post(shop, export(*estimate(new_trace_id())))
    [task] = await roots(shop)
    accountant = shop.person("ada", "Accountant")

    as_mia = await shop.read(task["id"], shop.mia, "given record { payload contentAccess }")
    as_accountant = await shop.read(task["id"], accountant, "given spentMicros record { payload contentAccess }")
    erase = "mutation($id: ID!, $why: String!) { eraseAgentWorkContent(task: $id, why: $why) }"
    erased = (await client.ok(erase, {"id": task["id"], "why": "Mia asked."}, shop.person("pia", "Privacy")))
    erased = erased["eraseAgentWorkContent"]

    assert as_mia["given"] == "Ticket T-7"
    assert {line["contentAccess"] for line in as_mia["record"]} == {"SHOWN"}
    assert as_accountant["given"] is None and as_accountant["spentMicros"] == 200
    assert {line["contentAccess"] for line in as_accountant["record"]} == {"DENIED"}
    assert erased > 0
    assert (await shop.verify(task["id"]))["intact"] is True
    assert await TraceEvent.filter(root_id=task["id"], kind="ERASED").count() == 1


async def test_while_the_database_is_away_the_export_answers_503_so_the_exporter_retries(client, monkeypatch):
    shop = Shop(client)

    async def away(*args, **kwargs):
        raise ConnectionRefusedError("the database is away")

    monkeypatch.setattr("resolvers.otlp.store.lock_trace", away)
    response = await post(shop, export(agent(new_trace_id())))

    assert response.status_code == 503 and response.headers["retry-after"]


async def test_while_another_process_holds_the_sqlite_writer_the_export_answers_503(client, monkeypatch):
    shop = Shop(client)
    await shop.setup()

    async def busy(*args, **kwargs):
        try:
            raise sqlite3.OperationalError("database is locked")
        except sqlite3.OperationalError as exc:
            raise OperationalError(exc) from exc

    monkeypatch.setattr("resolvers.otlp.store.lock_trace", busy)
    response = await post(shop, export(agent(new_trace_id())))

    assert response.status_code == 503 and response.headers["retry-after"]
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 0


async def test_a_model_call_inside_a_tool_span_is_made_by_that_tool_and_is_not_a_turn(client):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")
    parts = tool(t, root.span_id, "PartsFor")
    wrapper = span(t, "http lookup", {}, parent=parts.span_id)
    inside = chat(t, wrapper.span_id, "Small", **{"agentlog.cost_micros": 30})
    own = chat(t, root.span_id, **{"agentlog.cost_micros": 10})

    response = await post(shop, export(inside, wrapper, parts, own, root))

    assert response.status_code == 200
    [task] = await roots(shop)
    read = await shop.read(task["id"], shop.noor, "turns modelCalls spentMicros calls { model byTool turn }")
    assert sorted((c["model"], c["byTool"], c["turn"]) for c in read["calls"]) == [
        ("Everyday", None, 1), ("Small", "PartsFor", None)]
    assert (read["turns"], read["modelCalls"], read["spentMicros"]) == (1, 2, 40)
    assert len([line for line in task["record"] if line["kind"] == "MODEL_CALL" and "PartsFor" in line["summary"]]) == 1
    assert (await shop.verify(task["id"]))["intact"] is True


async def test_a_model_call_that_comes_after_its_tool_span_was_placed_is_still_that_tools(client):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")
    parts = tool(t, root.span_id, "PartsFor")
    inside = chat(t, parts.span_id, "Small", **{"agentlog.cost_micros": 30})

    await post(shop, export(parts, root))
    response = await post(shop, export(inside))

    assert response.status_code == 200
    [task] = await roots(shop)
    [late] = task["children"]
    read = await shop.read(late["id"], shop.noor, "turns calls { model byTool turn }")
    assert [(c["model"], c["byTool"], c["turn"]) for c in read["calls"]] == [("Small", "PartsFor", None)]
    assert read["turns"] == 0
    assert (await shop.verify(task["id"]))["intact"] is True


async def test_an_export_that_cannot_be_placed_is_kept_and_placed_by_the_sweeps_next_round(client, monkeypatch):
    """Not once its spans have waited AGENTLOG_OTLP_WAIT_S (an hour here), as spans waiting for a parent do."""
    shop = Shop(client)
    await shop.setup()
    root, call, parts, helper, lookup = estimate(new_trace_id())

    async def broken(*args):
        raise RuntimeError("placing broke")

    with monkeypatch.context() as patched:
        patched.setattr("resolvers.otlp.ingest.store_plan", broken)
        response = await post(shop, export(lookup, helper, call, parts, root))

    assert response.status_code == 200
    assert await roots(shop) == [] and await work_lines(shop.tenant).count() == 0
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 5
    await sweep()
    [task] = await roots(shop)
    assert (task["agent"], task["modelCalls"], task["toolCalls"]) == ("Estimator", 1, 1)
    assert [child["agent"] for child in task["children"]] == ["Stockist"]
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 0
    assert (await shop.verify(task["id"]))["intact"] is True


async def test_a_span_whose_parent_work_was_forgotten_hangs_under_a_stand_in(client):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t)
    await post(shop, export(root))
    [task] = await roots(shop)
    await client.ok("mutation($id: ID!) { forgetAgentWork(task: $id) }", {"id": task["id"]},
                    shop.person("pia", "Privacy"))

    response = await post(shop, export(chat(t, root.span_id)))

    assert response.status_code == 200
    [stand_in] = await roots(shop)
    assert (stand_in["agent"], stand_in["modelCalls"]) == ("unknown", 1)
    assert (await shop.verify(stand_in["id"]))["intact"] is True


async def test_a_stand_in_runs_while_its_trace_has_spans_waiting_and_its_ended_line_is_last(client, configure):
    configure(otlp_wait_s=60)
    shop = Shop(client)
    await shop.setup()
    t, lost = new_trace_id(), new_span_id()
    helper = agent(t, "Stockist")
    start = datetime.now(timezone.utc)

    await take_export(shop.tenant, export(chat(t, lost, "First")), start)
    await take_export(shop.tenant, export(chat(t, helper.span_id, "Second")), start + timedelta(seconds=30))
    await sweep(start + timedelta(seconds=61))
    [stand_in] = await roots(shop)
    assert (stand_in["agent"], stand_in["status"]) == ("unknown", "RUNNING")
    assert [line["kind"] for line in stand_in["record"]] == ["STARTED", "MODEL_CALL"]

    await take_export(shop.tenant, export(tool(t, lost, "Afterwards")), start + timedelta(seconds=62))
    await take_export(shop.tenant, export(helper), start + timedelta(seconds=63))
    await sweep(start + timedelta(seconds=95))
    stand_in = next(task for task in await roots(shop) if task["agent"] == "unknown")
    assert stand_in["status"] == "RUNNING" and len(stand_in["record"]) == 2
    await sweep(start + timedelta(seconds=125))

    by_agent = {task["agent"]: task for task in await roots(shop)}
    stand_in = by_agent["unknown"]
    assert (stand_in["status"], stand_in["modelCalls"], stand_in["toolCalls"]) == ("DONE", 1, 1)
    assert [line["kind"] for line in stand_in["record"]] == [
        "STARTED", "MODEL_CALL", "TOOL_CALL", "TOOL_RESULT", "ENDED"]
    assert by_agent["Stockist"]["modelCalls"] == 1
    assert (await shop.verify(stand_in["id"]))["intact"] is True
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 0


async def test_a_span_waiting_for_a_span_that_is_folded_away_is_placed_when_that_span_comes(client):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")
    wrapper = span(t, "http lookup", {}, parent=root.span_id)
    inside = chat(t, wrapper.span_id, **{"agentlog.cost_micros": 30})

    await post(shop, export(root))
    await post(shop, export(inside))
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 1
    await post(shop, export(wrapper))

    [task] = await roots(shop)
    assert [(late["agent"], late["skill"]) for late in task["children"]] == [("Estimator", "late work")]
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 0
    assert (await shop.verify(task["id"]))["intact"] is True


async def test_spans_waiting_below_a_folded_span_are_placed_when_their_agent_comes_after_it(client):
    """The OpenAI Agents SDK sends a model call and its folded wrapper before the agent above them: the wrapper
    is placed on arrival, and the call waits below it until the agent's own span comes."""
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")
    wrapper = span(t, "turn", {}, parent=root.span_id)
    inside = chat(t, wrapper.span_id, **{"agentlog.cost_micros": 30})
    deeper = span(t, "response", {}, parent=wrapper.span_id)
    below_deeper = tool(t, deeper.span_id)

    await post(shop, export(inside, wrapper))
    await post(shop, export(below_deeper, deeper))
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 2
    await post(shop, export(root))

    [task] = await roots(shop)
    assert (task["agent"], task["modelCalls"], task["toolCalls"]) == ("Estimator", 1, 1)
    assert await OtlpSpan.filter(tenant=shop.tenant).count() == 0
    assert (await shop.verify(task["id"]))["intact"] is True


async def last_kinds(tenant: str) -> dict[str, tuple[str, str]]:
    """Each task's status and the kind of its record's last line, by task id."""
    ends = {}
    for task in await work(tenant):
        last = await TraceEvent.filter(task_id=task.id).order_by("-seq").first()
        ends[str(task.id)] = (task.status, last.kind)
    return ends


async def test_work_exported_after_its_agent_ended_is_a_task_of_its_own_under_it(client):
    """An exporter's retry, a second process or a batch cut sends a child after its agent's span: the agent's
    record stays ended, and the late work is recorded as that agent's, in a task below its ended one."""
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")
    parts = tool(t, root.span_id, "PartsFor")
    late_call = chat(t, root.span_id, "Late", **{"agentlog.cost_micros": 40})
    inside = chat(t, parts.span_id, "Inside", **{"agentlog.cost_micros": 30})
    late_tool = tool(t, root.span_id, "Recheck")

    await post(shop, export(chat(t, b"", "Stray")))
    await post(shop, export(parts, root))
    assert (await post(shop, export(late_call, inside))).status_code == 200
    assert (await post(shop, export(late_tool))).status_code == 200

    by_agent = {task["agent"]: task for task in await roots(shop)}
    assert set(by_agent) == {"Estimator", "unknown"}
    estimator = by_agent["Estimator"]
    own = [line["kind"] for line in estimator["record"] if line["task"]["id"] == estimator["id"]]
    assert own == ["STARTED", "TOOL_CALL", "TOOL_RESULT", "ENDED"]
    assert [(c["agent"], c["skill"], c["status"]) for c in estimator["children"]] == [
        ("Estimator", "late work", "DONE"), ("Estimator", "late work", "DONE")]
    late = "id record { kind task { id } } calls { model byTool turn }"
    first, second = [await shop.read(c["id"], shop.noor, late) for c in estimator["children"]]
    kinds = [[line["kind"] for line in task["record"] if line["task"]["id"] == task["id"]] for task in (first, second)]
    assert kinds == [["STARTED", "MODEL_CALL", "MODEL_CALL", "ENDED"], ["STARTED", "TOOL_CALL", "TOOL_RESULT", "ENDED"]]
    assert sorted((c["model"], c["byTool"], c["turn"]) for c in first["calls"]) == [
        ("Inside", "PartsFor", None), ("Late", None, 1)]
    assert set((await last_kinds(shop.tenant)).values()) == {("DONE", "ENDED")}
    for task in by_agent.values():
        assert (await shop.verify(task["id"]))["intact"] is True


async def test_a_span_that_ends_after_its_agent_by_the_exporters_clock_still_comes_before_its_ended_line(client):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t, "Estimator")
    after = chat(t, root.span_id)
    after.start_time_unix_nano = root.end_time_unix_nano + 1_000_000
    after.end_time_unix_nano = after.start_time_unix_nano + 5_000_000

    await post(shop, export(after, root))

    [task] = await roots(shop)
    assert [line["kind"] for line in task["record"]] == ["STARTED", "MODEL_CALL", "ENDED"]
    assert (await shop.verify(task["id"]))["intact"] is True
