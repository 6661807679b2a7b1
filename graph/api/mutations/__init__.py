"""The mutation roots, one file a group: the kit's writes (`kit.py`), `recordLines` (`batch.py`), erasure,
prices, reviews and holds (`answer.py`), `stopTask`, and webhooks (`webhooks.py`, with their query). Each turns typed inputs into a call of `resolvers/` and its answer into a `graph.types` object. It may
import `graph.api`, `graph.types` and the floors below `graph/`."""
