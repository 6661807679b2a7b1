"""A fixture under which a connection to any host but this one fails, and fails the test: frameworks that upload
traces or fetch anything of their own must be kept from doing it, not merely fail quietly."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

INTERNET_FAMILIES = {socket.AF_INET, socket.AF_INET6}


def _loopback(address: object) -> bool:
    host = address[0] if isinstance(address, tuple) else address
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(scope="module")
def loopback_only() -> Iterator[list[str]]:
    """Every attempt to reach another host, refused, for a whole module; it fails at teardown if there was any."""
    with pytest.MonkeyPatch.context() as patch, refusing_other_hosts(patch) as refused:
        yield refused
    assert not refused, f"the tests tried to reach other hosts: {refused}"


@contextmanager
def refusing_other_hosts(patch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    refused: list[str] = []
    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guard(sock: socket.socket, address: object) -> None:
        if sock.family in INTERNET_FAMILIES and not _loopback(address):
            refused.append(str(address))
            raise ConnectionRefusedError(f"the test may reach only this host, not {address}")

    def guarded_connect(sock: socket.socket, address: object) -> None:
        guard(sock, address)
        return connect(sock, address)

    def guarded_connect_ex(sock: socket.socket, address: object) -> int:
        guard(sock, address)
        return connect_ex(sock, address)

    patch.setattr(socket.socket, "connect", guarded_connect)
    patch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    yield refused
