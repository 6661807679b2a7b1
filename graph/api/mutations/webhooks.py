from __future__ import annotations

import strawberry

from graph.api.context import Info
from graph.api.inputs import plain
from graph.types.webhook import Webhook
from resolvers.webhooks import hooks
from resolvers.webhooks.wanted import EVENTS

READERS = "Read by the kit and the roles auditsAgents names; empty for anyone else."


@strawberry.input(description=f"A webhook: its URL (http or https, on a public address) and the events it wants "
                  f"({', '.join(EVENTS)}); its whsec_ secret is made when left out.")
class WebhookInput:
    url: str
    events: list[str]
    secret: str | None = None
    idempotency_key: str | None = None


@strawberry.type
class WebhookMutation:
    @strawberry.mutation(
        description="Kit only. Sends the tenant's events named to the URL, each delivery signed per Standard "
        "Webhooks with the secret, answered here and never again. A loopback, private or link-local address is "
        "refused unless AGENTLOG_WEBHOOK_ALLOW_PRIVATE=true."
    )
    async def define_webhook(self, info: Info, input: WebhookInput) -> Webhook | None:
        return Webhook.of(await hooks.define_webhook(info.context.writer(), plain(input)), secret_shown=True)

    @strawberry.mutation(description="Kit only. Removes the webhook and its delivery log; nothing more is sent to it.")
    async def remove_webhook(self, info: Info, id: strawberry.ID) -> bool:
        return await hooks.remove_webhook(info.context.writer(), id)


@strawberry.type
class WebhookQuery:
    @strawberry.field(description=f"The tenant's webhooks, oldest first, their secrets null. {READERS}")
    async def webhooks(self, info: Info) -> list[Webhook]:
        return [Webhook.of(row) for row in await hooks.webhooks(info.context.access)]
