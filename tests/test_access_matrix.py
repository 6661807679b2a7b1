"""Who reads what, reader by reader and field group by field group, from the same table the guards are made from.

The expected answer comes from `permissions.table`: a reader's groups are read in full, every other field is null,
and a reader with no groups does not see the task at all. The full answer each field is compared with is what a
person holding every capability is shown; the fields each query asks for are found by walking the schema. The same
readers export the tree (GET /export/{task}), and `readableGroups` must name exactly the reader's groups. CI runs it
under both executors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
import pytest
from graphql import GraphQLObjectType, get_named_type
from graph.api.guard import group_of
from permissions.table import (
    HELP_OUTSIDE_WORK, LEDGER_READERS, READS, TABLE_GROUPS, WEBHOOK_READERS, Group, Reader, Table,
)
from tests.receiver import settle_owed
from tests.shop import ROLES, Client, Shop
from tests.test_schema_groups import GUARDED_TYPES, SCHEMA

Token = Callable[[Shop], "str | None"]

READERS: dict[str, tuple[Reader | None, Token]] = {
    "requester": (Reader.REQUESTER, lambda shop: shop.mia),
    **{
        capability: (Reader(capability), lambda shop, c=capability: shop.person(f"p-{c}", ROLES[c]))
        for capability in ROLES
    },
    "kit": (Reader.KIT, lambda shop: shop.kit),
    "stranger": (None, lambda shop: shop.person("stan", "Mechanic")),
    "no token": (None, lambda shop: None),
}
HELP_READERS: dict[str, tuple[Reader | None, Token]] = {
    "personAsked": (Reader.PERSON_ASKED, lambda shop: shop.person("olga", "Mechanic")),
    **{label: reader for label, reader in READERS.items() if label != "requester"},
    "requester of other work": (None, lambda shop: shop.mia),
}
SET_ONLY_BY_ERASURE = {"erasedAt", "contentErasedAt"}


def groups_for(reader: Reader | None, table: Table = READS) -> frozenset[Group]:
    return table.get(reader, frozenset()) if reader is not None else frozenset()


def published(type_name: str) -> dict:
    return SCHEMA._schema.type_map[type_name].fields


def leaves(type_name: str) -> list[str]:
    return [n for n, f in published(type_name).items() if not isinstance(get_named_type(f.type), GraphQLObjectType)]


def selection(type_name: str, group: Group) -> list[str]:
    """The fields of `type_name` in `group`, each with enough below it to compare answers."""
    out = []
    for name, gql in published(type_name).items():
        if group_of(gql.extensions["strawberry-definition"]) is not group:
            continue
        named = get_named_type(gql.type)
        if not isinstance(named, GraphQLObjectType):
            out.append(name)
        elif named.name in GUARDED_TYPES:
            out.append(f"{name} {{ __typename }}")
        else:
            out.append(f"{name} {{ {' '.join(leaves(named.name))} }}")
    return out


def names(type_name: str, group: Group) -> list[str]:
    return [s.split(" ")[0] for s in selection(type_name, group)]


def task_query(group: Group) -> str:
    lines = " ".join(selection("TraceEvent", group)) or "__typename"
    return (
        f"query($id: ID!) {{ task(id: $id) {{ __typename {' '.join(selection('AgentTask', group))} "
        f"lines: trace {{ __typename {lines} }} }} }}"
    )


def help_query(group: Group) -> str:
    return f"query($id: ID!) {{ agentHelp(id: $id) {{ __typename {' '.join(selection('AgentHelp', group))} }} }}"


def as_read_by(full: dict, fields: list[str], group: Group, allowed: frozenset[Group]) -> dict:
    """What a reader sees of `full`: a field of a group they may not read is null, and a list of one empty."""
    return {k: (v if k not in fields or group in allowed else [] if isinstance(v, list) else None)
            for k, v in full.items()}


def content_access(full: str, allowed: frozenset[Group]) -> str:
    if full in {"ERASED", "WITHHELD"}:
        return full
    return "SHOWN" if Group.CONTENT in allowed else "DENIED"


def readable_groups(allowed: frozenset[Group]) -> list[str]:
    return [group.name for group in TABLE_GROUPS if group in allowed]


def expected_task(full: dict | None, group: Group, allowed: frozenset[Group]) -> dict | None:
    if full is None or not allowed:
        return None
    task = as_read_by(full, names("AgentTask", group), group, allowed)
    if "readableGroups" in task:
        task["readableGroups"] = readable_groups(allowed)
    task["lines"] = [as_read_by(line, names("TraceEvent", group), group, allowed) for line in full["lines"]]
    for line in task["lines"]:
        if "contentAccess" in line:
            line["contentAccess"] = content_access(line["contentAccess"], allowed)
    return task


POLICIES = "mutation($input: PoliciesInput!) { definePolicies(input: $input) { holdsRecords } }"
REVIEW = "mutation($input: ReviewInput!) { reviewTask(input: $input) { verdict } }"
HOLD = "mutation($input: HoldInput!) { holdWork(input: $input) { __typename } }"
RELEASE = "mutation($input: HoldInput!) { releaseHold(input: $input) { __typename } }"


@dataclass
class World:
    shop: Shop
    root: str
    sub: str
    help: str
    outside: str
    everything: str
    full: dict[tuple[str, Group], Any] = field(default_factory=dict)

    async def ask(self, query: str, id: str, token: str | None) -> Any:
        data = await self.shop.client.ok(query, {"id": id}, token)
        return next(iter(data.values()))


async def run_the_shop(shop: Shop) -> World:
    """Mia asks for an estimate; the Estimator hands a part of it to itself for Sam, and asks Noor a question;
    Noor asks that part to stop."""
    await shop.setup()
    extra = {"skillVersion": "2", "session": "chat-7", "workflowRun": "run-1", "runStep": "estimate",
             "instructionSet": 3, "instructionsSent": "Estimate in whole hours."}
    root = (await shop.start(**extra))["id"]
    await shop.model_call(root)
    sub = (await shop.start(parent=root, requester={"id": "sam", "name": "Sam"}, about="Parts for T-7",
                            trigger="The estimate needs parts.", entityId="T-7/parts", **extra))["id"]
    await shop.model_call(sub)
    await shop.tool(sub, "PartsFor", {"fault": "rear brake does not bite"}, ["brake pads", "cable"], "c1")
    await shop.model_call(sub, classification="REDACTED", response={"text": "pads"})
    help = (await shop.write("askForHelp", {"task": sub, "question": "Rim or disc?", "askedOf": {"id": "noor"}}))["id"]
    await shop.write("sendBack", {"help": help, "answer": "Rim.", "by": {"id": "noor", "name": "Noor"}})
    await shop.client.ok("mutation($input: StopTaskInput!) { stopTask(input: $input) { id } }",
                         {"input": {"task": sub, "reason": "Parts are known."}}, shop.noor)
    await shop.end(sub, outcome="Pads and a cable.", result={"parts": ["brake pads", "cable"]})
    await shop.end(root, outcome="Estimated one hour.", result={"hours": 1})
    await shop.client.ok(POLICIES, {"input": {"holdsRecords": ["Counsel"]}}, shop.kit)
    for task, verdict in ((root, "APPROVED"), (sub, "NOTED")):
        await shop.client.ok(REVIEW, {"input": {"task": task, "verdict": verdict, "score": 0.5, "note": "Checked."}},
                             shop.noor)
    await shop.client.ok(HOLD, {"input": {"task": root, "reason": "A complaint is open."}}, shop.person("carla", "Counsel"))
    outside = (await shop.write("askForHelp", {"question": "Open on Sunday?", "askedOf": {"id": "olga"}}))["id"]
    await shop.write("sendBack", {"help": outside, "answer": "No.", "by": {"id": "olga", "name": "Olga"}})
    everything = shop.person("eve", *ROLES.values())
    world = World(shop, root, sub, help, outside, everything)
    for group in TABLE_GROUPS:
        for target in (root, sub):
            world.full[(target, group)] = await world.ask(task_query(group), target, everything)
        world.full[(help, group)] = await world.ask(help_query(group), help, everything)
    return world


@pytest.fixture(scope="module")
async def world(app):
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agentlog.test") as http:
        yield await run_the_shop(Shop(Client(http)))


CASES = [(label, group) for label in READERS for group in TABLE_GROUPS]


@pytest.mark.parametrize("label,group", CASES, ids=[f"{label}-{group.value}" for label, group in CASES])
async def test_a_reader_reads_a_field_group_of_the_task_its_lines_and_its_help_as_the_table_says(world, label, group):
    reader, token = READERS[label]
    allowed = groups_for(reader)
    who = token(world.shop)

    for target in (world.root, world.sub):
        observed = await world.ask(task_query(group), target, who)
        assert observed == expected_task(world.full[(target, group)], group, allowed), target
    observed_help = await world.ask(help_query(group), world.help, who)
    full_help = world.full[(world.help, group)]
    assert observed_help == (as_read_by(full_help, names("AgentHelp", group), group, allowed) if allowed else None)


@pytest.mark.parametrize("label", READERS)
async def test_a_task_exists_for_a_reader_only_when_the_table_gives_them_a_group(world, label):
    reader, token = READERS[label]
    who = token(world.shop)
    listed = await world.shop.client.ok("{ tasks { edges { node { id } } } }", token=who)
    check = await world.ask("query($id: ID!) { verifyTrace(task: $id) { intact } }", world.sub, who)

    seen = bool(groups_for(reader))
    assert sorted(e["node"]["id"] for e in listed["tasks"]["edges"]) == (sorted([world.root, world.sub]) if seen else [])
    assert check == ({"intact": True} if seen else None)


def ledger_query(group: Group) -> str:
    return task_query(group).replace("query($id: ID!) { task(id: $id)", "query { ledger")


@pytest.mark.parametrize("label,group", CASES, ids=[f"{label}-{group.value}" for label, group in CASES])
async def test_the_ledger_is_read_by_its_readers_alone_as_the_table_says(world, label, group):
    """The tenant's ledger (SPEC 9.3) is a task read by LEDGER_READERS only, whatever else a reader reads."""
    reader, token = READERS[label]
    allowed = groups_for(reader) if reader in LEDGER_READERS else frozenset()
    full = await world.ask(ledger_query(group), "", world.everything)

    observed = await world.ask(ledger_query(group), "", token(world.shop))

    assert full is not None and full["lines"]
    assert observed == expected_task(full, group, allowed)


