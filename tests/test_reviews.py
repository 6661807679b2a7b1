"""Reviews (SPEC 9.3): Ana the auditor checks the Estimator's work and says what she found; the REVIEWED line
follows the task's ENDED line, names her by the identity in her token, and the chain still verifies."""

from __future__ import annotations

from tests.shop import Shop
from tests.test_provider_tokens import provider  # noqa: F401  the workshop's identity provider

REVIEW = ("mutation($input: ReviewInput!) { reviewTask(input: $input) "
          "{ by { id name } verdict score note evaluator at } }")
REVIEWS = "reviews { by { id name } verdict score note evaluator } reviewCount"
TASKS = ("query($filter: TaskFilter) { tasks(filter: $filter, first: 50) "
         "{ edges { node { id reviewCount } } totalCount } }")
RECORD = "record { seq kind summary }"


async def shop_with_estimate(client) -> tuple[Shop, str]:
    shop = Shop(client)
    await shop.setup()
    return shop, await shop.estimate()


def ana(shop: Shop) -> str:
    return shop.person("ana", "Auditor", name="Ana Auditor")


async def test_an_auditor_approves_ended_work_and_the_line_follows_its_ended_line(client):
    shop, task = await shop_with_estimate(client)

    review = (await client.ok(REVIEW, {"input": {"task": task, "verdict": "APPROVED", "score": 0.9,
                                                  "note": "One hour is right for pads and a cable."}}, ana(shop)))

    assert review["reviewTask"]["by"] == {"id": "ana", "name": "Ana Auditor"}
    assert review["reviewTask"]["verdict"] == "APPROVED" and review["reviewTask"]["evaluator"] is None
    read = await shop.read(task, shop.noor, f"{REVIEWS} {RECORD}")
    assert read["reviews"] == [{"by": {"id": "ana", "name": "Ana Auditor"}, "verdict": "APPROVED", "score": 0.9,
                                "note": "One hour is right for pads and a cable.", "evaluator": None}]
    assert read["reviewCount"] == 1
    kinds = [line["kind"] for line in read["record"]]
    assert kinds[-2:] == ["ENDED", "REVIEWED"]
    assert read["record"][-1]["summary"] == (
        'Ana Auditor (ana) approved this work, scoring it 0.9: "One hour is right for pads and a cable."')
    check = await shop.check(task)
    assert check["intact"] is True and check["lines"] == len(kinds)


async def test_the_requester_may_review_and_the_accountant_and_the_kit_may_not(client):
    shop, task = await shop_with_estimate(client)
    before = await shop.read(task, shop.noor, "chainLength")

    kit = await client.error(REVIEW, {"input": {"task": task, "verdict": "APPROVED"}}, shop.kit)
    accountant = await client.error(REVIEW, {"input": {"task": task, "verdict": "APPROVED"}},
                                    shop.person("abe", "Accountant"))
    stranger = await client.error(REVIEW, {"input": {"task": task, "verdict": "APPROVED"}},
                                  shop.person("stan", "Mechanic"))
    nobody = await client.error(REVIEW, {"input": {"task": task, "verdict": "APPROVED"}})

    assert kit["extensions"]["code"] == "FORBIDDEN"
    assert accountant["extensions"] == {"code": "FORBIDDEN", "field": "input.task"}
    assert stranger["extensions"] == {"code": "NOT_FOUND", "field": "input.task"}
    assert nobody["extensions"]["code"] == "UNAUTHENTICATED"
    assert await shop.read(task, shop.noor, "chainLength") == before
    mia = await client.ok(REVIEW, {"input": {"task": task, "verdict": "NOTED", "note": "Fine by me."}}, shop.mia)
    assert mia["reviewTask"]["by"] == {"id": "mia", "name": "Mia"}


