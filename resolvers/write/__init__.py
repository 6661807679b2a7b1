"""The write path: every line of the kit and of OTLP is appended by `append.py`, in one transaction that locks
the tree, checks, hashes, appends and moves the head. Around it: a line on its way in and its meter row
(`draft.py`), the kit's mutations (`kit.py`), its lines (`lines.py`), `recordLines` (`batch.py`), new tasks
(`made_task.py`), a plan of many tasks and lines stored at once, as OTLP placing makes one (`plan.py`), prices,
signed checkpoints and the signing key, input checks, sentences, what is withheld. It may import `resolvers.events`, `resolvers.metrics`,
`resolvers.control` (stops and budgets, read as a line is written), `resolvers.answer.ledger`
(a change to agents, policies or prices is also a line of the tenant's ledger), `resolvers.webhooks` (what a write
owes the webhooks), `permissions/` and `models/`."""