HELP_CASES = [(label, group) for label in HELP_READERS for group in TABLE_GROUPS]


@pytest.mark.parametrize("label,group", HELP_CASES, ids=[f"{label}-{group.value}" for label, group in HELP_CASES])
async def test_help_asked_outside_any_work_is_read_as_its_own_table_says(world, label, group):
    reader, token = HELP_READERS[label]
    allowed = groups_for(reader, HELP_OUTSIDE_WORK)
    full = await world.ask(help_query(group), world.outside, world.everything)

    observed = await world.ask(help_query(group), world.outside, token(world.shop))

    assert observed == (as_read_by(full, names("AgentHelp", group), group, allowed) if allowed else None)


@pytest.mark.parametrize("group", TABLE_GROUPS)
async def test_the_full_answers_the_matrix_compares_with_hold_every_field(world, group):
    """So that no row of the matrix passes by comparing nulls with nulls."""
    answers = [world.full[(t, group)] for t in (world.root, world.sub)]
    lines = [line for answer in answers for line in answer["lines"]]
    helps = [world.full[(world.help, group)]]
    for type_name, objects in (("AgentTask", answers), ("TraceEvent", lines), ("AgentHelp", helps)):
        for name in names(type_name, group):
            if name not in SET_ONLY_BY_ERASURE:
                assert any(o[name] not in (None, []) for o in objects), f"{type_name}.{name} is never set"


