"""The pure record: the hash chain (`chain.py`), the one chain checker (`check.py`), signed notes and
checkpoints (`note.py`), the vocabulary (`vocabulary.py`), the offline export verifier (`export_check.py`,
`export_parts.py`), the incident bundle's offline check (`bundle_check.py`) and compact JSON (`fast_json.py`).
Plain functions over plain values: it imports nothing of the project but itself, so an export is verified by the
same code offline."""
