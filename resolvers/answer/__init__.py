"""Answering for the work: a person's reviews (`reviews.py`) and legal holds (`holds.py`), each a chained line of
the tree's record written through the write path, with the rows they are read from. It may import
`resolvers.write`, `resolvers.events`, `permissions/` and `models/`."""
