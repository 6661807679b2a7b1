"""The GraphQL wire: one mutation per call, each sent until it is answered, with backoff and jitter."""

from __future__ import annotations

import asyncio
import functools
import json
import random
import re
import warnings
from dataclasses import dataclass
from typing import Any

import httpx

from agentlog_kit.errors import (
    BadInput,
    BudgetExceeded,
    BudgetWarning,
    Internal,
    StopAsked,
    Unauthenticated,
    Unavailable,
    from_graphql,
)

RETRIED_STATUS = {502, 503, 504}
CONSISTENCY = "X-Agentlog-Consistency"
CAMEL = re.compile(r"_([a-z])")
ON_BUDGET = ("raise", "warn")


@dataclass(frozen=True)
class Retry:
    """Up to `attempts` sends of one call; before each resend a random pause of up to
    `first_delay * 2**n` seconds (full jitter), never more than `max_delay`."""

    attempts: int = 6
    first_delay: float = 0.1
    max_delay: float = 5.0

    def pause(self, resend: int) -> float:
        return random.uniform(0, min(self.max_delay, self.first_delay * 2**resend))


@functools.cache
def camel(name: str) -> str:
    return CAMEL.sub(lambda found: found.group(1).upper(), name)


def graphql_input(fields: dict[str, Any]) -> dict[str, Any]:
    """snake_case keyword arguments as the GraphQL input object; arguments left as None are not sent."""
    return {camel(name): value for name, value in fields.items() if value is not None}


def endpoint(url: str) -> str:
    url = url.rstrip("/")
    return url if url.endswith("/graphql") else url + "/graphql"


class Wire:
    def __init__(self, url: str, token: str, retry: Retry, timeout: float,
                 transport: httpx.AsyncBaseTransport | None = None, on_budget: str = "raise") -> None:
        if on_budget not in ON_BUDGET:
            raise ValueError(f"on_budget: 'raise' or 'warn', not {on_budget!r}.")
        self.on_budget = on_budget
        self.retry = retry
        self.http = httpx.AsyncClient(
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            timeout=timeout, transport=transport,
        )
        self.url = endpoint(url)
        self.consistency: str | None = None

    async def mutate(self, mutation: str, input_type: str, input: dict[str, Any], select: str,
                     heed: bool = True) -> Any:
        """The mutation's answer; with `heed`, `StopAsked` when the answer says the work was asked to stop, and
        `BudgetExceeded` (or its warning, as `on_budget` says) when it went over budget."""
        query = f"mutation($input: {input_type}!) {{ {mutation}(input: $input) {{ {select} }} }}"
        data, extensions = await self.exchange({"query": query, "variables": {"input": input}})
        if heed and extensions.get("stopAsked"):
            raise StopAsked(extensions["stopAsked"], answer=data[mutation])
        if heed and extensions.get("overBudget"):
            over = BudgetExceeded(extensions["overBudget"], answer=data[mutation])
            if self.on_budget == "raise":
                raise over
            warnings.warn(str(over), BudgetWarning, stacklevel=2)
        return data[mutation]

    async def send(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The answer's `data`; see `exchange`."""
        return (await self.exchange(payload))[0]

    async def exchange(self, payload: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The answer's `data` and `extensions`. Transport errors, 502/503/504 and `UNAVAILABLE` are sent again,
        the same bytes each time (so the same idempotency key); anything else the server refuses is raised at
        once."""
        try:
            content = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
        except (TypeError, ValueError) as exc:
            raise BadInput(f"input: a value is not JSON ({exc}).", path="input") from exc
        last: Exception | None = None
        for resend in range(self.retry.attempts):
            if resend:
                await asyncio.sleep(self.retry.pause(resend - 1))
            try:
                headers = {CONSISTENCY: self.consistency} if self.consistency else None
                response = await self.http.post(self.url, content=content, headers=headers)
            except httpx.TransportError as exc:
                last = exc
                continue
            try:
                answered = self.answer(response)
                self.consistency = response.headers.get(CONSISTENCY) or self.consistency
                return answered
            except Unavailable as exc:
                last = exc
        raise Unavailable(f"agentlog at {self.url} did not answer after {self.retry.attempts} attempts: {last}") from last

    async def query(self, document: str, variables: dict[str, Any] | None) -> dict[str, Any]:
        return await self.send({"query": document, "variables": variables or {}})

    def answer(self, response: httpx.Response) -> tuple[dict[str, Any], dict[str, Any]]:
        status, request_id = response.status_code, response.headers.get("x-request-id")
        if status in RETRIED_STATUS:
            raise Unavailable(f"the server answered HTTP {status}.", http_status=status, request_id=request_id)
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict) and body.get("errors"):
            raise from_graphql(body["errors"][0], status, request_id)
        if status == 401:
            raise Unauthenticated("the server refused the token (HTTP 401).", http_status=status, request_id=request_id)
        if status == 413:
            raise BadInput("the request is larger than the server takes (HTTP 413).", http_status=status,
                           request_id=request_id)
        data = body.get("data") if isinstance(body, dict) else None
        if status != 200 or not isinstance(data, dict):
            raise Internal(f"the server answered HTTP {status}: {response.text[:300]}", http_status=status,
                           request_id=request_id)
        return data, body.get("extensions") or {}

    async def close(self) -> None:
        await self.http.aclose()

