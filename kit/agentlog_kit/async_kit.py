"""`AsyncKit`: records agents' work in agentlog from asyncio code. `Kit` (sync) runs the same code."""

from __future__ import annotations

import functools
import inspect
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from contextvars import ContextVar, Token
from types import TracebackType
from typing import Any, ParamSpec, TypeVar, Unpack

import httpx

from agentlog_kit.batch import Batches
from agentlog_kit.errors import AgentlogError
from agentlog_kit.shapes import SHAPES, mutation_shapes
from agentlog_kit.types import (
    Agent,
    EndFields,
    Help,
    ModelCallFields,
    Policies,
    PriceFields,
    Principal,
    TaskFields,
    TaskStatus,
    ToolCallFields,
    ToolResultFields,
)
from agentlog_kit.wire import Retry, Wire, graphql_input

P = ParamSpec("P")
R = TypeVar("R")

AGENT_FIELDS = "name purpose roles transcriptReaders logging"
POLICY_FIELDS = "supervisesAgents auditsAgents teachesAgents readsAllAgentWork erasesAgentRecords"
HELP_FIELDS = "id askedAt answeredAt"
CURRENT: ContextVar[AsyncTask | None] = ContextVar("agentlog_kit_current_async_task", default=None)


def principal(value: Principal | None) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return {"id": value}
    return graphql_input({"id": value["id"], "name": value.get("name")})


def text(given: Any) -> str | None:
    """A brief as the server keeps it: text as it is, anything else as JSON."""
    if given is None or isinstance(given, str):
        return given
    return json.dumps(given, ensure_ascii=False, default=repr)


def jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False, default=repr))


