"""Forgetting, the only writer besides the write path: erasure of a tree's content, anonymising, forgetting
(`erasure.py`) and the retention sweep that forgets work past its days (`retention.py`); neither touches a held
tree nor the tenant's ledger, and each is a line of that ledger. It may import `resolvers.write`, `resolvers.read`,
`resolvers.answer` (holds, the ledger), `resolvers.events`, `resolvers.webhooks` and the floors below."""
