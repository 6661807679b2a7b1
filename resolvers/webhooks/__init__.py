"""Webhooks (SPEC 9.2): which events a tenant's webhooks want, read by the write path in a statement it sends
anyway (`wanted.py`); the events owed written to the outbox in the transaction that caused them (`outbox.py`);
the URLs a webhook may name (`addresses.py`); defining, removing and reading webhooks and their delivery log
(`hooks.py`); and the sender that signs and delivers what is owed, at least once, with backoff (`sender.py`).
`wanted.py` imports nothing of the project, so `resolvers.write` may import it; the rest may import
`resolvers.events`, `resolvers.write` (its checks and `kit_unit`, for `hooks.py` only),
`resolvers.answer.ledger` (defining and removing a webhook is a line of the tenant's ledger), `permissions/` and
`models/`."""
