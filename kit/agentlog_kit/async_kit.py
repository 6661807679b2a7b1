"""`AsyncKit`: records agents' work in agentlog from asyncio code. `Kit` (sync) runs the same code."""

from __future__ import annotations

import functools
import inspect
import uuid
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, ParamSpec, TypeVar, Unpack

import httpx

from agentlog_kit.async_task import CURRENT, AsyncTask, AsyncTaskScope
from agentlog_kit.errors import StopAsked
from agentlog_kit.types import Agent, Help, ModelPrice, Policies, PriceFields, Principal, TaskFields, Webhook
from agentlog_kit.values import arguments, jsonable, principal, text
from agentlog_kit.wire import Retry, Wire, graphql_input

P = ParamSpec("P")
R = TypeVar("R")

AGENT_FIELDS = "name purpose roles transcriptReaders logging"
POLICY_FIELDS = "supervisesAgents auditsAgents teachesAgents readsAllAgentWork erasesAgentRecords"
HELP_FIELDS = "id askedAt answeredAt"
WEBHOOK_FIELDS = "id url events secret"
PRICE_FIELDS = "model provider inputMicrosPerMillion outputMicrosPerMillion cachedInputMicrosPerMillion effectiveFrom"


class AsyncKit:
    """A kit's connection to agentlog. `url` is the server (`http://host:port`, or its `/graphql` address);
    `token` a kit token. Lines are sent in `recordLines` batches of `batch_lines`, at the latest `flush_after`
    seconds after the first waits; every call is retried as `retry` says. A write over a task's budget raises
    `BudgetExceeded`, or with `on_budget="warn"` warns (`BudgetWarning`)."""

    def __init__(self, url: str, token: str, *, batch_lines: int = 250, flush_after: float = 1.0,
                 retry: Retry | None = None, timeout: float = 30.0,
                 transport: httpx.AsyncBaseTransport | None = None, on_budget: str = "raise") -> None:
        if not 1 <= batch_lines <= 1000:
            raise ValueError("batch_lines: recordLines takes 1 to 1,000 lines.")
        self.batch_lines = batch_lines
        self.flush_after = flush_after
        self.wire = Wire(url, token, retry or Retry(), timeout, transport, on_budget)
        self.open: set[AsyncTask] = set()

    async def __aenter__(self) -> AsyncKit:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Sends the lines of tasks still open, then closes the connection."""
        try:
            for task in list(self.open):
                await task.flush()
        finally:
            for task in list(self.open):
                await task.batches.close()
            await self.wire.close()

    @property
    def consistency(self) -> str | None:
        """The token of this kit's latest answered write (with read replicas), sent along with each later call;
        hand it to another reader as its `X-Agentlog-Consistency` header to read what this kit wrote."""
        return self.wire.consistency

    async def query(self, document: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        """A GraphQL query's `data`, read with this kit's token and as of its latest write."""
        return await self.wire.query(document, variables)

    def current_task(self) -> AsyncTask | None:
        """The task of the innermost `task(...)` block or `traced` call running here."""
        task = CURRENT.get()
        return task if task is not None and task.kit is self else None

    async def register_agent(self, name: str, *, purpose: str | None = None, roles: list[str] | None = None,
                             transcript_readers: list[str] | None = None, logging: str | None = None,
                             idempotency_key: str | None = None) -> Agent:
        data = await self._write("registerAgent", "RegisterAgentInput", AGENT_FIELDS, {
            "name": name, "purpose": purpose, "roles": roles, "transcript_readers": transcript_readers,
            "logging": logging, "idempotency_key": idempotency_key})
        return Agent(data["name"], data["purpose"], data["roles"], data["transcriptReaders"], data["logging"])

    async def define_policies(self, *, supervises_agents: list[str] | None = None,
                              audits_agents: list[str] | None = None, teaches_agents: list[str] | None = None,
                              reads_all_agent_work: list[str] | None = None,
                              erases_agent_records: list[str] | None = None, retain_days: int | None = None,
                              retention_basis: str | None = None, holds_records: list[str] | None = None,
                              idempotency_key: str | None = None) -> Policies:
        """`retain_days` under the server's AGENTLOG_RETENTION_FLOOR_DAYS needs `retention_basis`, why the tenant
        may keep work for less; `holds_records` names the roles that may hold work."""
        data = await self._write("definePolicies", "PoliciesInput", POLICY_FIELDS, {
            "supervises_agents": supervises_agents, "audits_agents": audits_agents,
            "teaches_agents": teaches_agents, "reads_all_agent_work": reads_all_agent_work,
            "erases_agent_records": erases_agent_records, "retain_days": retain_days,
            "retention_basis": retention_basis, "holds_records": holds_records,
            "idempotency_key": idempotency_key})
        return Policies(data["supervisesAgents"], data["auditsAgents"], data["teachesAgents"],
                        data["readsAllAgentWork"], data["erasesAgentRecords"])

    async def define_webhook(self, url: str, events: list[str], *, secret: str | None = None,
                             idempotency_key: str | None = None) -> Webhook:
        """Sends the tenant's `events` (task event names, `CHAIN_BROKEN`, `STAND_IN`) to `url`, each delivery
        signed per Standard Webhooks with `secret` (`whsec_…`; made by the server when left out, and answered here
        only)."""
        data = await self._write("defineWebhook", "WebhookInput", WEBHOOK_FIELDS, {
            "url": url, "events": events, "secret": secret, "idempotency_key": idempotency_key})
        return Webhook(data["id"], data["url"], data["events"], data["secret"])

    async def remove_webhook(self, id: str) -> bool:
        """Removes the webhook and its delivery log; nothing more is sent to it."""
        data = await self.wire.send({"query": "mutation($id: ID!) { removeWebhook(id: $id) }", "variables": {"id": id}})
        return data["removeWebhook"]

    async def set_model_price(self, model: str, **fields: Unpack[PriceFields]) -> ModelPrice:
        """Sets the tenant's price of a model, from which calls recorded without `cost_micros` are priced."""
        data = await self._write("setModelPrice", "ModelPriceInput", PRICE_FIELDS, {**fields, "model": model})
        return ModelPrice(data["model"], data["provider"], data["inputMicrosPerMillion"],
                          data["outputMicrosPerMillion"], data["cachedInputMicrosPerMillion"], data["effectiveFrom"])

    def task(self, agent: str, skill: str, actor: Principal | None = None, requester: Principal | None = None,
             given: Any = None, parent: AsyncTask | str | None = None, limit_micros: int | None = None,
             **fields: Unpack[TaskFields]) -> AsyncTaskScope:
        """`async with kit.task(...) as t:` starts a task (its actor is the agent itself unless given) and ends it
        when the block ends: DONE, or FAILED with the message of the exception that escaped."""
        start = graphql_input({
            **fields, "agent": agent, "skill": skill, "actor": principal(actor) or {"id": agent},
            "requester": principal(requester), "given": text(given),
            "parent": parent.id if isinstance(parent, AsyncTask) else parent, "limit_micros": limit_micros})
        return AsyncTaskScope(self, start, parent if isinstance(parent, AsyncTask) else None)

    async def start_task(self, agent: str, skill: str, actor: Principal | None = None,
                         requester: Principal | None = None, given: Any = None,
                         parent: AsyncTask | str | None = None, limit_micros: int | None = None,
                         **fields: Unpack[TaskFields]) -> AsyncTask:
        """A task started outside a `with` block; end it with `await t.end(...)`."""
        scope = self.task(agent, skill, actor, requester, given, parent, limit_micros, **fields)
        return await scope.open()

    async def ask_for_help(self, question: str, asked_of: Principal, *, task: str | None = None,
                           idempotency_key: str | None = None) -> Help:
        data = await self._write("askForHelp", "AskForHelpInput", HELP_FIELDS, {
            "question": question, "asked_of": principal(asked_of), "task": task, "idempotency_key": idempotency_key})
        return Help(data["id"], data["askedAt"], data["answeredAt"])

    async def send_back(self, help: str, answer: str, by: Principal, *,
                        idempotency_key: str | None = None) -> Help:
        data = await self._write("sendBack", "SendBackInput", HELP_FIELDS, {
            "help": help, "answer": answer, "by": principal(by), "idempotency_key": idempotency_key})
        return Help(data["id"], data["askedAt"], data["answeredAt"])

    def traced(self, agent: str, skill: str, *, actor: Principal | None = None, requester: Principal | None = None,
               limit_micros: int | None = None, **fields: Unpack[TaskFields]
               ) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Awaitable[R]]]:
        """Records each call of an async function as a task: its arguments as `given`, its return value as
        `result`. Called inside another task of this kit, it is that task's sub-task."""

        def decorate(function: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
            signature = inspect.signature(function)

            @functools.wraps(function)
            async def run(*args: P.args, **kwargs: P.kwargs) -> R:
                given = arguments(signature, args, kwargs)
                async with self.task(agent, skill, actor=actor, requester=requester, given=given,
                                     parent=self.current_task(), limit_micros=limit_micros, **fields) as task:
                    value = await function(*args, **kwargs)
                    task.result = jsonable(value)
                return value

            return run

        return decorate

    async def _start(self, start: dict[str, Any]) -> AsyncTask:
        """A task started; one started under work asked to stop is ended STOPPED at once, and the stop raised."""
        try:
            data = await self.wire.mutate("startTask", "StartTaskInput",
                                          {"idempotencyKey": str(uuid.uuid4()), **start}, "id")
        except StopAsked as stop:
            await AsyncTask(self, stop.answer["id"], start.get("parent")).end("STOPPED", outcome=str(stop))
            raise
        task = AsyncTask(self, data["id"], start.get("parent"))
        self.open.add(task)
        return task

    async def _write(self, mutation: str, input_type: str, select: str, fields: dict[str, Any]) -> Any:
        input = graphql_input({**fields, "idempotency_key": fields.get("idempotency_key") or str(uuid.uuid4())})
        return await self.wire.mutate(mutation, input_type, input, select)
