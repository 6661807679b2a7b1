"""The shop's erasures, line by line: what stays and what goes when Priya, who holds erasesAgentRecords, erases."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tortoise.functions import Count, Sum

from models import AgentHelp, AgentTask, LlmCall, SignedCheckpoint, TraceEvent
from resolvers.events.notices import add_publisher, remove_publisher
from tests.shop import LINE_FIELDS, TASK_FIELDS, Shop

WHY = "Mia asked for her data to be erased."
QUERIES = {
    "eraseAgentWorkContent": "mutation($id: ID!, $why: String!) { eraseAgentWorkContent(task: $id, why: $why) }",
    "anonymiseAgentWork": "mutation($id: ID!, $why: String!) { anonymiseAgentWork(task: $id, why: $why) }",
    "forgetAgentWork": "mutation($id: ID!) { forgetAgentWork(task: $id) }",
    "eraseAgentHelp": "mutation($id: ID!, $why: String!) { eraseAgentHelp(help: $id, why: $why) }",
}
ERASED_WORDS = ("rear brake", "T-7", "brake pads", "rim brake", "New pads", "Order", "hours", "Ticket", "Is it")
HELP_FIELDS = "id askedAt answeredAt question answer askedOf { id name } answeredBy { id name }"
LOG_FIELDS = "id kind taskId rootId helpId why by { id name } at lines"


def priya(shop: Shop) -> str:
    return shop.person("priya", "Privacy", name="Priya")


def variables(mutation: str, id: str, why: str) -> dict:
    return {"id": id} if mutation == "forgetAgentWork" else {"id": id, "why": why}


async def erase(shop: Shop, mutation: str, id: str, token: str | None = None, why: str = WHY) -> Any:
    data = await shop.client.ok(QUERIES[mutation], variables(mutation, id, why), token or priya(shop))
    return data[mutation]


async def refused(shop: Shop, mutation: str, id: str, token: str | None, why: str = WHY) -> dict:
    return await shop.client.error(QUERIES[mutation], variables(mutation, id, why), token)


@dataclass
class Job:
    root: str
    child: str
    help: str


async def repair_job(shop: Shop) -> Job:
    """The shop's estimate, with a question to Mia and a sub-task that orders the parts: 11 lines."""
    root = (await shop.start())["id"]
    await shop.model_call(root)
    await shop.tool(root, "PartsFor", {"fault": "rear brake does not bite"}, ["brake pads", "cable"], "c1")
    help = (await shop.write("askForHelp", {
        "task": root, "question": "Is it a rim brake on T-7?", "askedOf": {"id": "mia", "name": "Mia"},
    }))["id"]
    await shop.write("sendBack", {"help": help, "answer": "Yes, a rim brake.", "by": {"id": "mia", "name": "Mia"}})
    child = (await shop.start(
        parent=root, skill="OrderParts", about="Parts for T-7", given="Order brake pads for T-7.",
        trigger="The estimate of T-7 needs brake pads.",
    ))["id"]
    await shop.model_call(child, response={"text": "Ordered brake pads for T-7."})
    await shop.end(child, outcome="Ordered the pads for T-7.", result={"ordered": ["brake pads"]})
    await shop.model_call(root, response={"text": "done"})
    await shop.end(root, outcome="Estimated one hour for T-7.",
                   result={"hours": 1, "summary": "New pads and a cable.", "needsParts": True})
    return Job(root, child, help)


async def record(shop: Shop, task: str, token: str) -> dict:
    return await shop.read(task, token, f"{TASK_FIELDS} record {{ {LINE_FIELDS} task {{ id }} }}")


async def help_of(shop: Shop, help: str, token: str) -> dict | None:
    data = await shop.client.ok(f"query($id: ID!) {{ agentHelp(id: $id) {{ {HELP_FIELDS} }} }}", {"id": help}, token)
    return data["agentHelp"]


