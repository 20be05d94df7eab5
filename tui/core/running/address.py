"""What a running record's `url` and a door token may be, so that nothing an HTTP client
would read as a path, a user, a second address or a second header gets that far.

A record's `url` is `host:port` (or `http://host:port`, as older writers wrote it): an IP
literal (IPv6 in brackets, no zone) or a DNS name of letters, digits and hyphens, and a port
from 1 to 65535, at most MAX_URL_CHARS characters of printable ASCII. A token is printable
ASCII without a space: it goes into an `Authorization` header as it is.
"""

from __future__ import annotations

import ipaddress

MAX_URL_CHARS = 300  # `[v6 literal]:port` is under 60; a name is at most 253
_LABEL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")


def door_host_port(url: str) -> tuple[str, int]:
    """The host (an IPv6 literal kept in brackets) and port of a record's `url` — `host:port`,
    or `http://host:port` as older writers wrote it; ValueError saying why it is not one. The
    host is an IP literal or a DNS name of letters, digits and hyphens: nothing an HTTP client
    could read as a path, user, or second address."""
    if len(url) > MAX_URL_CHARS:
        raise ValueError(f"it is {len(url)} characters long; a door address is host:port")
    if not url.isascii() or not url.isprintable() or " " in url:
        raise ValueError("it holds a character that is not printable ASCII")
    scheme, separator, rest = url.partition("://")
    if not separator:
        rest = url
    elif scheme.lower() != "http":
        raise ValueError(f"its scheme is {scheme[:20]!r}; a door speaks plain http "
                         "(host:port)")
    rest = rest.removesuffix("/")
    if rest.startswith("["):
        inner, bracket, port = rest[1:].partition("]")
        if not bracket or not port.startswith(":"):
            raise ValueError("an IPv6 address is written [address]:port")
        try:
            ipaddress.IPv6Address(inner)
        except ValueError:
            raise ValueError(f"[{inner[:60]}] is not an IPv6 address") from None
        if "%" in inner:
            raise ValueError("an IPv6 address with a zone is not a door address")
        host, port = f"[{inner}]", port[1:]
    else:
        host, colon, port = rest.rpartition(":")
        if not colon or not host:
            raise ValueError("it has no port (host:port)")
        if not _hostname(host):
            raise ValueError(f"{host[:60]!r} is neither an IP address nor a host name")
    if not (port.isdigit() and port.isascii() and 0 < int(port) <= 65535):
        raise ValueError(f"{port[:20]!r} is not a port (1 to 65535)")
    return host, int(port)


def _hostname(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).version == 4
    except ValueError:
        pass
    labels = host.removesuffix(".").split(".")
    return len(host) <= 253 and all(
        0 < len(label) <= 63 and set(label) <= _LABEL and not label.startswith("-")
        and not label.endswith("-") for label in labels)


def shown_url(url: str) -> str:
    """A hostile `url`, short and printable, for a message."""
    shown = ascii(url[:60])
    return shown if len(url) <= 60 else f"{shown}…"


def token_problem(token: str) -> str | None:
    """Why `token` cannot be a bearer token (None: it can): printable ASCII, no space."""
    if not token:
        return "it is empty"
    if not token.isascii():
        return "it holds a character that is not ASCII"
    bad = next((char for char in token if not char.isprintable() or char.isspace()), None)
    if bad is not None:
        return f"it holds {'a space' if bad == ' ' else f'the control character {bad!r}'}"
    return None
