"""Cap it, stop it: `stopTask` (`stop.py`), the stops asked in a tree, kept on its root's row where the write
path's lock reads them (`stop_asks.py`), budgets that bite (`budgets.py`), and what a write answers beside its
result when its work was asked to stop or went over budget (`answers.py`). The write path asks these as it
writes; `stop.py` writes through it. It may import `resolvers.write`, `resolvers.events`, `resolvers.webhooks`, `permissions/`
and `models/`."""