async def erasure_log(shop: Shop, token: str | None) -> list[dict]:
    return (await shop.client.ok(f"{{ erasures {{ {LOG_FIELDS} }} }}", token=token))["erasures"]


STAYS_ON_A_LINE = ("seq", "kind", "model", "routeRule", "attempts", "costMicros", "tool", "toolCallId", "isError",
                   "durationMs", "inputTokens", "outputTokens", "summaryHash", "payloadHash", "prevHash", "hash")
STAYS_ON_A_RECEIPT = ("id", "agent", "skill", "status", "cause", "limitMicros", "spentMicros", "modelCalls",
                      "toolCalls", "turns", "inputTokens", "outputTokens", "depth", "sequence", "path",
                      "instructionsHash", "actor")
WORDS = ("about", "trigger", "outcome", "requester", "entityId")


def says_none_of_the_erased_words(sentence: str) -> bool:
    return not any(word in sentence for word in ERASED_WORDS) and WHY not in sentence


async def test_erasing_content_empties_every_line_and_keeps_sentences_models_tools_and_costs(client):
    shop = Shop(client)
    await shop.setup(transcript_readers=["Auditor"])
    job = await repair_job(shop)
    before = await record(shop, job.root, shop.noor)
    child_before = await shop.read(job.child, shop.noor)

    assert await erase(shop, "eraseAgentWorkContent", job.child) == 11

    after = await record(shop, job.root, shop.noor)
    for old, new in zip(before["record"], after["record"]):
        for field in (*STAYS_ON_A_LINE, "summary", "summarySalt", "erasedAt"):
            assert new[field] == old[field], (new["seq"], field)
        assert new["payload"] is None and new["payloadSalt"] is None
        assert new["contentAccess"] == "ERASED" and new["contentErasedAt"] is not None
    erased_line = after["record"][-1]
    assert erased_line["seq"] == 12 and erased_line["kind"] == "ERASED"
    assert erased_line["task"] == {"id": job.root} and erased_line["payload"] is None
    assert erased_line["summary"].startswith("The content of this work was erased on ")
    assert "by Priya" in erased_line["summary"] and says_none_of_the_erased_words(erased_line["summary"])

    for receipt, old in ((after, before), (await shop.read(job.child, shop.noor), child_before)):
        assert receipt["given"] is None and receipt["result"] is None and receipt["instructionsSent"] is None
        for field in (*STAYS_ON_A_RECEIPT, *WORDS):
            assert receipt[field] == old[field], field
    assert after["chainLength"] == 12 and after["chainHead"] == erased_line["hash"]

    help = await help_of(shop, job.help, shop.noor)
    assert help["question"] is None and help["answer"] is None
    assert help["askedOf"] == {"id": "mia", "name": "Mia"} and help["answeredBy"] == {"id": "mia", "name": "Mia"}

    turns = await shop.read(job.root, shop.noor, "transcript { contentWithheld withheldReason messages model }")
    assert turns["transcript"] and all(
        t["contentWithheld"] and t["withheldReason"] == "ERASED" and t["messages"] is None and t["model"] == "Everyday"
        for t in turns["transcript"]
    )
    assert (await shop.read(job.root, shop.mia))["about"] == "Ticket T-7"
    assert await shop.verify(job.root) == {"intact": True, "lines": 12, "brokenAt": None, "problem": None, "erased": 11}


