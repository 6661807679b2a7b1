from __future__ import annotations

import strawberry

from graph.types.webhook_delivery import WebhookDelivery
from models import Webhook as WebhookRow
from resolvers.webhooks import hooks


@strawberry.type(description="Where the tenant's events are sent, signed per Standard Webhooks.")
class Webhook:
    id: strawberry.ID
    url: str
    events: list[str]
    secret: str | None = strawberry.field(description="The `whsec_` key deliveries are signed with: answered by "
                                          "defineWebhook only, null everywhere else.")
    row: strawberry.Private[WebhookRow]

    @strawberry.field(description="Its deliveries, newest event first; first is at most 100 (default 20), after "
                      "is the id of the last delivery of the page before.")
    async def deliveries(self, first: int | None = None, after: str | None = None) -> list[WebhookDelivery]:
        return [WebhookDelivery.of(row) for row in await hooks.deliveries(self.row, first, after)]

    @classmethod
    def of(cls, row: WebhookRow, secret_shown: bool = False) -> Webhook:
        return cls(id=strawberry.ID(str(row.id)), url=row.url, events=row.event_names,
                   secret=row.secret if secret_shown else None, row=row)
