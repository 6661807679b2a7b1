"""Real `agentlog serve` processes on 127.0.0.1 for the tests that need them, and a graphql-transport-ws client."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

REPO = Path(__file__).resolve().parent.parent
LIFETIME_SECONDS = 3600
STARTUP_SECONDS = 60
RUNNING = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")


@dataclass
class Server:
    """One `agentlog serve` process, ended by `stop()` or, whatever happens, after LIFETIME_SECONDS."""

    process: subprocess.Popen[str]
    port: int = 0
    log: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/graphql"

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=15)


def launch(command: list, cwd: Path, env: dict[str, str], startup_seconds: float = STARTUP_SECONDS) -> Server:
    """Starts `command` in a session of its own and waits until it says it is running, or gives up."""
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    server = Server(process)
    ready = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            server.log.append(line.rstrip())
            found = RUNNING.search(line)
            if found:
                server.port = int(found.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    ready.wait(startup_seconds)
    return server


def start_server(database_url: str, *options: str, port: int = 0) -> Server:
    """A server on the database, on `port` (0: any free one); it sends webhook deliveries only when the environment
    sets AGENTLOG_WEBHOOK_SENDER=true, so it never takes those owed to another test's receiver."""
    env = {"AGENTLOG_WEBHOOK_SENDER": "false", **os.environ, "AGENTLOG_DATABASE_URL": database_url}
    command = [
        "timeout", "--kill-after=10", str(LIFETIME_SECONDS),
        sys.executable, "-m", "graph.cli", "serve", "--host", "127.0.0.1", "--port", str(port), *options,
    ]
    server = launch(command, REPO, env)
    if not server.port:
        server.stop()
        raise RuntimeError("agentlog serve did not start:\n" + "\n".join(server.log[-30:]))
    return server


class Subscriber:
    """One graphql-transport-ws connection with one subscription on it."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    async def message(self, timeout: float = 15) -> dict[str, Any]:
        return json.loads(await asyncio.wait_for(self.ws.recv(), timeout))

    async def event(self, timeout: float = 15) -> dict[str, Any]:
        """The next event; fails on anything else."""
        message = await self.message(timeout)
        assert message["type"] == "next" and not message["payload"].get("errors"), message
        return message["payload"]["data"]["taskEvents"]

    async def event_of(self, task_id: str, timeout: float = 15) -> dict[str, Any]:
        """The next event about this task, passing over others."""
        async with asyncio.timeout(timeout):
            while True:
                event = await self.event(timeout)
                if event["task"]["id"] == task_id:
                    return event

    async def events_until(self, task_id: str, timeout: float = 15) -> list[tuple[str, str]]:
        """(event, task id) of every event up to and including the first about `task_id`."""
        seen: list[tuple[str, str]] = []
        async with asyncio.timeout(timeout):
            while not seen or seen[-1][1] != task_id:
                event = await self.event(timeout)
                seen.append((event["event"], event["task"]["id"]))
        return seen


EVENT_FIELDS = "event at task { id status about agent }"


@asynccontextmanager
async def subscribed(
    server: Server, token: str | None, root: str | None = None, fields: str = EVENT_FIELDS
) -> AsyncIterator[Subscriber]:
    async with connect(server.ws_url, subprotocols=["graphql-transport-ws"], open_timeout=15) as ws:
        payload = {"Authorization": f"Bearer {token}"} if token else {}
        await ws.send(json.dumps({"type": "connection_init", "payload": payload}))
        ack = json.loads(await asyncio.wait_for(ws.recv(), 15))
        assert ack["type"] == "connection_ack", ack
        query = f"subscription($root: ID) {{ taskEvents(root: $root) {{ {fields} }} }}"
        await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": query, "variables": {"root": root}}}))
        yield Subscriber(ws)