async def test_anonymising_takes_the_person_off_and_keeps_that_the_work_happened(client):
    shop = Shop(client)
    await shop.setup()
    job = await repair_job(shop)
    before = await record(shop, job.root, shop.noor)

    assert await erase(shop, "anonymiseAgentWork", job.root) == 11

    after = await record(shop, job.root, shop.noor)
    for old, new in zip(before["record"], after["record"]):
        for field in STAYS_ON_A_LINE:
            assert new[field] == old[field], (new["seq"], field)
        assert new["summary"] == "Erased." and new["summarySalt"] is None and new["erasedAt"] is not None
        assert new["payload"] is None and new["payloadSalt"] is None and new["contentErasedAt"] is not None
    erased_line = after["record"][-1]
    assert erased_line["kind"] == "ERASED" and erased_line["erasedAt"] is None
    assert erased_line["summary"].startswith("This work was anonymised on ")
    assert says_none_of_the_erased_words(erased_line["summary"]) and "Mia" not in erased_line["summary"]

    for task in (job.root, job.child):
        receipt = await shop.read(task, shop.noor, f"{TASK_FIELDS} startedAt endedAt")
        assert all(receipt[field] is None for field in (*WORDS, "given", "result"))
        assert receipt["agent"] == "Estimator" and receipt["status"] == "DONE" and receipt["startedAt"]
    assert after["spentMicros"] == before["spentMicros"] == 400 and after["modelCalls"] == 2

    help = await help_of(shop, job.help, shop.noor)
    assert help["askedOf"] is None and help["answeredBy"] is None and help["question"] is None
    assert help["askedAt"] and help["answeredAt"]
    assert await shop.read(job.root, shop.mia) is None, "Mia was the requester; the work is no longer hers to read"
    assert await shop.verify(job.root) == {"intact": True, "lines": 12, "brokenAt": None, "problem": None, "erased": 11}


async def test_anonymising_after_erasing_content_erases_the_earlier_erasure_line_too(client):
    shop = Shop(client)
    await shop.setup()
    job = await repair_job(shop)

    assert await erase(shop, "eraseAgentWorkContent", job.root) == 11
    assert await erase(shop, "anonymiseAgentWork", job.root) == 12

    lines = (await record(shop, job.root, shop.noor))["record"]
    assert [line["summary"] for line in lines[:12]] == ["Erased."] * 12
    assert lines[11]["kind"] == "ERASED" and lines[12]["kind"] == "ERASED"
    assert lines[12]["summary"].startswith("This work was anonymised on ")
    assert await shop.verify(job.root) == {"intact": True, "lines": 13, "brokenAt": None, "problem": None, "erased": 12}


async def meter_totals(tenant: str) -> list[dict]:
    return (
        await LlmCall.filter(tenant=tenant)
        .annotate(micros=Sum("cost_micros"), inp=Sum("input_tokens"), out=Sum("output_tokens"), n=Count("id"))
        .group_by("agent", "model")
        .order_by("agent", "model")
        .values("agent", "model", "micros", "inp", "out", "n")
    )


async def test_forgetting_deletes_the_tree_and_keeps_the_meters_totals(client):
    shop = Shop(client)
    await shop.setup()
    job = await repair_job(shop)
    other = await shop.estimate()
    totals = await meter_totals(shop.tenant)
    assert await SignedCheckpoint.filter(root_id=job.root).exists()

    assert await erase(shop, "forgetAgentWork", job.child) == 2

    assert await meter_totals(shop.tenant) == totals
    detached = await LlmCall.filter(tenant=shop.tenant, task_id__isnull=True)
    assert len(detached) == 3 and all(row.task_path is None and row.cost_micros == 200 for row in detached)
    for task in (job.root, job.child):
        assert await shop.read(task, shop.noor) is None
        data = await client.ok("query($id: ID!) { verifyTrace(task: $id) { intact } }", {"id": task}, shop.noor)
        assert data["verifyTrace"] is None
    assert await help_of(shop, job.help, shop.noor) is None
    root_id = job.root
    assert not await TraceEvent.filter(root_id=root_id).exists()
    assert not await AgentTask.filter(root_id=root_id).exists()
    assert not await AgentHelp.filter(root_id=root_id).exists()
    assert not await SignedCheckpoint.filter(root_id=root_id).exists()
    assert await SignedCheckpoint.filter(root_id=other).exists()
    assert (await shop.read(other, shop.noor))["spentMicros"] == 600
    assert (await shop.verify(other))["intact"] is True