def arguments(signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return json.dumps(dict(bound.arguments), ensure_ascii=False, default=repr)


def failure_outcome(error: BaseException) -> str:
    return str(error) or type(error).__name__


def ending_status(error: BaseException) -> TaskStatus:
    """An exception fails the task; a cancellation or an interrupt stops it."""
    return "FAILED" if isinstance(error, Exception) else "STOPPED"


class AsyncToolCall:
    """A tool call made; `result(...)` records what the tool answered."""

    def __init__(self, task: AsyncTask, tool: str, tool_call_id: str | None) -> None:
        self.task = task
        self.tool = tool
        self.tool_call_id = tool_call_id
        self.started = time.monotonic()

    async def result(self, output: Any = None, **fields: Unpack[ToolResultFields]) -> None:
        duration = fields.get("duration_ms")
        if duration is None:
            duration = round((time.monotonic() - self.started) * 1000)
        await self.task._line("toolResult", {**fields, "tool": self.tool, "tool_call_id": self.tool_call_id,
                                             "output": output, "duration_ms": duration})


class AsyncTask:
    """One piece of work started. Its lines wait in batches for `recordLines`; `end(...)` sends them and ends it.
    Set `result` and `outcome` inside a `with` block to have them sent when the block ends."""

    def __init__(self, kit: AsyncKit, id: str, parent: str | None) -> None:
        self.id = id
        self.parent = parent
        self.result: Any = None
        self.outcome: str | None = None
        self.ended = False
        self.kit = kit
        self.batches = Batches(self._send, kit.batch_lines, kit.flush_after)

    async def _send(self, lines: list[dict[str, Any]], key: str) -> None:
        await self.kit.wire.mutate("recordLines", "RecordLinesInput",
                                   {"task": self.id, "lines": lines, "idempotencyKey": key}, "lastSeq")

    async def _line(self, kind: str, fields: dict[str, Any]) -> None:
        await self.batches.add({kind: graphql_input(fields)})

    async def model_call(self, model: str, **fields: Unpack[ModelCallFields]) -> None:
        await self._line("modelCall", {**fields, "model": model})

    async def tool_call(self, tool: str, **fields: Unpack[ToolCallFields]) -> AsyncToolCall:
        await self._line("toolCall", {**fields, "tool": tool})
        return AsyncToolCall(self, tool, fields.get("tool_call_id"))

    async def ask_for_help(self, question: str, asked_of: Principal, *, idempotency_key: str | None = None) -> Help:
        await self.flush()
        return await self.kit.ask_for_help(question, asked_of, task=self.id, idempotency_key=idempotency_key)

    def sub_task(self, agent: str, skill: str, actor: Principal | None = None, requester: Principal | None = None,
                 given: Any = None, limit_micros: int | None = None, **fields: Unpack[TaskFields]) -> AsyncTaskScope:
        return self.kit.task(agent, skill, actor=actor, requester=requester, given=given, parent=self,
                             limit_micros=limit_micros, **fields)

    async def flush(self) -> None:
        """Sends every line waiting; raises what the server refused, now or in an earlier background send."""
        await self.batches.flush()

    async def end(self, status: TaskStatus = "DONE", **fields: Unpack[EndFields]) -> None:
        await self.flush()
        key = fields.get("idempotency_key") or str(uuid.uuid4())
        ending = {"outcome": self.outcome, "result": self.result, **fields, "task": self.id, "status": status,
                  "idempotency_key": key}
        await self.kit.wire.mutate("endTask", "EndTaskInput", graphql_input(ending), "id")
        self.ended = True
        self.kit.open.discard(self)
        await self.batches.close()

    async def close(self, error: BaseException | None) -> None:
        """Ends the task as a `with` block leaves it: DONE, or FAILED with the error's message."""
        if self.ended:
            return
        if error is None:
            try:
                await self.flush()
            except AgentlogError as refused:
                await self.end("FAILED", outcome=failure_outcome(refused))
                raise
            await self.end("DONE")
            return
        try:
            await self.flush()
        except AgentlogError as refused:
            error.add_note(f"agentlog: lines of task {self.id} were not recorded: {refused}")
        await self.end(ending_status(error), outcome=failure_outcome(error))


class AsyncTaskScope:
    """`async with kit.task(...) as t`: starts the task on entering, ends it on leaving."""

    def __init__(self, kit: AsyncKit, start: dict[str, Any], parent: AsyncTask | None) -> None:
        self.kit = kit
        self.start = start
        self.parent = parent
        self.task: AsyncTask | None = None
        self.token: Token[AsyncTask | None] | None = None

    async def open(self) -> AsyncTask:
        if self.parent is not None:
            await self.parent.flush()
        self.task = await self.kit._start(self.start)
        return self.task

    async def __aenter__(self) -> AsyncTask:
        task = await self.open()
        self.token = CURRENT.set(task)
        return task

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        if self.token is not None:
            CURRENT.reset(self.token)
        assert self.task is not None
        await self.task.close(error)


class AsyncKit:
    """A kit's connection to agentlog. `url` is the server (`http://host:port`, or its `/graphql` address);
    `token` a kit token. Lines are sent in `recordLines` batches of `batch_lines`, at the latest `flush_after`
    seconds after the first waits; every call is retried as `retry` says."""

    def __init__(self, url: str, token: str, *, batch_lines: int = 250, flush_after: float = 1.0,
                 retry: Retry | None = None, timeout: float = 30.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        if not 1 <= batch_lines <= 1000:
            raise ValueError("batch_lines: recordLines takes 1 to 1,000 lines.")
        self.batch_lines = batch_lines
        self.flush_after = flush_after
        self.wire = Wire(url, token, retry or Retry(), timeout, transport)
        self.open: set[AsyncTask] = set()
        self.shapes: dict[str, tuple[str, str]] | None = None

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
                              idempotency_key: str | None = None) -> Policies:
        data = await self._write("definePolicies", "PoliciesInput", POLICY_FIELDS, {
            "supervises_agents": supervises_agents, "audits_agents": audits_agents,
            "teaches_agents": teaches_agents, "reads_all_agent_work": reads_all_agent_work,
            "erases_agent_records": erases_agent_records, "retain_days": retain_days,
            "idempotency_key": idempotency_key})
        return Policies(data["supervisesAgents"], data["auditsAgents"], data["teachesAgents"],
                        data["readsAllAgentWork"], data["erasesAgentRecords"])

    async def set_model_price(self, model: str, **fields: Unpack[PriceFields]) -> None:
        """Sets the tenant's price of a model, from which calls recorded without `cost_micros` are priced."""
        if self.shapes is None:
            self.shapes = mutation_shapes(await self.wire.send({"query": SHAPES}))
        input_type, select = self.shapes.get("setModelPrice", ("SetModelPriceInput!", "{ __typename }"))
        input = graphql_input({"idempotency_key": str(uuid.uuid4()), **fields, "model": model})
        query = f"mutation($input: {input_type}) {{ setModelPrice(input: $input) {select} }}"
        await self.wire.send({"query": query, "variables": {"input": input}})

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
        data = await self.wire.mutate("startTask", "StartTaskInput",
                                      {"idempotencyKey": str(uuid.uuid4()), **start}, "id")
        task = AsyncTask(self, data["id"], start.get("parent"))
        self.open.add(task)
        return task

    async def _write(self, mutation: str, input_type: str, select: str, fields: dict[str, Any]) -> Any:
        input = graphql_input({**fields, "idempotency_key": fields.get("idempotency_key") or str(uuid.uuid4())})
        return await self.wire.mutate(mutation, input_type, input, select)
