"""The fast paths, all behind one switch: AGENTLOG_EXECUTOR=fast (the default) turns them on, `stock` off.

- `execution.py`: graphql-core's executor with shortcuts for answering a whole tree (plain fields read straight,
  lists of plain objects completed in one loop, coroutines started at once).
- `plan.py`: what a query reads below the tasks a root field returns, read ahead in a few batches.
- `lazy.py`: task and line objects that read a field from their row only when the query asks for it.
- `arguments.py`: a nullable argument left at its null default is not handed to its resolver, so strawberry
  does not convert it on every call; each argument's GraphQL name is worked out once.

With `stock`, none of them runs: strawberry's own executor, objects built whole, each field's rows read by its
DataLoader. tests/test_executors.py holds both to byte-identical answers for every reader of the access table, and
bench/shortcuts.py times each shortcut taken out in turn (bench/RESULTS.md): one that no longer saves 10% on the
workloads it was made for goes.
"""