async def test_erasing_help_asked_outside_work_erases_its_question_answer_and_people(client):
    shop = Shop(client)
    await shop.setup()
    help = (await shop.write("askForHelp", {"question": "Is it a rim brake on T-7?", "askedOf": {"id": "mia"}}))["id"]
    await shop.write("sendBack", {"help": help, "answer": "Yes, a rim brake.", "by": {"id": "mia", "name": "Mia"}})

    assert await erase(shop, "eraseAgentHelp", help) is True

    erased = await help_of(shop, help, shop.noor)
    assert erased["question"] is None and erased["answer"] is None
    assert erased["askedOf"] is None and erased["answeredBy"] is None
    assert erased["askedAt"] and erased["answeredAt"]
    entry = (await erasure_log(shop, shop.noor))[0]
    assert entry["kind"] == "ERASE_AGENT_HELP" and entry["helpId"] == help and entry["lines"] == 0


async def test_help_asked_inside_work_is_erased_with_that_work_not_alone(client):
    shop = Shop(client)
    await shop.setup()
    job = await repair_job(shop)

    error = await refused(shop, "eraseAgentHelp", job.help, priya(shop))

    assert error["extensions"]["code"] == "BAD_INPUT"
    assert error["message"].startswith("help: ") and job.root in error["message"]
    assert (await help_of(shop, job.help, shop.noor))["question"] == "Is it a rim brake on T-7?"


async def test_the_erasure_log_says_who_erased_what_when_why_and_how_many_lines(client):
    shop = Shop(client)
    await shop.setup()
    first, second = await repair_job(shop), await repair_job(shop)
    await erase(shop, "eraseAgentWorkContent", first.child)
    await erase(shop, "forgetAgentWork", second.root)

    entries = await erasure_log(shop, shop.person("ada", "Auditor"))

    assert [e["kind"] for e in entries] == ["FORGET_AGENT_WORK", "ERASE_AGENT_WORK_CONTENT"]
    forgot, content = entries
    assert content["taskId"] == first.child and content["rootId"] == first.root and content["why"] == WHY
    assert content["by"] == {"id": "priya", "name": "Priya"} and content["lines"] == 11
    assert forgot["taskId"] == second.root and forgot["why"] is None and forgot["lines"] == 11
    assert await erasure_log(shop, priya(shop)) == entries
    erased_line = (await record(shop, first.root, shop.noor))["record"][-1]
    assert f"entry {content['id']}" in erased_line["summary"]
    for token in (shop.mia, shop.person("max", "Manager"), shop.person("al", "Accountant"),
                  shop.person("tess", "Teacher"), shop.kit, None):
        assert await erasure_log(shop, token) == []
    elsewhere = Shop(client)
    await elsewhere.setup()
    assert await erasure_log(elsewhere, elsewhere.person("ada", "Auditor")) == []


async def test_each_erasure_of_work_publishes_agent_work_erased_after_it_is_done(client):
    shop = Shop(client)
    await shop.setup()
    job, other = await repair_job(shop), await repair_job(shop)
    heard: list[tuple[str, str, int]] = []

    async def listen(event: str, task: AgentTask) -> None:
        heard.append((event, str(task.id), await TraceEvent.filter(root_id=task.root_id, kind="ERASED").count()))

    add_publisher(listen)
    try:
        await erase(shop, "eraseAgentWorkContent", job.child)
        await erase(shop, "anonymiseAgentWork", job.root)
        await refused(shop, "forgetAgentWork", other.root, shop.noor)
        await erase(shop, "forgetAgentWork", other.root)
    finally:
        remove_publisher(listen)

    assert heard == [
        ("AgentWorkErased", job.child, 1),
        ("AgentWorkErased", job.root, 2),
        ("AgentWorkErased", other.root, 0),
    ]
