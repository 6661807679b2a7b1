"""Live task events over graphql-transport-ws, each read with the subscriber's own access."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncGenerator
from datetime import datetime, timezone
from typing import Annotated

import jwt
import strawberry

from graph.api.context import Context, Info
from graph.api.loaders import Loaders
from graph.api.read_routing import reading_since
from graph.types.agent_task import task_view
from graph.types.task_event import TaskEvent, TaskEventName
from permissions.access import Access
from permissions.tokens import principal_from_header
from resolvers.events.bus import HUB
from models.errors import BadInput, Unauthenticated
from resolvers.events.notices import task_of_notice


def admit(context: Context, authorization: str | None) -> None:
    """Makes the connection's caller the token's principal until the token expires."""
    principal = principal_from_header(authorization)
    if principal is None:
        raise Unauthenticated("A bearer token is required: send {\"Authorization\": \"Bearer <token>\"} in connection_init.")
    token = authorization.partition(" ")[2].strip() if authorization else ""
    expires = jwt.decode(token, options={"verify_signature": False}).get("exp")
    context.principal, context.auth_error = principal, None
    context.expires_at = datetime.fromtimestamp(expires, timezone.utc) if expires else None
    renew(context)


def renew(context: Context) -> None:
    """Forgets what the connection read before: each event is read as things stand now."""
    context.access = Access(context.principal)
    context.loaders = Loaders(context.principal.tenant if context.principal else "")


def _still_valid(context: Context) -> None:
    expires = context.expires_at
    if expires is not None and datetime.now(timezone.utc) >= expires:
        raise Unauthenticated("The token has expired; connect again with a fresh one.")


def _root(value: strawberry.ID | None) -> uuid.UUID | None:
    if value is None:
        return None
    try:
        return uuid.UUID(str(value))
    except ValueError as exc:
        raise BadInput(f"root: {value!r} is not a task id.", field="root") from exc


@strawberry.type
class Subscription:
    @strawberry.subscription(
        description="Events of the tasks the caller may read, as they happen, from every server process: "
        "started, finished, failed, stopped, erased, asked to stop, past 80% or 100% of its budget. With `root`, "
        "only that task and everything under it. "
        "A subscriber that falls too far behind is ended with FELL_BEHIND; subscribe again and read anew."
    )
    async def task_events(
        self, info: Info, top: Annotated[strawberry.ID | None, strawberry.argument(name="root")] = None
    ) -> AsyncGenerator[TaskEvent, None]:
        caller = info.context.caller()
        under = _root(top)
        async with HUB.subscribe(caller.tenant) as feed:
            async for notice in feed:
                if under is not None and not notice.is_under(under):
                    continue
                _still_valid(info.context)
                renew(info.context)
                with reading_since(caller.tenant, time.monotonic()):
                    view = await task_view(info, await task_of_notice(notice))
                if view is not None:
                    yield TaskEvent(event=TaskEventName(notice.event), task=view, at=notice.at, share=notice.share)
