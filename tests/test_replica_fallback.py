"""A replica that is gone when a read reaches it: the read is answered by the primary, with no error, and the
replica is left out. In-process, with a replica that was chosen while up and then stopped answering (nothing
listens on its port). Real replicas: tests/test_read_replicas.py."""

from __future__ import annotations

import time

import httpx
import pytest

from graph.app import create_app
from models.settings import load
from resolvers.events import replicas
from resolvers.events.replicas import Routing, replica_of
from tests.pg_cluster import free_port
from tests.shop import Client, Shop

pytestmark = pytest.mark.postgres_only

HEADER = "X-Agentlog-Consistency"


@pytest.fixture
async def gone(database, monkeypatch):
    """An app whose reads go to a replica that no longer answers, and that replica."""
    url = f"postgres://postgres@127.0.0.1:{free_port()}/agentlog"
    replica = replica_of(0, url)
    replica.up, replica.replayed, replica.caught_up_at = True, 2**62, time.monotonic() + 3600
    routing = Routing([replica], max_lag_s=5)
    routing.primary = replicas.get_connection("default")
    routing.heard_heartbeat(time.monotonic() + 3600)
    monkeypatch.setattr(replicas, "_routing", routing)
    transport = httpx.ASGITransport(app=create_app(load(database_url=database, read_database_urls=url)))
    async with httpx.AsyncClient(transport=transport, base_url="http://agentlog.test") as http:
        yield http, replica
    await replica.client.close()


async def test_a_query_on_a_gone_replica_is_answered_by_the_primary(gone):
    http, replica = gone
    shop = Shop(Client(http))
    await shop.setup()
    task = await shop.estimate()
    replica.up = True

    found = await shop.read(task, shop.noor, "id given")

    assert found == {"id": task, "given": "Ticket T-7: rear brake does not bite."}
    assert not replica.up


async def test_an_export_on_a_gone_replica_is_answered_by_the_primary(gone):
    http, replica = gone
    shop = Shop(Client(http))
    await shop.setup()
    task = await shop.estimate()
    replica.up = True

    response = await http.get(f"/export/{task}", headers={"Authorization": f"Bearer {shop.noor}"})

    assert response.status_code == 200 and task in response.text
    assert not replica.up


async def test_a_write_answers_the_primary_position_as_its_token(gone):
    http, _ = gone
    shop = Shop(Client(http))
    await shop.setup()
    query = "mutation($input: StartTaskInput!) { startTask(input: $input) { id } }"
    input = {"agent": "Estimator", "skill": "EstimateRepair", "about": "Ticket T-9", "trigger": "Mia asked.",
             "given": "T-9", "requester": {"id": "mia", "name": "Mia"}, "actor": {"id": "estimator", "name": "Estimator"}}

    response = await http.post("/graphql", json={"query": query, "variables": {"input": input}},
                               headers={"Authorization": f"Bearer {shop.kit}"})
    after = replicas.lsn_value(
        (await replicas.get_connection("default").execute_query_dict("SELECT pg_current_wal_lsn()::text AS l"))[0]["l"]
    )

    token = response.headers[HEADER]
    assert response.json()["extensions"] == {"consistency": token}
    assert 0 < replicas.lsn_value(token) <= after
