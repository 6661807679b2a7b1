"""agents: the tenant's registered agents, for every caller of the tenant."""

from __future__ import annotations

from tests.shop import Shop

AGENTS = "{ agents { name purpose roles transcriptReaders logging } }"


async def test_every_caller_of_the_tenant_lists_its_agents_and_only_its_own(client):
    shop, other = Shop(client), Shop(client)
    await shop.setup(agent="Estimator", transcript_readers=["Auditor"])
    await shop.setup(agent="Clerk", logging="METADATA_ONLY")
    await other.setup(agent="Stranger")

    answers = [(await client.ok(AGENTS, token=token))["agents"]
               for token in (shop.kit, shop.mia, shop.noor, shop.person("stan"))]

    assert answers[0] == [
        {"name": "Clerk", "purpose": "You estimate bicycle repairs for a small workshop.", "roles": ["Helper"],
         "transcriptReaders": [], "logging": "METADATA_ONLY"},
        {"name": "Estimator", "purpose": "You estimate bicycle repairs for a small workshop.", "roles": ["Helper"],
         "transcriptReaders": ["Auditor"], "logging": "FULL"},
    ]
    assert all(answer == answers[0] for answer in answers)
    assert (await client.ok(AGENTS))["agents"] == []
