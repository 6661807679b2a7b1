"""A PostgreSQL URL naming several hosts, as libpq takes it: `postgres://u@h1:5432,h2:5432/db?target_session_attrs=
read-write`. The ORM's URL parser reads one host only, so such a URL is split here, and its pool is built by
`client_class`: every connection it opens tries the hosts in order and keeps the first that
`target_session_attrs` accepts, each given its own timeout (the URL's `timeout`, else HOST_TIMEOUT_S). Once the
primary is gone and a standby promoted, the connections opened next are to the new primary, without a restart."""

from __future__ import annotations

from typing import Any

import asyncpg
from tortoise.backends.asyncpg.client import AsyncpgDBClient

DEFAULT_PORT = 5432
HOST_TIMEOUT_S = 5.0
SESSION_ATTRS = ("any", "primary", "standby", "prefer-standby", "read-write", "read-only")


def split(url: str) -> tuple[str, list[str], str]:
    """(what comes before the hosts, each `host:port` as written, what follows them): the URL is the three joined
    with commas between the hosts."""
    scheme, marker, rest = url.partition("://")
    end = min((at for at in (rest.find("/"), rest.find("?")) if at >= 0), default=len(rest))
    userinfo, at, hosts = rest[:end].rpartition("@")
    return scheme + marker + userinfo + at, hosts.split(","), rest[end:]


def address(written: str) -> tuple[str, int]:
    """The host and port of one `host`, `host:port` or `[v6]:port`; ValueError saying what is wrong."""
    if written.startswith("["):
        host, bracket, tail = written[1:].partition("]")
        if not bracket or tail[:1] not in ("", ":"):
            raise ValueError(f"{written!r} is not a host or host:port")
        port = tail[1:]
    else:
        host, _, port = written.partition(":")
    if not host:
        raise ValueError(f"{written!r} names no host")
    if port and not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
        raise ValueError(f"the port of {written!r} is not a port number")
    return host, int(port) if port else DEFAULT_PORT


def addresses(url: str) -> list[tuple[str, int]]:
    """Every host the URL names, in order (none when it names its host in the query, `?host=/run/postgresql`);
    ValueError for one that is malformed or a `target_session_attrs` that PostgreSQL's clients do not know."""
    _, hosts, tail = split(url)
    query = tail.partition("?")[2]
    for pair in filter(None, query.split("&")):
        name, _, value = pair.partition("=")
        if name == "target_session_attrs" and value not in SESSION_ATTRS:
            raise ValueError(f"target_session_attrs is one of {', '.join(SESSION_ATTRS)}, not {value!r}")
    return [] if hosts == [""] else [address(host) for host in hosts]


def first_host_url(url: str) -> str:
    """The URL with only its first host, for the ORM's parser to read everything else of it."""
    before, hosts, after = split(url)
    return before + hosts[0] + after


async def connect(dsn: str | None = None, *, host: str | list[str], port: int | list[int],
                  timeout: float | None = None, **kwargs: Any) -> asyncpg.Connection:
    """A connection to the first of the hosts that `target_session_attrs` accepts, each given `timeout` seconds
    (HOST_TIMEOUT_S by default) to answer. asyncpg would give all of them one timeout, which a host that died
    without closing its connections (its packets dropped, not refused) uses up before the next is tried."""
    if not isinstance(host, list):
        return await asyncpg.connect(dsn, host=host, port=port, timeout=timeout or 60, **kwargs)
    last: Exception | None = None
    for one, its_port in zip(host, port if isinstance(port, list) else [port] * len(host)):
        try:
            return await asyncpg.connect(dsn, host=one, port=its_port, timeout=timeout or HOST_TIMEOUT_S, **kwargs)
        except (OSError, TimeoutError, asyncpg.TargetServerAttributeNotMatched) as exc:
            last = exc
    assert last is not None
    raise last


class ManyHosts(AsyncpgDBClient):
    def __init__(self, host: list[str], port: list[int], **kwargs: Any) -> None:
        super().__init__(host=host[0], port=port[0], **kwargs)
        self.hosts, self.ports = host, port

    async def create_pool(self, **kwargs: Any) -> Any:
        return await super().create_pool(**{**kwargs, "host": self.hosts, "port": self.ports, "connect": connect})


client_class = ManyHosts
