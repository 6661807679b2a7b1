from tortoise import fields
from tortoise.models import Model


class WebhookDelivery(Model):
    """One event owed to one webhook: written in the transaction that caused the event, so it is sent at least
    once or not at all, and kept as the delivery log of its attempts.

    `body` is the JSON sent, fixed when the event happened, so every attempt signs the same bytes. `due_at` is
    when the sender may next take it (null once delivered or given up); a sender that takes it moves `due_at`
    past its lease first, so another process takes it only if that sender died."""

    id = fields.UUIDField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    webhook_id = fields.UUIDField()
    event = fields.CharField(max_length=64)
    at = fields.DatetimeField()
    body = fields.TextField()
    attempts = fields.IntField(default=0)
    status = fields.IntField(null=True)
    error = fields.TextField(null=True)
    delivered_at = fields.DatetimeField(null=True)
    gave_up_at = fields.DatetimeField(null=True)
    due_at = fields.DatetimeField(null=True)

    class Meta:
        table = "webhook_delivery"
        indexes = (("tenant", "webhook_id", "at"), ("due_at",))
