"""Defining, removing and reading webhooks: `defineWebhook` and `removeWebhook` by the kit, `webhooks` and each
one's delivery log by the kit and the roles `auditsAgents` names."""

from __future__ import annotations

import base64
import binascii
import os
import uuid
from datetime import datetime, timezone
from typing import Any

from tortoise.expressions import Q
from tortoise.transactions import in_transaction

from models import Webhook, WebhookDelivery
from models.errors import BadInput, NotFound
from permissions.access import Access
from permissions.principal import Principal
from resolvers.answer.ledger import record_change
from resolvers.webhooks.addresses import refusal
from resolvers.webhooks.wanted import EVENTS
from resolvers.write import checks
from resolvers.write.append import kit_unit, require_kit

PREFIX = "whsec_"
SECRET_BYTES = (24, 64)
"""The key lengths Standard Webhooks allows, in bytes."""
MADE_SECRET_BYTES = 32
URL_CHARS = 2000
MAX_FIRST = 100
MAX_WEBHOOKS = 50
"""Webhooks one tenant may have at once: each event is owed to every webhook that wants it, in the causing
transaction."""


def new_secret() -> str:
    return PREFIX + base64.b64encode(os.urandom(MADE_SECRET_BYTES)).decode()


def checked_secret(secret: str | None) -> str:
    """A given secret, if it is a `whsec_` base64 key of 24 to 64 bytes; one made here when none is given."""
    if secret is None:
        return new_secret()
    try:
        key = base64.b64decode(secret.removeprefix(PREFIX), validate=True) if secret.startswith(PREFIX) else b""
    except (binascii.Error, ValueError):
        key = b""
    low, high = SECRET_BYTES
    if not low <= len(key) <= high:
        raise BadInput(f"secret: a webhook secret is {PREFIX} followed by {low} to {high} bytes in base64 "
                       "(leave it out and one is made).", field="secret")
    return secret


def checked_events(events: list[str] | None) -> list[str]:
    if not events:
        raise BadInput("events: name at least one event.", field="events")
    unknown = [event for event in events if event not in EVENTS]
    if unknown:
        raise BadInput(f"events: {unknown[0]!r} is not an event; the events are {', '.join(EVENTS)}.",
                       field="events")
    return list(dict.fromkeys(events))


async def checked_url(url: str | None) -> str:
    url = checks.text("url", url, URL_CHARS, required=True)
    why = await refusal(url)
    if why is not None:
        raise BadInput(f"url: {why}.", field="url")
    return url


async def define_webhook(principal: Principal | None, data: dict[str, Any]) -> Webhook:
    """A new webhook of the caller's tenant; its secret is answered here and never again."""
    require_kit(principal)
    events = checked_events(data.get("events"))
    secret = checked_secret(data.get("secret"))
    url = await checked_url(data.get("url"))
    async with kit_unit(principal, "defineWebhook", data) as unit:
        if unit.first is None:
            hook = await _define(unit.writer, url, events, secret, unit.conn)
            unit.answered(str(hook.id))
    if unit.first is not None:
        return await Webhook.get(id=unit.first, tenant=unit.writer.tenant)
    return hook


async def _define(kit: Principal, url: str, events: list[str], secret: str, conn: Any) -> Webhook:
    hook = await Webhook.create(id=uuid.uuid4(), tenant=kit.tenant, url=url, events=f" {' '.join(events)} ",
                                secret=secret, created_at=datetime.now(timezone.utc), using_db=conn)
    await record_change(conn, kit.tenant, kit, "defineWebhook",
                        {"webhook": str(hook.id), "url": url, "events": events},
                        f"defined the webhook {hook.id} for {url}")
    if await Webhook.filter(tenant=kit.tenant).using_db(conn).count() > MAX_WEBHOOKS:
        raise BadInput(f"url: this tenant has {MAX_WEBHOOKS} webhooks, the most it may have; remove one first.",
                       field="url")
    return hook


async def remove_webhook(principal: Principal | None, webhook_id: str) -> bool:
    """Removes the webhook and its delivery log; what it was still owed is not sent."""
    kit = require_kit(principal)
    hook = checks.uuid_of("id", webhook_id)
    async with in_transaction() as conn:
        removed = await Webhook.filter(id=hook, tenant=kit.tenant).using_db(conn).delete()
        if not removed:
            raise NotFound(f"id: no webhook {hook}.", field="id")
        await WebhookDelivery.filter(webhook_id=hook, tenant=kit.tenant).using_db(conn).delete()
        await record_change(conn, kit.tenant, kit, "removeWebhook", {"webhook": str(hook)},
                            f"removed the webhook {hook}")
    return True


async def webhooks(access: Access) -> list[Webhook]:
    """The tenant's webhooks, oldest first; none for a caller who may not read them."""
    if access.principal is None or not await access.reads_webhooks():
        return []
    return await Webhook.filter(tenant=access.principal.tenant).order_by("created_at", "id")


async def deliveries(hook: Webhook, first: int | None, after: str | None) -> list[WebhookDelivery]:
    """The webhook's delivery log, newest event first; `after` is the id of the last delivery of the page
    before."""
    first = 20 if first is None else first
    if not 1 <= first <= MAX_FIRST:
        raise BadInput(f"first: first is 1 to {MAX_FIRST}, not {first}.", field="first")
    query = WebhookDelivery.filter(tenant=hook.tenant, webhook_id=hook.id)
    if after is not None:
        try:
            last = await query.filter(id=uuid.UUID(after)).first()
        except ValueError:
            last = None
        if last is None:
            raise BadInput("after: not a delivery of this webhook.", field="after")
        query = query.filter(Q(at__lt=last.at) | Q(at=last.at, id__lt=last.id))
    return await query.order_by("-at", "-id").limit(first)
