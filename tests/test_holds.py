"""Legal holds (SPEC 9.3): while Carla from the shop's counsel holds the Estimator's work, no erasure and no
retention sweep touches it; once she releases it, Pia may erase it again."""

from __future__ import annotations

from datetime import timedelta

import pytest

from models import AgentTask
from permissions.tokens import issue_token
from resolvers.forget import retention
from tests.shop import Shop

POLICIES = "mutation($input: PoliciesInput!) { definePolicies(input: $input) { holdsRecords } }"
HOLD = "mutation($input: HoldInput!) { holdWork(input: $input) { id hold { by { id name } reason } } }"
RELEASE = "mutation($input: HoldInput!) { releaseHold(input: $input) { id hold { reason } } }"
ERASURES = {
    "eraseAgentWorkContent": "mutation($task: ID!) { eraseAgentWorkContent(task: $task, why: \"Mia asked.\") }",
    "anonymiseAgentWork": "mutation($task: ID!) { anonymiseAgentWork(task: $task, why: \"Mia asked.\") }",
    "forgetAgentWork": "mutation($task: ID!) { forgetAgentWork(task: $task) }",
}
COMPLAINT = "Mia's complaint of 2 December about the T-7 estimate is open."


async def held_shop(client) -> tuple[Shop, str]:
    shop = Shop(client)
    await shop.setup()
    assert (await client.ok(POLICIES, {"input": {"holdsRecords": ["Counsel"]}}, shop.kit)) == {
        "definePolicies": {"holdsRecords": ["Counsel"]}}
    return shop, await shop.estimate()


def carla(shop: Shop) -> str:
    """Counsel, who also reads every task's figures (an accountant's role)."""
    return shop.person("carla", "Counsel", "Accountant", name="Carla")


def pia(shop: Shop) -> str:
    return shop.person("pia", "Privacy", name="Pia")


async def test_a_hold_is_a_chained_line_on_the_root_and_readable_as_its_figures(client):
    shop, task = await held_shop(client)

    held = await client.ok(HOLD, {"input": {"task": task, "reason": COMPLAINT}}, carla(shop))

    assert held["holdWork"] == {"id": task, "hold": {"by": {"id": "carla", "name": "Carla"}, "reason": COMPLAINT}}
    read = await shop.read(task, shop.person("abe", "Accountant"), "hold { reason } record { kind }")
    assert read["hold"] == {"reason": COMPLAINT}
    assert [line["kind"] for line in read["record"]][-2:] == ["ENDED", "HELD"]
    record = await shop.read(task, shop.noor, "record { summary }")
    assert record["record"][-1]["summary"] == (
        f"Carla (carla) held this work, so nothing erases it until the hold is released: {COMPLAINT}")
    assert (await shop.check(task))["intact"] is True


@pytest.mark.parametrize("erasure", sorted(ERASURES))
async def test_held_work_refuses_every_erasure_until_released(client, erasure):
    shop, task = await held_shop(client)
    await client.ok(HOLD, {"input": {"task": task, "reason": COMPLAINT}}, carla(shop))
    before = await shop.read(task, shop.noor, "chainLength given")

    refused = await client.error(ERASURES[erasure], {"task": task}, pia(shop))

    assert refused["extensions"] == {"code": "FORBIDDEN", "field": "task", "reason": "HELD"}
    assert await shop.read(task, shop.noor, "chainLength given") == before
    released = await client.ok(RELEASE, {"input": {"task": task, "reason": "The complaint was settled."}},
                               carla(shop))
    assert released["releaseHold"] == {"id": task, "hold": None}
    assert (await client.ok(ERASURES[erasure], {"task": task}, pia(shop)))[erasure] > 0


async def test_the_retention_sweep_leaves_a_held_tree_whole_past_its_days(client):
    shop, task = await held_shop(client)
    await client.ok(POLICIES.replace("holdsRecords", "retainDays"),
                    {"input": {"retainDays": 200}}, shop.kit)
    await client.ok(HOLD, {"input": {"task": task, "reason": COMPLAINT}}, carla(shop))
    ended = (await AgentTask.get(id=task)).ended_at
    lines = (await shop.read(task, shop.noor, "chainLength"))["chainLength"]

    await retention.sweep(ended + timedelta(days=400), wait=True)

    assert (await shop.read(task, shop.noor, "chainLength hold { reason }")) == {
        "chainLength": lines, "hold": {"reason": COMPLAINT}}
    assert (await shop.check(task))["intact"] is True
    await client.ok(RELEASE, {"input": {"task": task, "reason": "The complaint was settled."}}, carla(shop))
    await retention.sweep(ended + timedelta(days=400), wait=True)
    assert await shop.read(task, shop.noor, "id") is None


async def test_only_a_person_with_a_holds_records_role_holds_and_releases(client):
    shop, task = await held_shop(client)
    callers = {"pia": pia(shop), "noor": shop.noor, "mia": shop.mia, "kit": shop.kit,
               "kit with the role": issue_token("agent-kit", shop.tenant, roles=["Counsel"], kit=True)}
    before = await shop.read(task, shop.noor, "chainLength")

    for who, token in callers.items():
        error = await client.error(HOLD, {"input": {"task": task, "reason": COMPLAINT}}, token)
        assert error["extensions"]["code"] == "FORBIDDEN", who
    anonymous = await client.error(HOLD, {"input": {"task": task, "reason": COMPLAINT}})

    assert anonymous["extensions"]["code"] == "UNAUTHENTICATED"
    assert await shop.read(task, shop.noor, "chainLength hold { reason }") == {**before, "hold": None}


async def test_running_work_is_held_and_holding_twice_or_releasing_what_is_not_held_are_conflicts(client):
    shop, task = await held_shop(client)
    running = (await shop.start())["id"]

    not_held = await client.error(RELEASE, {"input": {"task": task, "reason": "Done."}}, carla(shop))
    await client.ok(HOLD, {"input": {"task": running, "reason": COMPLAINT}}, carla(shop))
    twice = await client.error(HOLD, {"input": {"task": running, "reason": COMPLAINT}}, carla(shop))
    empty = await client.error(HOLD, {"input": {"task": task, "reason": " "}}, carla(shop))

    assert not_held["extensions"] == {"code": "CONFLICT", "field": "input.task"}
    assert twice["extensions"] == {"code": "CONFLICT", "field": "input.task"}
    assert empty["extensions"] == {"code": "BAD_INPUT", "field": "input.reason"}


async def test_a_holder_who_may_not_read_the_work_holds_it_and_is_answered_nothing_of_it(client):
    shop, task = await held_shop(client)

    held = await client.ok(HOLD, {"input": {"task": task, "reason": COMPLAINT}}, shop.person("cole", "Counsel"))

    assert held == {"holdWork": None}
    assert (await shop.read(task, shop.noor, "hold { by { id } }")) == {"hold": {"by": {"id": "cole"}}}


async def test_another_tenants_work_is_not_found(client):
    shop, task = await held_shop(client)
    other = Shop(client)
    await other.setup()
    await client.ok(POLICIES, {"input": {"holdsRecords": ["Counsel"]}}, other.kit)

    error = await client.error(HOLD, {"input": {"task": task, "reason": COMPLAINT}}, carla(other))

    assert error["extensions"] == {"code": "NOT_FOUND", "field": "input.task"}