SENTENCES = ("summary", "summarySalt")
CONTENT = ("payload", "payloadSalt")
CARRIES_THE_CHAIN = ("seq", "summaryHash", "payloadHash", "prevHash", "hash")


async def export_lines(world: World, task: str, token: str | None) -> list[dict] | None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = await world.shop.client.http.get(f"/export/{task}", headers=headers)
    if response.status_code in (401, 404):
        assert response.status_code == (401 if token is None else 404)
        return None
    assert response.status_code == 200
    return [orjson.loads(line) for line in response.content.splitlines()[1:]]


def exported_as_read_by(full: dict, allowed: frozenset[Group]) -> dict:
    if Group.FIGURES not in allowed:
        return {key: full[key] for key in CARRIES_THE_CHAIN}
    hidden = (SENTENCES if Group.SENTENCES not in allowed else ()) + (CONTENT if Group.CONTENT not in allowed else ())
    return {key: (None if key in hidden else value) for key, value in full.items()}


@pytest.mark.parametrize("label", READERS)
async def test_an_export_holds_what_the_table_lets_the_reader_read_of_each_line(world, label):
    reader, token = READERS[label]
    allowed = groups_for(reader)
    full = await export_lines(world, world.root, world.everything)

    observed = await export_lines(world, world.root, token(world.shop))

    assert all(line[key] is not None for line in full for key in ("summary", "summarySalt", "payloadSalt"))
    assert observed == ([exported_as_read_by(line, allowed) for line in full] if allowed else None)


