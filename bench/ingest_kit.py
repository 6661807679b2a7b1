"""Ingest through the kit client: the same trees as bench/ingest.py, written with `AsyncKit`, which batches
them into recordLines itself (250 lines a call). All trees are written at once, as the raw clients interleave
them, over as many connections as the raw batch has clients."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import httpx
from agentlog_kit import AsyncKit, AsyncTask

from bench.common import TENANT
from bench.ingest import BATCH, CLIENTS, END, LINES_PER_TREE, SECRET, START, TREES, Run, steps
from permissions.tokens import issue_token

SNAKE = re.compile(r"(?<!^)(?=[A-Z])")


def snake(fields: dict[str, Any]) -> dict[str, Any]:
    return {SNAKE.sub("_", name).lower(): value for name, value in fields.items()}


def calls(tree: int) -> list[tuple[str, dict[str, Any]]]:
    """The tree's steps as the kit's keyword arguments, made before the clock starts, as the raw run's are."""
    return [(kind, snake(fields)) for line in steps(tree) for kind, fields in line.items()]


async def write_tree(kit: AsyncKit, made: list[tuple[str, dict[str, Any]]]) -> str:
    async with kit.task(START["agent"], START["skill"], actor=START["actor"], requester=START["requester"],
                        given=START["given"], about=START["about"]) as task:
        await write_steps(task, made)
        task.result = END["result"]
        task.outcome = END["outcome"]
    return task.id


async def write_steps(task: AsyncTask, made: list[tuple[str, dict[str, Any]]]) -> None:
    open_calls: dict[str, Any] = {}
    for kind, fields in made:
        if kind == "modelCall":
            await task.model_call(**fields)
        elif kind == "toolCall":
            open_calls[fields["tool_call_id"]] = await task.tool_call(**fields)
        else:
            call = open_calls.pop(fields["tool_call_id"])
            await call.result(fields["output"], duration_ms=fields["duration_ms"])


async def ingest(base: str) -> Run:
    made = [calls(i) for i in range(TREES)]
    token = issue_token("bench-kit", TENANT, kit=True, key=SECRET)
    connections = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=CLIENTS))
    async with AsyncKit(base, token, batch_lines=BATCH, transport=connections) as kit:
        start = time.perf_counter()
        roots = await asyncio.gather(*(write_tree(kit, tree) for tree in made))
        seconds = time.perf_counter() - start
    return Run(TREES * LINES_PER_TREE, seconds, list(roots))
