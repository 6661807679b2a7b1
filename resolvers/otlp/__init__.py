"""OpenTelemetry ingest, in the order a span travels: `decode.py` (the body), `mapping.py` (the attribute
table), `store.py` (kept durably while it waits), `place.py` (where it goes, pure), `planning.py` (what a pass
writes, pure), `ingest.py` (each pass read, planned and stored through the write path), `under.py` (the tasks
stored before that a pass places under, read under their trees' locks), `sweep.py` (spans that waited long enough), `unreported.py` (tasks a start marker opened whose span never came),
`kept.py` (this process's cache of waiting spans). It may import `resolvers.write`, `resolvers.events`,
`resolvers.webhooks` and the floors below."""