async def test_the_requester_of_a_sub_task_exports_its_lines_and_only_the_hashes_of_the_lines_above(world):
    full = await export_lines(world, world.sub, world.everything)
    sub_lines = await world.ask("query($id: ID!) { task(id: $id) { trace { seq } } }", world.sub, world.everything)
    own = {line["seq"] for line in sub_lines["trace"]}

    observed = await export_lines(world, world.sub, world.shop.person("sam", "Mechanic"))

    assert observed == [line if line["seq"] in own else exported_as_read_by(line, frozenset()) for line in full]
    assert await export_lines(world, world.root, world.shop.person("sam", "Mechanic")) is None


async def test_the_requester_of_a_sub_task_reads_it_and_what_is_under_it_not_the_task_above(world):
    sam = world.shop.person("sam", "Mechanic")
    content = " ".join(selection("AgentTask", Group.CONTENT) + selection("AgentTask", Group.WORDS))
    query = f"query($id: ID!) {{ task(id: $id) {{ {content} parent {{ id }} root {{ id }} lineage {{ id }} " \
            f"record {{ seq summary payload }} }} }}"
    everything = await world.ask(query, world.sub, world.everything)

    theirs = await world.ask(query, world.sub, sam)
    above = await world.ask(query, world.root, sam)
    listed = await world.shop.client.ok("{ tasks { edges { node { id } } } }", token=sam)

    assert above is None
    assert [e["node"]["id"] for e in listed["tasks"]["edges"]] == [world.sub]
    assert theirs["parent"] is None and theirs["root"] is None and theirs["lineage"] == []
    assert {k: theirs[k] for k in theirs if k not in {"parent", "root", "lineage", "record"}} == \
           {k: everything[k] for k in everything if k not in {"parent", "root", "lineage", "record"}}
    sub_lines = await world.ask("query($id: ID!) { task(id: $id) { trace { seq } } }", world.sub, world.everything)
    own = {line["seq"] for line in sub_lines["trace"]}
    assert [line for line in everything["record"] if line["seq"] in own] == theirs["record"]
    assert len(theirs["record"]) < len(everything["record"])


async def test_the_requester_of_the_task_above_reads_the_sub_task_in_full(world):
    query = "query($id: ID!) { task(id: $id) { given result requester { id } record { seq payload } } }"
    assert await world.ask(query, world.sub, world.shop.mia) == await world.ask(query, world.sub, world.everything)


async def test_readable_groups_say_per_task_what_a_supervisor_who_asked_for_the_sub_task_reads(world):
    sam = world.shop.person("sam", "Manager")
    query = "query($id: ID!) { task(id: $id) { readableGroups subtree { id readableGroups } } }"

    above = await world.ask(query, world.root, sam)
    theirs = await world.ask(query, world.sub, sam)

    assert above == {"readableGroups": ["FIGURES", "WORDS", "SENTENCES"],
                     "subtree": [{"id": world.sub, "readableGroups": ["FIGURES", "WORDS", "SENTENCES", "CONTENT"]}]}
    assert theirs == {"readableGroups": ["FIGURES", "WORDS", "SENTENCES", "CONTENT"], "subtree": []}


REQUESTER_FILTER = "query($who: String) { tasks(filter: {requester: $who}) { edges { node { id } } } }"


@pytest.mark.parametrize("label", ["readsAllAgentWork", "kit"])
async def test_a_figures_only_reader_may_not_filter_on_the_requester(world, label):
    error = await world.shop.client.error(REQUESTER_FILTER, {"who": "mia"}, READERS[label][1](world.shop))

    assert error["extensions"]["code"] == "FORBIDDEN"
    assert "requester" in error["message"]


@pytest.mark.parametrize("label", ["requester", "supervisesAgents", "auditsAgents", "teachesAgents",
                                   "erasesAgentRecords"])
async def test_a_reader_of_words_filters_on_the_requester_among_what_they_see(world, label):
    data = await world.shop.client.ok(REQUESTER_FILTER, {"who": "sam"}, READERS[label][1](world.shop))

    assert [e["node"]["id"] for e in data["tasks"]["edges"]] == [world.sub]


