"""The webhooks' rows: a webhook (`webhook.py`: where to send which events, and its secret) and each delivery
owed to one (`delivery.py`: the outbox and the delivery log at once). They may import `models.db` and the rows
beside them, nothing above `models/`."""
