from tortoise import fields
from tortoise.models import Model


class Webhook(Model):
    """A URL the tenant's events are sent to, signed with its secret (Standard Webhooks, `whsec_` base64).

    `events` holds the event names it wants, each between spaces (" AgentTaskStarted CHAIN_BROKEN "), so the
    write path reads every webhook of a tenant in the statement it sends anyway and a name is matched whole."""

    id = fields.UUIDField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    url = fields.TextField()
    events = fields.TextField()
    secret = fields.TextField()
    created_at = fields.DatetimeField()

    class Meta:
        table = "webhook"
        indexes = (("tenant", "created_at"),)

    @property
    def event_names(self) -> list[str]:
        return self.events.split()
