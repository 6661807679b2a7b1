"""The wiring, the top floor: the ASGI app (`app.py`), GraphQL (`api/`, `types/`, `fast/`), the HTTP routes and
middleware (`http/`), the command line (`cli/`) and the inspector's assets. It may import every floor below it:
`resolvers/`, `permissions/`, `models/`; nothing below imports it."""
