"""`Kit`: the same calls as `AsyncKit`, for code without an event loop.

The asynchronous kit runs on an event loop in a thread of its own, which also sends batches in the background.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import inspect
import threading
from collections.abc import Callable, Coroutine
from contextvars import ContextVar, Token
from types import TracebackType
from typing import Any, ParamSpec, TypeVar, Unpack

import httpx

from agentlog_kit.async_kit import AsyncKit
from agentlog_kit.async_task import AsyncTask, AsyncTaskScope, AsyncToolCall
from agentlog_kit.errors import StopAsked
from agentlog_kit.types import (
    Agent,
    EndFields,
    Help,
    ModelCallFields,
    ModelPrice,
    Policies,
    PriceFields,
    Principal,
    TaskFields,
    TaskStatus,
    ToolCallFields,
    ToolResultFields,
    Webhook,
)
from agentlog_kit.values import arguments, jsonable
from agentlog_kit.wire import Retry

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")
CURRENT: ContextVar[Task | None] = ContextVar("agentlog_kit_current_task", default=None)


class ToolCall:
    def __init__(self, kit: Kit, call: AsyncToolCall) -> None:
        self.kit = kit
        self.call = call

    def result(self, output: Any = None, **fields: Unpack[ToolResultFields]) -> None:
        self.kit._run(self.call.result(output, **fields))


class Task:
    """One piece of work started; see `AsyncTask`."""

    def __init__(self, kit: Kit, task: AsyncTask) -> None:
        self.kit = kit
        self.task = task

    @property
    def id(self) -> str:
        return self.task.id

    @property
    def parent(self) -> str | None:
        return self.task.parent

    @property
    def result(self) -> Any:
        return self.task.result

    @result.setter
    def result(self, value: Any) -> None:
        self.task.result = value

    @property
    def outcome(self) -> str | None:
        return self.task.outcome

    @outcome.setter
    def outcome(self, value: str | None) -> None:
        self.task.outcome = value

    def model_call(self, model: str, **fields: Unpack[ModelCallFields]) -> None:
        self.kit._run(self.task.model_call(model, **fields))

    def tool_call(self, tool: str, **fields: Unpack[ToolCallFields]) -> ToolCall:
        return ToolCall(self.kit, self.kit._run(self.task.tool_call(tool, **fields)))

    def ask_for_help(self, question: str, asked_of: Principal, *, idempotency_key: str | None = None) -> Help:
        return self.kit._run(self.task.ask_for_help(question, asked_of, idempotency_key=idempotency_key))

    def sub_task(self, agent: str, skill: str, actor: Principal | None = None, requester: Principal | None = None,
                 given: Any = None, limit_micros: int | None = None, **fields: Unpack[TaskFields]) -> TaskScope:
        return self.kit.task(agent, skill, actor=actor, requester=requester, given=given, parent=self,
                             limit_micros=limit_micros, **fields)

    def flush(self) -> None:
        self.kit._run(self.task.flush())

    def stop_asked(self) -> StopAsked | None:
        """See `AsyncTask.stop_asked`."""
        return self.kit._run(self.task.stop_asked())

    def end(self, status: TaskStatus = "DONE", **fields: Unpack[EndFields]) -> None:
        self.kit._run(self.task.end(status, **fields))


class TaskScope:
    """`with kit.task(...) as t`: starts the task on entering, ends it on leaving."""

    def __init__(self, kit: Kit, scope: AsyncTaskScope) -> None:
        self.kit = kit
        self.scope = scope
        self.task: Task | None = None
        self.token: Token[Task | None] | None = None

    def __enter__(self) -> Task:
        self.task = Task(self.kit, self.kit._run(self.scope.open()))
        self.token = CURRENT.set(self.task)
        return self.task

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.token is not None:
            CURRENT.reset(self.token)
        assert self.task is not None
        self.kit._run(self.task.task.close(error))


class Kit:
    """A kit's connection to agentlog, for synchronous code; the options are `AsyncKit`'s. Close it (or use it
    as a context manager) to send what is waiting; at interpreter exit an unclosed kit is closed."""

    def __init__(self, url: str, token: str, *, batch_lines: int = 250, flush_after: float = 1.0,
                 retry: Retry | None = None, timeout: float = 30.0,
                 transport: httpx.AsyncBaseTransport | None = None, on_budget: str = "raise") -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="agentlog-kit", daemon=True)
        self.thread.start()
        self.kit = AsyncKit(url, token, batch_lines=batch_lines, flush_after=flush_after, retry=retry,
                            timeout=timeout, transport=transport, on_budget=on_budget)
        self.closed = False
        atexit.register(self.close)

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        if self.closed:
            work.close()
            raise RuntimeError("this Kit is closed.")
        return asyncio.run_coroutine_threadsafe(work, self.loop).result()

    def __enter__(self) -> Kit:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Sends the lines of tasks still open, then closes the connection and its thread."""
        if self.closed:
            return
        try:
            self._run(self.kit.aclose())
        finally:
            self.closed = True
            atexit.unregister(self.close)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join()
            self.loop.close()

    @property
    def consistency(self) -> str | None:
        """See `AsyncKit.consistency`."""
        return self.kit.consistency

    def query(self, document: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        """See `AsyncKit.query`."""
        return self._run(self.kit.query(document, variables))

    def current_task(self) -> Task | None:
        task = CURRENT.get()
        return task if task is not None and task.kit is self else None

    def register_agent(self, name: str, *, purpose: str | None = None, roles: list[str] | None = None,
                       transcript_readers: list[str] | None = None, logging: str | None = None,
                       idempotency_key: str | None = None) -> Agent:
        return self._run(self.kit.register_agent(name, purpose=purpose, roles=roles,
                                                 transcript_readers=transcript_readers, logging=logging,
                                                 idempotency_key=idempotency_key))

    def define_policies(self, *, supervises_agents: list[str] | None = None, audits_agents: list[str] | None = None,
                        teaches_agents: list[str] | None = None, reads_all_agent_work: list[str] | None = None,
                        erases_agent_records: list[str] | None = None, retain_days: int | None = None,
                        retention_basis: str | None = None, holds_records: list[str] | None = None,
                        idempotency_key: str | None = None) -> Policies:
        return self._run(self.kit.define_policies(
            supervises_agents=supervises_agents, audits_agents=audits_agents, teaches_agents=teaches_agents,
            reads_all_agent_work=reads_all_agent_work, erases_agent_records=erases_agent_records,
            retain_days=retain_days, retention_basis=retention_basis, holds_records=holds_records,
            idempotency_key=idempotency_key))

    def define_webhook(self, url: str, events: list[str], *, secret: str | None = None,
                       idempotency_key: str | None = None) -> Webhook:
        return self._run(self.kit.define_webhook(url, events, secret=secret, idempotency_key=idempotency_key))

    def remove_webhook(self, id: str) -> bool:
        return self._run(self.kit.remove_webhook(id))

    def set_model_price(self, model: str, **fields: Unpack[PriceFields]) -> ModelPrice:
        return self._run(self.kit.set_model_price(model, **fields))

    def task(self, agent: str, skill: str, actor: Principal | None = None, requester: Principal | None = None,
             given: Any = None, parent: Task | str | None = None, limit_micros: int | None = None,
             **fields: Unpack[TaskFields]) -> TaskScope:
        """`with kit.task(...) as t:` starts a task and ends it when the block ends; see `AsyncKit.task`."""
        above = parent.task if isinstance(parent, Task) else parent
        return TaskScope(self, self.kit.task(agent, skill, actor=actor, requester=requester, given=given,
                                             parent=above, limit_micros=limit_micros, **fields))

    def start_task(self, agent: str, skill: str, actor: Principal | None = None, requester: Principal | None = None,
                   given: Any = None, parent: Task | str | None = None, limit_micros: int | None = None,
                   **fields: Unpack[TaskFields]) -> Task:
        """A task started outside a `with` block; end it with `t.end(...)`."""
        return Task(self, self._run(self.task(agent, skill, actor, requester, given, parent, limit_micros,
                                              **fields).scope.open()))

    def ask_for_help(self, question: str, asked_of: Principal, *, task: str | None = None,
                     idempotency_key: str | None = None) -> Help:
        return self._run(self.kit.ask_for_help(question, asked_of, task=task, idempotency_key=idempotency_key))

    def send_back(self, help: str, answer: str, by: Principal, *, idempotency_key: str | None = None) -> Help:
        return self._run(self.kit.send_back(help, answer, by, idempotency_key=idempotency_key))

    def traced(self, agent: str, skill: str, *, actor: Principal | None = None, requester: Principal | None = None,
               limit_micros: int | None = None, **fields: Unpack[TaskFields]
               ) -> Callable[[Callable[P, R]], Callable[P, R]]:
        """Records each call of a function as a task: its arguments as `given`, its return value as `result`.
        Called inside another task of this kit, it is that task's sub-task."""

        def decorate(function: Callable[P, R]) -> Callable[P, R]:
            signature = inspect.signature(function)

            @functools.wraps(function)
            def run(*args: P.args, **kwargs: P.kwargs) -> R:
                given = arguments(signature, args, kwargs)
                with self.task(agent, skill, actor=actor, requester=requester, given=given,
                               parent=self.current_task(), limit_micros=limit_micros, **fields) as task:
                    value = function(*args, **kwargs)
                    task.result = jsonable(value)
                return value

            return run

        return decorate
