"""Who reads what, the floor below `resolvers/`: the principal from a token (`tokens.py`, `oidc.py`,
`provider_keys.py`), the reader x field-group table (`table.py`) and the one access decision (`access.py`, the
table's only reader). It may import `models/` only."""
