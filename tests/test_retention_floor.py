"""The retention floor (SPEC 9.3): the shop keeps records at least AGENTLOG_RETENTION_FLOOR_DAYS (six months by
default) unless it says why it may keep them for less, and what it says is kept with the policy."""

from __future__ import annotations

from agentlog_kit import AsyncKit
from tests.kit_reads import LiveShop
from tests.shop import Shop

POLICIES = ("mutation($input: PoliciesInput!) { definePolicies(input: $input) "
            "{ retainDays retentionBasis auditsAgents } }")
BASIS = "Repair estimates are not high-risk records; the shop's counsel agreed 30 days on 1 December."


async def shop_of(client) -> Shop:
    shop = Shop(client)
    await shop.setup()
    return shop


async def test_days_under_the_floor_without_a_basis_are_refused_and_nothing_changes(client):
    shop = await shop_of(client)

    refused = await client.error(POLICIES, {"input": {"retainDays": 30, "auditsAgents": ["Owner"]}}, shop.kit)
    blank = await client.error(POLICIES, {"input": {"retainDays": 182, "retentionBasis": "  "}}, shop.kit)

    assert refused["extensions"] == {"code": "BAD_INPUT", "field": "input.retainDays"}
    assert "183" in refused["message"] and "retentionBasis" in refused["message"]
    assert blank["extensions"] == {"code": "BAD_INPUT", "field": "input.retainDays"}
    assert (await client.ok(POLICIES, {"input": {}}, shop.kit))["definePolicies"] == {
        "retainDays": None, "retentionBasis": None, "auditsAgents": ["Auditor"]}


async def test_days_under_the_floor_with_a_basis_are_kept_with_it(client):
    shop = await shop_of(client)

    kept = await client.ok(POLICIES, {"input": {"retainDays": 30, "retentionBasis": BASIS}}, shop.kit)
    longer = await client.ok(POLICIES, {"input": {"retainDays": 183}}, shop.kit)

    assert kept["definePolicies"]["retainDays"] == 30 and kept["definePolicies"]["retentionBasis"] == BASIS
    assert longer["definePolicies"]["retainDays"] == 183 and longer["definePolicies"]["retentionBasis"] is None


async def test_the_floor_is_a_setting(client, configure):
    shop = await shop_of(client)
    configure(retention_floor_days=7)

    kept = await client.ok(POLICIES, {"input": {"retainDays": 30}}, shop.kit)
    refused = await client.error(POLICIES, {"input": {"retainDays": 6}}, shop.kit)

    assert kept["definePolicies"]["retainDays"] == 30
    assert refused["extensions"] == {"code": "BAD_INPUT", "field": "input.retainDays"}



async def test_the_kit_gives_a_basis_and_the_roles_that_hold(client, servers):
    shop = LiveShop(servers[0])
    async with AsyncKit(shop.url, shop.kit) as kit:
        await kit.define_policies(retain_days=30, retention_basis=BASIS, holds_records=["Counsel"])

    policies = await client.ok(POLICIES.replace("auditsAgents", "holdsRecords"), {"input": {}}, shop.kit)

    assert policies["definePolicies"] == {"retainDays": 30, "retentionBasis": BASIS, "holdsRecords": ["Counsel"]}
