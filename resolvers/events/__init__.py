"""Task events: what a write tells (`notices.py`), this process's subscribers (`bus.py`), the same across
processes over LISTEN/NOTIFY (`bus_postgres.py`), which of the two runs (`flowing.py`), and the read replicas with their fencing (`replicas.py`). It may
import `resolvers.metrics`, `permissions/` and `models/`."""
