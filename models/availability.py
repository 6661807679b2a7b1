"""Whether a failure means the database cannot be reached just now (down, restarting, the connection cut, an
embedded SQLite file held by another process's writer past the busy timeout), as
opposed to a fault: such a request answers UNAVAILABLE, and a retry with the same idempotency key is safe."""

from __future__ import annotations

import sqlite3

from asyncpg import exceptions as pg

GONE = (
    ConnectionError,
    TimeoutError,
    pg.PostgresConnectionError,
    pg.AdminShutdownError,
    pg.CrashShutdownError,
    pg.CannotConnectNowError,
    # the driver's protocol state is left mid-operation when the server cuts a connection inside a transaction;
    # giving that connection back to the pool then fails with this
    pg.InternalClientError,
)


def database_unavailable(error: BaseException | None) -> bool:
    """Looks through the exception and what it was raised from (the ORM wraps the driver's errors)."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, GONE):
            return True
        if isinstance(error, pg.InterfaceError) and "closed" in str(error):
            return True
        if isinstance(error, OSError) and "connect" in str(error).lower():
            return True
        if isinstance(error, sqlite3.OperationalError) and "database is locked" in str(error):
            return True
        error = error.__cause__ or error.__context__
    return False
