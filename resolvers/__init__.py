"""What the server decides, the floor below `graph/`: plain arguments in, rows or dataclasses out, no GraphQL.
One folder a flow: the kit's writes (`write/`), stops and budgets (`control/`), reviews and holds (`answer/`),
OpenTelemetry ingest (`otlp/`), reads (`read/`), task events and replicas (`events/`), webhooks (`webhooks/`), forgetting (`forget/`);
beside them the metrics and trusted documents every flow uses, and the loop the sweeps and the webhook sender run in (`background.py`). It may import `permissions/` and `models/`, never `graph/`."""
