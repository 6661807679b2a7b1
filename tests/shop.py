"""The small shop the tests tell their stories in: Mia asks, Noor manages, the Estimator works."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx

from models import AgentTask, TraceEvent
from models.ledger import ledger_id
from permissions.tokens import issue_token

ROLES = {
    "supervisesAgents": "Manager",
    "auditsAgents": "Auditor",
    "teachesAgents": "Teacher",
    "readsAllAgentWork": "Accountant",
    "erasesAgentRecords": "Privacy",
}

TASK_FIELDS = """
  id agent skill status cause about trigger given outcome result limitMicros spentMicros modelCalls toolCalls turns
  inputTokens outputTokens chainLength chainHead depth sequence path instructionsHash instructionsSent entityId
  requester { id name } actor { id name }
"""
LINE_FIELDS = """
  seq kind summary payload contentAccess model routeRule attempts costMicros tool toolCallId isError durationMs
  inputTokens outputTokens summarySalt payloadSalt summaryHash payloadHash prevHash hash erasedAt contentErasedAt
"""


def work(tenant: str) -> Any:
    """The tenant's tasks but its ledger, which is no agent's work."""
    return AgentTask.filter(tenant=tenant).exclude(id=ledger_id(tenant))


def work_lines(tenant: str) -> Any:
    """The lines of the tenant's work, but its ledger's."""
    return TraceEvent.filter(tenant=tenant).exclude(root_id=ledger_id(tenant))


class GraphQLFailed(AssertionError):
    pass


class Client:
    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def post(self, query: str, variables: dict | None = None, token: str | None = None) -> dict:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = await self.http.post("/graphql", json={"query": query, "variables": variables or {}}, headers=headers)
        assert response.status_code == 200, response.text
        return response.json()

    async def ok(self, query: str, variables: dict | None = None, token: str | None = None) -> dict:
        body = await self.post(query, variables, token)
        if body.get("errors"):
            raise GraphQLFailed(body["errors"])
        return body["data"]

    async def error(self, query: str, variables: dict | None = None, token: str | None = None) -> dict:
        body = await self.post(query, variables, token)
        assert body.get("errors"), f"expected an error, got {body}"
        return body["errors"][0]


@dataclass
class Shop:
    """One tenant: a kit token and a token per person."""

    client: Client
    tenant: str = field(default_factory=lambda: f"shop-{uuid.uuid4().hex[:8]}")

    @property
    def kit(self) -> str:
        return issue_token("agent-kit", self.tenant, kit=True)

    def person(self, sub: str, *roles: str, name: str | None = None) -> str:
        return issue_token(sub, self.tenant, roles=list(roles), name=name or sub.title())

    @property
    def mia(self) -> str:
        return self.person("mia", "Mechanic", name="Mia")

    @property
    def noor(self) -> str:
        return self.person("noor", "Manager", "Auditor", name="Noor")

    async def write(self, mutation: str, input: dict) -> dict:
        name = mutation.split("(")[0]
        query = f"mutation($input: {_input_type(name)}!) {{ {name}(input: $input) {{ {_returns(name)} }} }}"
        return (await self.client.ok(query, {"input": input}, self.kit))[name]

    async def setup(self, transcript_readers: list[str] | None = None, logging: str = "FULL", agent: str = "Estimator") -> None:
        await self.write("registerAgent", {
            "name": agent, "purpose": "You estimate bicycle repairs for a small workshop.",
            "roles": ["Helper"], "transcriptReaders": transcript_readers or [], "logging": logging,
        })
        await self.write("definePolicies", {cap: [role] for cap, role in ROLES.items()})

    async def start(self, **fields: Any) -> dict:
        input = {
            "agent": "Estimator", "skill": "EstimateRepair", "about": "Ticket T-7",
            "trigger": "Mia asked for an estimate of T-7.", "given": "Ticket T-7: rear brake does not bite.",
            "requester": {"id": "mia", "name": "Mia"}, "actor": {"id": "estimator", "name": "Estimator"},
            "limitMicros": 50000, "entityType": "Repair", "entityId": "T-7",
        }
        input.update(fields)
        return await self.write("startTask", input)

    async def model_call(self, task: str, **fields: Any) -> dict:
        input = {
            "task": task, "model": "Everyday", "routeRule": "llm:default", "provider": "scripted",
            "inputTokens": 120, "outputTokens": 30, "costMicros": 200, "durationMs": 40,
            "systemPrompt": "You estimate bicycle repairs.", "messages": [{"role": "user", "content": "T-7"}],
            "response": {"toolCalls": [{"name": "PartsFor"}]},
        }
        input.update(fields)
        return await self.write("recordModelCall", input)

    async def tool(self, task: str, tool: str, input: Any, output: Any, call_id: str | None = None, effect: str = "QUERY") -> None:
        await self.write("recordToolCall", {"task": task, "tool": tool, "toolCallId": call_id, "input": input, "effect": effect})
        await self.write("recordToolResult", {"task": task, "tool": tool, "toolCallId": call_id, "output": output, "durationMs": 7})

    async def end(self, task: str, status: str = "DONE", **fields: Any) -> dict:
        return await self.write("endTask", {"task": task, "status": status, **fields})

    async def estimate(self, **start: Any) -> str:
        """The estimate: three model calls of 200 micros, two tools, the estimate handed back."""
        task = (await self.start(**start))["id"]
        await self.model_call(task)
        await self.tool(task, "PartsFor", {"fault": "rear brake does not bite"}, ["brake pads", "cable"], "c1")
        await self.model_call(task)
        await self.tool(task, "NoteRepair", {"repair": "T-7", "note": "New pads and a cable: one hour."},
                        "Noted on T-7.", "c2", effect="CHANGE")
        await self.model_call(task, response={"text": "done"})
        await self.end(task, outcome="Estimated one hour.",
                       result={"hours": 1, "summary": "New pads and a cable.", "needsParts": True})
        return task

    async def read(self, task: str, token: str, fields: str = TASK_FIELDS) -> dict | None:
        data = await self.client.ok(f"query($id: ID!) {{ task(id: $id) {{ {fields} }} }}", {"id": task}, token)
        return data["task"]

    async def verify(self, task: str, token: str | None = None) -> dict:
        data = await self.client.ok(
            "query($id: ID!) { verifyTrace(task: $id) { intact lines brokenAt problem erased } }",
            {"id": task}, token or self.noor,
        )
        return data["verifyTrace"]

    async def check(self, task: str, token: str | None = None) -> dict:
        """verifyTrace with its reason."""
        data = await self.client.ok(
            "query($id: ID!) { verifyTrace(task: $id) { intact lines brokenAt reason problem erased } }",
            {"id": task}, token or self.noor,
        )
        return data["verifyTrace"]


INPUT_TYPES = {
    "registerAgent": "RegisterAgentInput", "definePolicies": "PoliciesInput", "startTask": "StartTaskInput",
    "recordModelCall": "ModelCallInput", "recordToolCall": "ToolCallInput", "recordToolResult": "ToolResultInput",
    "askForHelp": "AskForHelpInput", "sendBack": "SendBackInput", "endTask": "EndTaskInput",
}
RETURNS = {
    "registerAgent": "name roles transcriptReaders logging",
    "definePolicies": "supervisesAgents auditsAgents teachesAgents readsAllAgentWork erasesAgentRecords",
    "startTask": "id status depth sequence path chainLength chainHead",
    "endTask": "id status chainLength chainHead",
    "askForHelp": "id askedAt",
    "sendBack": "id answeredAt",
}


def _input_type(name: str) -> str:
    return INPUT_TYPES[name]


def _returns(name: str) -> str:
    return RETURNS.get(name, "seq kind hash costMicros")
