"""Reading back, as people of the shop, what the kit client recorded on a running server."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx

from permissions.tokens import issue_token
from tests.servers import Server

RECORD = """query($id: ID!) {
  task(id: $id) { id status outcome given result depth parent { id } chainLength modelCalls toolCalls spentMicros
                  children { id skill status }
                  record { seq kind task { id } model tool toolCallId costMicros inputTokens payload isError } }
  verifyTrace(task: $id) { intact lines brokenAt problem }
}"""


@dataclass
class LiveShop:
    server: Server
    tenant: str = field(default_factory=lambda: f"shop-{uuid.uuid4().hex[:8]}")

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def kit(self) -> str:
        return issue_token("agent-kit", self.tenant, kit=True)

    @property
    def mia(self) -> str:
        return issue_token("mia", self.tenant, roles=["Mechanic"], name="Mia")

    def read(self, task_id: str, url: str | None = None) -> dict[str, Any]:
        body = httpx.post((url or self.url) + "/graphql", json={"query": RECORD, "variables": {"id": task_id}},
                          headers={"Authorization": f"Bearer {self.mia}"}, timeout=30).json()
        assert not body.get("errors"), body
        return body["data"]

    async def aread(self, http: httpx.AsyncClient, task_id: str) -> dict[str, Any]:
        response = await http.post(self.url + "/graphql", json={"query": RECORD, "variables": {"id": task_id}},
                                   headers={"Authorization": f"Bearer {self.mia}"})
        body = response.json()
        assert not body.get("errors"), body
        return body["data"]
