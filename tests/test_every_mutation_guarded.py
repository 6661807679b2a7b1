"""Every mutation in the schema is guarded: found by walking the schema, so a new one cannot slip past.

A mutation says who may call it at the start of its description, and the published schema documents it:
"Kit only." for the kit's writes, the erasure capability for erasure. One that says neither fails here.
Everyone else is refused with FORBIDDEN (UNAUTHENTICATED without a token), and nothing is written.
"""

from __future__ import annotations

from typing import Any

import graphql
import pytest

from graph.api.mutations.answer import HOLDERS, REVIEWERS
from graph.api.mutations.erasure import REQUIRES
from graph.api.mutations.stop import WHO as STOPPERS
from graph.api.schema import build_schema
from permissions.tokens import issue_token
from tests.shop import ROLES, Shop
from tests.tables import state

KIT_ONLY = "Kit only."
SCHEMA = build_schema()._schema
EVERY_ROLE = tuple(ROLES.values())


def who_may_call(name: str) -> str:
    description = SCHEMA.mutation_type.fields[name].description or ""
    if description.startswith(KIT_ONLY):
        return "kit"
    if REQUIRES in description:
        return "eraser"
    if HOLDERS in description:
        return "holder"
    if REVIEWERS in description:
        return "reviewer"
    if STOPPERS in description:
        return "stopper"
    raise AssertionError(f"{name}: its description says none of {KIT_ONLY!r}, {REQUIRES!r}, {HOLDERS!r}, "
                         f"{REVIEWERS!r}, {STOPPERS!r}")


MUTATIONS = sorted(SCHEMA.mutation_type.fields)
KIT_MUTATIONS = [name for name in MUTATIONS if who_may_call(name) == "kit"]
ERASURES = [name for name in MUTATIONS if who_may_call(name) == "eraser"]
HOLDS = [name for name in MUTATIONS if who_may_call(name) == "holder"]
REVIEWS = [name for name in MUTATIONS if who_may_call(name) == "reviewer"]
STOPS = [name for name in MUTATIONS if who_may_call(name) == "stopper"]


def one_of(type_: graphql.GraphQLInputObjectType) -> bool:
    definition = type_.extensions.get("strawberry-definition")
    return type_.is_one_of or bool(getattr(definition, "is_one_of", False))


def value_of(type_: graphql.GraphQLInputType, task: str) -> Any:
    """The least value of a type that GraphQL accepts; every id is the shop's finished task."""
    type_ = graphql.get_nullable_type(type_)
    if isinstance(type_, graphql.GraphQLList):
        return [value_of(type_.of_type, task)]
    if isinstance(type_, graphql.GraphQLInputObjectType) and one_of(type_):
        name, field = next(iter(type_.fields.items()))
        return {name: value_of(field.type, task)}
    if isinstance(type_, graphql.GraphQLInputObjectType):
        return {name: value_of(field.type, task) for name, field in type_.fields.items()
                if graphql.is_non_null_type(field.type) and field.default_value is graphql.Undefined}
    if isinstance(type_, graphql.GraphQLEnumType):
        return next(iter(type_.values))
    return {"ID": task, "String": "T-7", "Int": 1, "Long": 1, "Float": 1.0, "Boolean": False, "JSON": {}}[type_.name]


def call(name: str, task: str) -> tuple[str, dict[str, Any]]:
    field = SCHEMA.mutation_type.fields[name]
    args = {arg: a for arg, a in field.args.items() if graphql.is_non_null_type(a.type)}
    declared = ", ".join(f"${arg}: {a.type}" for arg, a in args.items())
    passed = ", ".join(f"{arg}: ${arg}" for arg in args)
    selection = "" if graphql.is_leaf_type(graphql.get_named_type(field.type)) else " { __typename }"
    document = f"mutation{f'({declared})' if declared else ''} {{ {name}{f'({passed})' if passed else ''}{selection} }}"
    return document, {arg: value_of(a.type, task) for arg, a in args.items()}


@pytest.fixture
async def finished(client) -> tuple[Shop, str]:
    shop = Shop(client)
    await shop.setup()
    return shop, await shop.estimate()


def test_every_mutation_says_who_may_call_it():
    assert KIT_MUTATIONS and ERASURES and HOLDS and REVIEWS and STOPS
    assert set(KIT_MUTATIONS) | set(ERASURES) | set(HOLDS) | set(REVIEWS) | set(STOPS) == set(MUTATIONS)


async def refused(shop: Shop, name: str, task: str, token: str | None) -> str:
    document, variables = call(name, task)
    before = await state()
    body = await shop.client.post(document, variables, token)
    assert await state() == before, f"{name} wrote something for a caller it refused"
    assert body.get("data") in (None, {name: None}), (name, body)
    return body["errors"][0]["extensions"]["code"]


