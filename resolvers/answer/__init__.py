"""Answering for the work: a person's reviews (`reviews.py`) and legal holds (`holds.py`), each a chained line of
the tree's record written through the write path, with the rows they are read from; and the tenant's ledger
(`ledger.py`), a line for every change to who may read or do what, and to what is kept. It may import
`resolvers.write`, `resolvers.events`, `permissions/` and `models/`."""
