from __future__ import annotations

from datetime import datetime

import strawberry

from models import WebhookDelivery as DeliveryRow


@strawberry.type(description="One event owed to a webhook, and what its attempts came to: the delivery log.")
class WebhookDelivery:
    id: strawberry.ID = strawberry.field(description="Also its `webhook-id` header, the same on every attempt.")
    event: str
    at: datetime = strawberry.field(description="When the event happened.")
    attempts: int
    status: int | None = strawberry.field(description="The HTTP status of the last attempt; null before any, or "
                                          "when it was not sent or not answered (see `error`).")
    delivered_at: datetime | None
    error: str | None = strawberry.field(description="Why the last attempt failed, when it did.")
    gave_up_at: datetime | None = strawberry.field(description="When it was given up, 24 hours after its event.")

    @classmethod
    def of(cls, row: DeliveryRow) -> WebhookDelivery:
        return cls(id=strawberry.ID(str(row.id)), event=row.event, at=row.at, attempts=row.attempts,
                   status=row.status, delivered_at=row.delivered_at, error=row.error, gave_up_at=row.gave_up_at)
