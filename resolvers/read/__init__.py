"""Reads: whole trees in batched statements (`tree.py`, `rows.py`), pages of the lists below a task, the task
list and search, provisional OTLP work still waiting (`running.py`), transcripts, a session's turns and spend
(`session.py`), spend over time (`usage.py`), verification in one snapshot, the export, and the incident bundle of
exports (`bundle.py`). It may import `resolvers.metrics`, `resolvers.write.checks`,
`permissions/` and `models/`; it never writes."""
