"""A task started through `AsyncKit`: its lines, its tool calls, its sub-tasks, its end."""

from __future__ import annotations

import time
import uuid
from contextvars import ContextVar, Token
from types import TracebackType
from typing import TYPE_CHECKING, Any, Unpack

from agentlog_kit.batch import Batches
from agentlog_kit.errors import AgentlogError, StopAsked, Unavailable
from agentlog_kit.types import (
    EndFields,
    Help,
    ModelCallFields,
    Principal,
    TaskFields,
    TaskStatus,
    ToolCallFields,
    ToolResultFields,
)
from agentlog_kit.values import ending_status, failure_outcome
from agentlog_kit.wire import graphql_input

if TYPE_CHECKING:
    from agentlog_kit.async_kit import AsyncKit

CURRENT: ContextVar[AsyncTask | None] = ContextVar("agentlog_kit_current_async_task", default=None)


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
        """Sends every line waiting; raises what the server refused, now or in an earlier background send, and
        `StopAsked` when it answered that the work was asked to stop."""
        await self.batches.flush()

    async def stop_asked(self) -> StopAsked | None:
        """Whether a person asked this work, or work above it, to stop, for a loop that writes rarely: the stop
        (as the `StopAsked` a write would raise, not raised) or None. Lines waiting are sent first."""
        try:
            await self.flush()
        except StopAsked as stop:
            return stop
        document = "query($id: ID!) { task(id: $id) { lineage { stopAsked { by { id name } reason at } } " \
                   "stopAsked { by { id name } reason at } } }"
        task = (await self.kit.wire.query(document, {"id": self.id}))["task"] or {}
        for above in [task, *reversed(task.get("lineage") or [])]:
            if above.get("stopAsked"):
                return StopAsked(above["stopAsked"])
        return None

    async def end(self, status: TaskStatus = "DONE", **fields: Unpack[EndFields]) -> None:
        await self.flush()
        key = fields.get("idempotency_key") or str(uuid.uuid4())
        ending = {"outcome": self.outcome, "result": self.result, **fields, "task": self.id, "status": status,
                  "idempotency_key": key}
        await self.kit.wire.mutate("endTask", "EndTaskInput", graphql_input(ending), "id", heed=False)
        self.ended = True
        self.kit.open.discard(self)
        await self.batches.close()

    async def close(self, error: BaseException | None) -> None:
        """Ends the task as a `with` block leaves it: DONE, or FAILED with the error's message. When the block
        raised, a failure to record is added to its exception as a note rather than replacing it."""
        if self.ended:
            return
        try:
            await self.flush()
        except Unavailable as away:
            if error is None:
                raise
            error.add_note(f"agentlog: task {self.id} could not be ended: {away}")
            return
        except StopAsked as stop:
            if error is None:
                await self.end("STOPPED", outcome=failure_outcome(stop))
                raise
        except AgentlogError as refused:
            if error is None:
                await self.end("FAILED", outcome=failure_outcome(refused))
                raise
            error.add_note(f"agentlog: lines of task {self.id} were not recorded: {refused}")
        if error is None:
            await self.end("DONE")
        else:
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