@pytest.mark.parametrize("name", KIT_MUTATIONS)
async def test_a_kit_mutation_refuses_every_caller_but_a_kit_token(finished, name):
    shop, task = finished
    people = {role: shop.person(f"p-{role.lower()}", role) for role in EVERY_ROLE}
    people["every role"] = shop.person("boss", *EVERY_ROLE)
    people["requester"] = shop.mia

    for who, token in people.items():
        assert await refused(shop, name, task, token) == "FORBIDDEN", who
    assert await refused(shop, name, task, None) == "UNAUTHENTICATED"

    body = await shop.client.post(*call(name, task), shop.kit)
    assert all(e["extensions"]["code"] != "FORBIDDEN" for e in body.get("errors") or []), body


@pytest.mark.parametrize("name", ERASURES)
async def test_an_erasure_refuses_every_caller_without_the_erasure_capability(finished, name):
    shop, task = finished
    eraser = ROLES["erasesAgentRecords"]
    others = [role for role in EVERY_ROLE if role != eraser]
    people = {role: shop.person(f"p-{role.lower()}", role) for role in others}
    people["every other role"] = shop.person("boss", *others)
    people["requester"] = shop.mia
    people["kit"] = shop.kit
    people["kit with the erasure role"] = issue_token("agent-kit", shop.tenant, roles=[eraser], kit=True)

    for who, token in people.items():
        assert await refused(shop, name, task, token) == "FORBIDDEN", who
    assert await refused(shop, name, task, None) == "UNAUTHENTICATED"

    body = await shop.client.post(*call(name, task), shop.person("pia", eraser))
    assert all(e["extensions"]["code"] != "FORBIDDEN" for e in body.get("errors") or []), body


@pytest.mark.parametrize("name", HOLDS)
async def test_a_hold_refuses_every_caller_without_a_role_holds_records_names(finished, name):
    shop, task = finished
    await shop.client.ok("mutation { definePolicies(input: {holdsRecords: [\"Counsel\"]}) { holdsRecords } }",
                         token=shop.kit)
    people = {role: shop.person(f"p-{role.lower()}", role) for role in EVERY_ROLE}
    people["every role"] = shop.person("boss", *EVERY_ROLE)
    people["requester"] = shop.mia
    people["kit"] = shop.kit
    people["kit with the role"] = issue_token("agent-kit", shop.tenant, roles=["Counsel"], kit=True)

    for who, token in people.items():
        assert await refused(shop, name, task, token) == "FORBIDDEN", who
    assert await refused(shop, name, task, None) == "UNAUTHENTICATED"

    body = await shop.client.post(*call(name, task), shop.person("carla", "Counsel"))
    assert all(e["extensions"]["code"] != "FORBIDDEN" for e in body.get("errors") or []), body


@pytest.mark.parametrize("name", REVIEWS)
async def test_a_review_refuses_the_kit_and_a_reader_of_figures_only(finished, name):
    shop, task = finished
    people = {"kit": shop.kit, "kit with every role": issue_token("agent-kit", shop.tenant, roles=list(EVERY_ROLE),
                                                                  kit=True),
              "figures only": shop.person("abe", ROLES["readsAllAgentWork"])}

    for who, token in people.items():
        assert await refused(shop, name, task, token) == "FORBIDDEN", who
    assert await refused(shop, name, task, None) == "UNAUTHENTICATED"

    body = await shop.client.post(*call(name, task), shop.noor)
    assert not body.get("errors"), body


@pytest.mark.parametrize("name", STOPS)
async def test_a_stop_refuses_the_kit_and_every_person_but_a_supervisor_and_who_asked(finished, name):
    shop, task = finished
    supervisor = ROLES["supervisesAgents"]
    others = [role for role in EVERY_ROLE if role != supervisor]
    people = {role: shop.person(f"p-{role.lower()}", role) for role in others}
    people["every other role"] = shop.person("boss", *others)
    people["kit"] = shop.kit
    people["kit with the supervisor role"] = issue_token("agent-kit", shop.tenant, roles=[supervisor], kit=True)

    for who, token in people.items():
        assert await refused(shop, name, task, token) == "FORBIDDEN", who
    assert await refused(shop, name, task, None) == "UNAUTHENTICATED"

    for allowed in (shop.person("pat", supervisor), shop.mia):
        body = await shop.client.post(*call(name, task), allowed)
        assert all(e["extensions"]["code"] != "FORBIDDEN" for e in body.get("errors") or []), body
