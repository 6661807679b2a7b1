"""Who may erase: holders of erasesAgentRecords, nobody else; a refused or running erasure changes nothing."""

from __future__ import annotations

import uuid

import pytest

from tests.shop import Shop
from tests.test_erasure import help_of, priya, refused, repair_job

WORK = ("eraseAgentWorkContent", "anonymiseAgentWork", "forgetAgentWork")
EVERY = (*WORK, "eraseAgentHelp")
NOT_ERASERS = {
    "the requester": lambda shop: shop.mia,
    "a supervisor": lambda shop: shop.person("max", "Manager"),
    "an auditor": lambda shop: shop.person("ada", "Auditor"),
    "a teacher": lambda shop: shop.person("tess", "Teacher"),
    "a reader of all work": lambda shop: shop.person("al", "Accountant"),
    "a kit token": lambda shop: shop.kit,
    "a kit token carrying the eraser's role": lambda shop: _kit_with_roles(shop, "Privacy"),
}


def _kit_with_roles(shop: Shop, *roles: str) -> str:
    from permissions.tokens import issue_token

    return issue_token("agent-kit", shop.tenant, roles=list(roles), kit=True)


async def untouched(shop: Shop, task: str, help: str | None = None) -> None:
    if help is not None:
        assert (await help_of(shop, help, shop.noor))["question"] == "Is it a rim brake?"
    check = await shop.verify(task)
    assert check["intact"] and check["erased"] == 0
    receipt = await shop.read(task, shop.mia, "given chainLength record { payload }")
    assert receipt["given"] == "Ticket T-7: rear brake does not bite."
    assert all(line["payload"] is not None for line in receipt["record"])


async def target(shop: Shop, mutation: str) -> tuple[str, str, str | None]:
    """The id the mutation is given, the task whose record must stay as it was, and the help that must stay."""
    job = await repair_job(shop)
    if mutation != "eraseAgentHelp":
        return job.child, job.root, None
    help = (await shop.write("askForHelp", {"question": "Is it a rim brake?", "askedOf": {"id": "mia"}}))["id"]
    return help, job.root, help


@pytest.mark.parametrize("mutation", EVERY)
@pytest.mark.parametrize("who", NOT_ERASERS)
async def test_only_holders_of_erases_agent_records_may_erase(client, mutation, who):
    shop = Shop(client)
    await shop.setup()
    id, root, help = await target(shop, mutation)

    error = await refused(shop, mutation, id, NOT_ERASERS[who](shop))

    assert error["extensions"]["code"] == "FORBIDDEN"
    assert mutation in error["message"] and "erasesAgentRecords" in error["message"]
    await untouched(shop, root, help)


@pytest.mark.parametrize("mutation", EVERY)
async def test_refusal_comes_before_the_id_is_looked_up(client, mutation):
    shop = Shop(client)
    await shop.setup()
    for id in (str(uuid.uuid4()), "not-an-id"):
        error = await refused(shop, mutation, id, shop.noor)
        assert error["extensions"]["code"] == "FORBIDDEN"


@pytest.mark.parametrize("mutation", EVERY)
async def test_without_a_valid_token_nothing_is_erased(client, mutation):
    shop = Shop(client)
    await shop.setup()
    id, root, help = await target(shop, mutation)

    for token in (None, "not-a-token", priya(shop)[:-4] + "AAAA"):
        error = await refused(shop, mutation, id, token)
        assert error["extensions"]["code"] == "UNAUTHENTICATED"
    await untouched(shop, root, help)


@pytest.mark.parametrize("mutation", EVERY)
async def test_another_tenants_work_is_as_unknown_as_work_that_never_existed(client, mutation):
    shop, elsewhere = Shop(client), Shop(client)
    await shop.setup()
    await elsewhere.setup()
    id, root, help = await target(shop, mutation)
    unknown = str(uuid.uuid4())
    field = "help" if mutation == "eraseAgentHelp" else "task"

    theirs = await refused(shop, mutation, id, priya(elsewhere))
    never = await refused(shop, mutation, unknown, priya(elsewhere))
    malformed = await refused(shop, mutation, "T-7", priya(elsewhere))

    for error in (theirs, never, malformed):
        assert error["extensions"] == {"code": "NOT_FOUND", "field": field} and error["message"].startswith(f"{field}: no ")
    assert theirs["message"].replace(id, unknown) == never["message"]
    await untouched(shop, root, help)


@pytest.mark.parametrize("mutation", EVERY)
async def test_nobody_may_erase_until_the_app_names_a_role(client, mutation):
    shop = Shop(client)
    await shop.write("registerAgent", {"name": "Estimator", "roles": ["Helper"]})
    await shop.write("definePolicies", {"auditsAgents": ["Auditor"], "supervisesAgents": ["Manager"]})
    id = (await shop.start())["id"] if mutation != "eraseAgentHelp" else (
        await shop.write("askForHelp", {"question": "Is it a rim brake?", "askedOf": {"id": "mia"}}))["id"]
    if mutation != "eraseAgentHelp":
        await shop.end(id)

    error = await refused(shop, mutation, id, priya(shop))

    assert error["extensions"]["code"] == "FORBIDDEN"


@pytest.mark.parametrize("mutation", WORK)
async def test_while_any_task_of_the_tree_runs_nothing_is_erased(client, mutation):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start())["id"]
    await shop.model_call(root)
    child = (await shop.start(parent=root))["id"]
    await shop.model_call(child)

    for id in (root, child):
        error = await refused(shop, mutation, id, priya(shop))
        assert error["extensions"]["code"] == "WORK_RUNNING" and error["message"].startswith("task: ")
    await shop.end(child)
    error = await refused(shop, mutation, child, priya(shop))
    assert error["extensions"]["code"] == "WORK_RUNNING" and root in error["message"]

    check = await shop.verify(root)
    assert check == {"intact": True, "lines": 5, "brokenAt": None, "problem": None, "erased": 0}
    receipt = await shop.read(root, shop.mia, "given about record { contentAccess erasedAt }")
    assert receipt["given"] and receipt["about"]
    assert all(line["contentAccess"] == "SHOWN" and line["erasedAt"] is None for line in receipt["record"])


@pytest.mark.parametrize("mutation", ("eraseAgentWorkContent", "anonymiseAgentWork", "eraseAgentHelp"))
async def test_an_erasure_without_a_reason_is_refused(client, mutation):
    shop = Shop(client)
    await shop.setup()
    id, root, help = await target(shop, mutation)

    for why in ("", "   "):
        error = await refused(shop, mutation, id, priya(shop), why=why)
        assert error["extensions"]["code"] == "BAD_INPUT" and error["message"].startswith("why")
    await untouched(shop, root, help)

