"""An OpenAI-compatible server on 127.0.0.1 for the framework tests: Chat Completions and Responses, scripted.

The model it plays calls each tool it is offered once, in the order offered, with the arguments the test set for
that tool, and answers in text once every tool was called. It remembers what it served, so a test can hold what
was recorded against what was said.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

STARTUP_SECONDS = 30


@dataclass(frozen=True)
class Served:
    """One answer the fake model gave."""

    api: str
    model: str
    input_tokens: int
    output_tokens: int
    tool: str | None
    arguments: dict[str, Any] | None
    text: str | None


@dataclass
class FakeModel:
    """The script: the arguments each tool is called with, and the answer once every tool was called; a model that
    is down answers every call with a server error."""

    arguments: dict[str, dict[str, Any]] = field(default_factory=dict)
    answer: str = "Sunny in Paris, 21 degrees."
    down: bool = False
    served: list[Served] = field(default_factory=list)
    ids: Iterator[int] = field(default_factory=itertools.count)

    def calls(self) -> list[tuple[str, int, int]]:
        """Each answer given, as (model, input tokens, output tokens)."""
        return [(served.model, served.input_tokens, served.output_tokens) for served in self.served]

    def reply(self, api: str, model: str, offered: list[str], called: set[str], words: int) -> Served:
        tool = next((name for name in offered if name not in called), None)
        served = Served(
            api=api, model=model, input_tokens=40 + words, output_tokens=9 if tool else 12, tool=tool,
            arguments=self.arguments.get(tool, {}) if tool else None, text=None if tool else self.answer,
        )
        self.served.append(served)
        return served

    def next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self.ids):04d}"


def _words(value: Any) -> int:
    return len(json.dumps(value).split())


def _chat_called(messages: list[dict[str, Any]]) -> set[str]:
    return {call["function"]["name"] for m in messages for call in (m.get("tool_calls") or [])}


def _responses_called(items: Any) -> set[str]:
    if not isinstance(items, list):
        return set()
    return {item["name"] for item in items if isinstance(item, dict) and item.get("type") == "function_call"}


def _chat(fake: FakeModel, body: dict[str, Any]) -> dict[str, Any]:
    offered = [tool["function"]["name"] for tool in body.get("tools") or []]
    said = fake.reply("chat", body["model"], offered, _chat_called(body["messages"]), _words(body["messages"]))
    message: dict[str, Any] = {"role": "assistant", "content": said.text}
    if said.tool:
        message["tool_calls"] = [{"id": fake.next_id("call"), "type": "function",
                                  "function": {"name": said.tool, "arguments": json.dumps(said.arguments)}}]
    return {
        "id": fake.next_id("chatcmpl"), "object": "chat.completion", "created": int(time.time()), "model": said.model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if said.tool else "stop",
                     "logprobs": None}],
        "usage": {"prompt_tokens": said.input_tokens, "completion_tokens": said.output_tokens,
                  "total_tokens": said.input_tokens + said.output_tokens},
    }


def _responses(fake: FakeModel, body: dict[str, Any]) -> dict[str, Any]:
    offered = [tool["name"] for tool in body.get("tools") or [] if tool.get("type") == "function"]
    said = fake.reply("responses", body["model"], offered, _responses_called(body.get("input")),
                      _words(body.get("input")))
    if said.tool:
        output = [{"type": "function_call", "id": fake.next_id("fc"), "call_id": fake.next_id("call"),
                   "name": said.tool, "arguments": json.dumps(said.arguments), "status": "completed"}]
    else:
        output = [{"type": "message", "id": fake.next_id("msg"), "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": said.text, "annotations": []}]}]
    return {
        "id": fake.next_id("resp"), "object": "response", "created_at": int(time.time()), "model": said.model,
        "status": "completed", "output": output, "parallel_tool_calls": False, "tool_choice": "auto",
        "tools": body.get("tools") or [], "instructions": body.get("instructions"),
        "usage": {"input_tokens": said.input_tokens, "output_tokens": said.output_tokens,
                  "total_tokens": said.input_tokens + said.output_tokens,
                  "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
    }


DOWN = {"error": {"message": "The model is down.", "type": "server_error", "code": None, "param": None}}


def app_of(fake: FakeModel) -> Starlette:
    async def chat(request: Request) -> JSONResponse:
        if fake.down:
            return JSONResponse(DOWN, status_code=500)
        return JSONResponse(_chat(fake, await request.json()))

    async def responses(request: Request) -> JSONResponse:
        if fake.down:
            return JSONResponse(DOWN, status_code=500)
        return JSONResponse(_responses(fake, await request.json()))

    return Starlette(routes=[
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
    ])


@contextmanager
def fake_openai(fake: FakeModel) -> Iterator[str]:
    """The fake served on a free loopback port in a thread of its own; yields its base URL (`…/v1`)."""
    server = uvicorn.Server(uvicorn.Config(app_of(fake), host="127.0.0.1", port=0, loop="asyncio",
                                           log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_SECONDS
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the fake OpenAI server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(15)