async def test_running_work_is_not_reviewed_until_it_ends(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]

    error = await client.error(REVIEW, {"input": {"task": task, "verdict": "REJECTED"}}, ana(shop))

    assert error["extensions"] == {"code": "WORK_RUNNING", "field": "input.task"}
    assert (await shop.read(task, shop.noor, REVIEWS))["reviews"] == []
    await shop.end(task)
    rejected = await client.ok(REVIEW, {"input": {"task": task, "verdict": "REJECTED"}}, ana(shop))
    assert rejected["reviewTask"]["verdict"] == "REJECTED"


async def test_a_retried_review_is_one_review_and_another_persons_key_is_theirs(client):
    shop, task = await shop_with_estimate(client)
    input = {"task": task, "verdict": "APPROVED", "idempotencyKey": "review-t7"}

    first = await client.ok(REVIEW, {"input": input}, ana(shop))
    again = await client.ok(REVIEW, {"input": input}, ana(shop))
    noor = await client.error(REVIEW, {"input": input}, shop.noor)

    assert first == again
    assert noor["extensions"]["code"] == "CONFLICT"
    assert (await shop.read(task, shop.noor, REVIEWS))["reviewCount"] == 1


async def listed(client, shop: Shop, filter: dict | None) -> dict:
    tasks = (await client.ok(TASKS, {"filter": filter}, shop.noor))["tasks"]
    return {"nodes": [edge["node"] for edge in tasks["edges"]], "totalCount": tasks["totalCount"]}


async def test_tasks_filter_by_verdict_and_count_reviews(client):
    shop, approved = await shop_with_estimate(client)
    rejected = await shop.estimate()
    unreviewed = await shop.estimate()
    await client.ok(REVIEW, {"input": {"task": approved, "verdict": "APPROVED"}}, ana(shop))
    await client.ok(REVIEW, {"input": {"task": approved, "verdict": "NOTED"}}, shop.noor)
    await client.ok(REVIEW, {"input": {"task": rejected, "verdict": "REJECTED"}}, ana(shop))

    found = {verdict: await listed(client, shop, {"verdict": verdict}) for verdict in ("APPROVED", "REJECTED", "NOTED")}
    every = (await listed(client, shop, None))["nodes"]

    assert found["APPROVED"]["nodes"] == [{"id": approved, "reviewCount": 2}]
    assert found["APPROVED"]["totalCount"] == 1
    assert found["REJECTED"]["nodes"] == [{"id": rejected, "reviewCount": 1}]
    assert found["NOTED"]["nodes"] == [{"id": approved, "reviewCount": 2}]
    assert {n["id"]: n["reviewCount"] for n in every} == {approved: 2, rejected: 1, unreviewed: 0}
    refused = await client.error(TASKS, {"filter": {"verdict": "APPROVED"}}, shop.person("abe", "Accountant"))
    assert refused["extensions"] == {"code": "FORBIDDEN", "field": "filter.verdict"}


async def test_reviews_are_read_with_the_tasks_sentences(client):
    shop, task = await shop_with_estimate(client)
    await client.ok(REVIEW, {"input": {"task": task, "verdict": "APPROVED"}}, ana(shop))

    accountant = await shop.read(task, shop.person("abe", "Accountant"), REVIEWS)
    manager = await shop.read(task, shop.person("max", "Manager"), REVIEWS)

    assert accountant == {"reviews": [], "reviewCount": 1}
    assert manager["reviews"][0]["verdict"] == "APPROVED"


async def test_an_auditor_signed_in_through_the_provider_is_named_as_the_provider_names_her(client, provider):
    shop, task = await shop_with_estimate(client)
    token = provider.token(sub="00u7ana-okta", tenant=shop.tenant, name="Ana Auditor", roles=["Auditor"])

    review = await client.ok(REVIEW, {"input": {"task": task, "verdict": "APPROVED"}}, token)

    assert review["reviewTask"]["by"] == {"id": "00u7ana-okta", "name": "Ana Auditor"}
    record = await shop.read(task, shop.noor, RECORD)
    assert record["record"][-1]["summary"] == "Ana Auditor (00u7ana-okta) approved this work."
