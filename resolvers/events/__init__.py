"""Task events: what a write tells (`notices.py`), this process's subscribers (`bus.py`), the same across
processes over LISTEN/NOTIFY (`bus_postgres.py`), and the read replicas with their fencing (`replicas.py`). It may
import `resolvers.settings`, `resolvers.metrics`, `permissions/` and `models/`."""
