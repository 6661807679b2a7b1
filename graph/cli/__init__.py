"""The `agentlog` command (`main.py`; `python -m graph.cli`): serve, token, verify, export, key, schema,
settings; the offline export, verify and key commands (`offline.py`); the incident bundle, written and
verified (`bundle.py`); the app as each server process builds it
(`serving.py`). It may import all of `graph/` and the floors below."""