async def test_a_requester_of_sub_tasks_in_many_trees_lists_only_those_and_no_page_hints_at_more(client):
    shop = Shop(client)
    await shop.setup()
    theirs = []
    for n in range(10):
        root = (await shop.start(requester={"id": "olga"}))["id"]
        theirs.append((await shop.start(parent=root, requester={"id": "sam"}))["id"])
    sam = shop.person("sam", "Mechanic")

    page = (await shop.client.ok("{ tasks(first: 10) { edges { node { id } } pageInfo { hasNextPage } } }",
                                 token=sam))["tasks"]

    assert sorted(e["node"]["id"] for e in page["edges"]) == sorted(theirs)
    assert page["pageInfo"]["hasNextPage"] is False


async def refused_or_done(shop: Shop, query: str, input: dict, token: str | None) -> str:
    body = await shop.client.post(query, {"input": input}, token)
    return body["errors"][0]["extensions"]["code"] if body.get("errors") else "DONE"


@pytest.mark.parametrize("label", READERS)
async def test_a_reader_reviews_a_task_exactly_when_they_are_a_person_who_reads_its_sentences(client, label):
    reader, token = READERS[label]
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()
    allowed = groups_for(reader)

    done = await refused_or_done(shop, REVIEW, {"task": task, "verdict": "APPROVED"}, token(shop))
    reviews = (await shop.read(task, shop.noor, "reviews { by { id } }"))["reviews"]

    expected = ("DONE" if Group.SENTENCES in allowed and reader is not Reader.KIT
                else "UNAUTHENTICATED" if label == "no token"
                else "FORBIDDEN" if allowed else "NOT_FOUND")
    assert done == expected
    assert len(reviews) == (1 if expected == "DONE" else 0)


@pytest.mark.parametrize("label", [*READERS, "holdsRecords"])
async def test_only_a_person_holding_a_role_holds_records_names_holds_and_releases_a_tree(client, label):
    shop = Shop(client)
    await shop.setup()
    await shop.client.ok(POLICIES, {"input": {"holdsRecords": ["Counsel"]}}, shop.kit)
    task = await shop.estimate()
    token = shop.person("carla", "Counsel") if label == "holdsRecords" else READERS[label][1](shop)
    input = {"task": task, "reason": "A complaint is open."}

    held = await refused_or_done(shop, HOLD, input, token)
    hold = (await shop.read(task, shop.noor, "hold { by { id } }"))["hold"]
    released = await refused_or_done(shop, RELEASE, input, token) if held == "DONE" else None

    expected = "DONE" if label == "holdsRecords" else "UNAUTHENTICATED" if label == "no token" else "FORBIDDEN"
    assert held == expected
    assert hold == ({"by": {"id": "carla"}} if expected == "DONE" else None)
    assert released in (None, "DONE")


WEBHOOK = "mutation($input: WebhookInput!) { defineWebhook(input: $input) { id } }"
WEBHOOKS = "{ webhooks { id url events secret deliveries(first: 5) { event attempts status } } }"


@pytest.mark.parametrize("label", READERS)
async def test_the_webhooks_and_their_deliveries_are_read_by_the_kit_and_auditors_only(client, label, configure):
    configure(webhook_allow_private=True)
    reader, token = READERS[label]
    shop = Shop(client)
    await shop.setup()
    hook = (await shop.client.ok(WEBHOOK, {"input": {"url": "http://127.0.0.1:1/h", "events": ["AgentTaskStarted"]}},
                                 shop.kit))["defineWebhook"]
    await shop.start()

    read = (await shop.client.ok(WEBHOOKS, {}, token(shop)))["webhooks"]
    defined = await refused_or_done(shop, WEBHOOK, {"url": "http://127.0.0.1:2/h", "events": ["STAND_IN"]},
                                    token(shop))
    await settle_owed(shop.tenant)

    full = [{"id": hook["id"], "url": "http://127.0.0.1:1/h", "events": ["AgentTaskStarted"], "secret": None,
             "deliveries": [{"event": "AgentTaskStarted", "attempts": 0, "status": None}]}]
    assert read == (full if reader in WEBHOOK_READERS else [])
    assert defined == ("DONE" if reader is Reader.KIT else "UNAUTHENTICATED" if label == "no token" else "FORBIDDEN")
