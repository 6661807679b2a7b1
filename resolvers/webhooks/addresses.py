"""The URLs a webhook may name: `http` or `https`, with a host whose every address is public, unless
AGENTLOG_WEBHOOK_ALLOW_PRIVATE is true. Checked when a webhook is defined and again before each delivery, as a name
may resolve elsewhere later; a delivery then goes to the address that was checked (`destination`), so the name is
not looked up a second time between the check and the connection."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit, urlunsplit

from models import settings

SCHEMES = {"http": 80, "https": 443}


def address_refused(address: str) -> bool:
    """A loopback, private, link-local, unspecified, multicast or reserved address (an IPv4 address written as
    IPv6 is judged as itself)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_unspecified or ip.is_multicast \
        or ip.is_reserved


def form_refused(url: str) -> str | None:
    """Why the URL is refused for its form alone, or None."""
    try:
        parts = urlsplit(url)
        parts.port
    except ValueError:
        return "not a URL"
    if parts.scheme not in SCHEMES:
        return "a webhook's URL is http or https"
    if not parts.hostname:
        return "a webhook's URL names a host"
    if parts.username or parts.password:
        return "a webhook's URL carries no credentials; the secret signs each delivery"
    return None


@dataclass(frozen=True, slots=True)
class Destination:
    """Where one delivery goes: `url` with its host replaced by the address that was checked, the name it named
    sent as the `Host` header and, for https, as the TLS server name, which the receiver's certificate is
    verified against. A name that answers the check with a public address and the connection with a private one
    (DNS rebinding) is so never reached at the private one. Unpinned (`host` None) when private addresses are
    allowed or the URL names an address itself."""

    url: str
    host: str | None = None
    server_name: str | None = None


async def lookup(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to, in the resolver's order."""
    found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [sockaddr[0] for *_, sockaddr in found]


async def refusal(url: str) -> str | None:
    """Why a delivery may not go to `url` now, or None: its form, a name that does not resolve, or an address
    that is not public."""
    why, _ = await destination(url)
    return why


async def destination(url: str) -> tuple[str | None, Destination | None]:
    """Why a delivery may not go to `url` now (and None), or where it goes (and no reason)."""
    why = form_refused(url)
    if why is not None:
        return why, None
    if settings.webhook_allow_private():
        return None, Destination(url)
    parts = urlsplit(url)
    try:
        addresses = await lookup(parts.hostname, parts.port or SCHEMES[parts.scheme])
    except (socket.gaierror, UnicodeError):
        return f"the host {parts.hostname} does not resolve", None
    for address in addresses:
        if address_refused(address):
            return (f"the host {parts.hostname} resolves to {address}, a loopback, private or link-local "
                    "address (AGENTLOG_WEBHOOK_ALLOW_PRIVATE=true allows it)"), None
    if not addresses:
        return f"the host {parts.hostname} does not resolve", None
    if _is_address(parts.hostname):
        return None, Destination(url)
    return None, _pinned(parts, addresses[0].split("%", 1)[0])


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _pinned(parts: SplitResult, address: str) -> Destination:
    shown = f"[{address}]" if ":" in address else address
    netloc = f"{shown}:{parts.port}" if parts.port else shown
    return Destination(urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)), parts.netloc,
                       parts.hostname if parts.scheme == "https" else None)
