"""The URLs a webhook may name: `http` or `https`, with a host whose every address is public, unless
AGENTLOG_WEBHOOK_ALLOW_PRIVATE is true. Checked when a webhook is defined and again before each delivery, as a name
may resolve elsewhere later."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

from resolvers import settings

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


async def refusal(url: str) -> str | None:
    """Why a delivery may not go to `url` now, or None: its form, a name that does not resolve, or an address
    that is not public."""
    why = form_refused(url)
    if why is not None or settings.webhook_allow_private():
        return why
    parts = urlsplit(url)
    try:
        found = await asyncio.get_running_loop().getaddrinfo(
            parts.hostname, parts.port or SCHEMES[parts.scheme], type=socket.SOCK_STREAM
        )
    except (socket.gaierror, UnicodeError):
        return f"the host {parts.hostname} does not resolve"
    for *_, sockaddr in found:
        if address_refused(sockaddr[0]):
            return (f"the host {parts.hostname} resolves to {sockaddr[0]}, a loopback, private or link-local "
                    "address (AGENTLOG_WEBHOOK_ALLOW_PRIVATE=true allows it)")
    return None
