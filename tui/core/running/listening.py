"""Which process a connection to `host:port` on this machine would reach (Linux `/proc`).

A running record names a pid and an address, and anything that can listen on a port can
answer at that address. Before a door token leaves this process, `held_by` checks that the
listening socket a connection to the record's address reaches is one of the record's process's
own open files, in the same network namespace as this process. Only then is the token sent, and
only to the address checked (an IP literal, never a name resolved again later).

The socket a connection reaches is decided as the kernel decides it: a socket bound to the
exact address wins over one bound to the wildcard of its family, which wins over an IPv6
wildcard taking IPv4 connections. Every socket at the winning rank must be the process's (two
processes can share a port with SO_REUSEPORT).

No Textual, no Rich, no httpx.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from tui.core.errors import AddressNotHeld

_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp's `st` column
LOCALHOST = ("127.0.0.1", "::1")  # what `localhost` names, in the order tried
MAX_PROC_NET_BYTES = 64 * 1024 * 1024  # a machine with a million sockets still fits


@dataclass
class Tables:
    """The kernel's listening TCP sockets, read once per network namespace for one round of
    checks (`ps` of fifty sessions reads them once, not fifty times: each read walks every
    socket on the machine). A round is short — the doors it checks were listening before it
    began."""

    read: dict[str, dict[int, list[_Listener]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def on_port(self, namespace: str, net: Path, port: int) -> list[_Listener]:
        with self.lock:
            listeners = self.read.get(namespace)
            if listeners is None:
                listeners = _listeners([_read_table(net / "tcp"), _read_table(net / "tcp6")])
                self.read[namespace] = listeners
        return listeners.get(port, [])


def _read_table(path: Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_PROC_NET_BYTES)
    except OSError:
        return b""  # no IPv6 on this machine


@dataclass(frozen=True)
class _Listener:
    address: ipaddress.IPv4Address | ipaddress.IPv6Address
    port: int
    inode: int


def held_by(pid: int, host: str, port: int, tables: Tables | None = None) -> str:
    """The `host:port` (an IP literal; IPv6 in brackets) at which a connection reaches a
    socket process `pid` listens on, for a record's `host` (an IP literal, `[v6]`, or
    `localhost`) and `port`; AddressNotHeld with why not. `tables` shares the kernel's socket tables
    between the checks of one round."""
    candidates = _candidates(host)
    namespace = _namespace(pid)
    if _namespace(None) != namespace:
        raise AddressNotHeld(f"pid {pid} listens in another network namespace")
    owned = _socket_inodes(pid)
    listeners = (tables or Tables()).on_port(namespace, Path(f"/proc/{pid}/net"), port)
    for address in candidates:
        winners = _reached(listeners, address, port)
        if winners and all(item.inode in owned for item in winners):
            return f"[{address}]:{port}" if address.version == 6 else f"{address}:{port}"
    shown = host if host.startswith("[") or ":" not in host else f"[{host}]"
    raise AddressNotHeld(f"pid {pid} does not hold the socket listening at {shown}:{port}")


def _candidates(host: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    if host == "localhost":
        return [ipaddress.ip_address(item) for item in LOCALHOST]
    try:
        return [ipaddress.ip_address(host.removeprefix("[").removesuffix("]"))]
    except ValueError:
        raise AddressNotHeld(f"{host} is a name, not an address on this machine that can be checked"
                             ) from None


def _namespace(pid: int | None) -> str:
    """The network namespace of process `pid` (None: this process)."""
    try:
        return os.readlink(f"/proc/{'self' if pid is None else pid}/ns/net")
    except OSError as exc:
        whose = "this process" if pid is None else f"pid {pid}"
        raise AddressNotHeld(f"the network namespace of {whose} cannot be read "
                             f"({exc.strerror or exc})") from None


def _socket_inodes(pid: int) -> set[int]:
    """The inodes of every socket process `pid` holds open."""
    folder = f"/proc/{pid}/fd"
    try:
        names = os.listdir(folder)
    except OSError as exc:
        raise AddressNotHeld(f"the open files of pid {pid} cannot be read ({exc.strerror or exc})"
                             ) from None
    inodes: set[int] = set()
    for name in names:
        try:
            target = os.readlink(f"{folder}/{name}")
        except OSError:
            continue  # closed since the listing
        if target.startswith("socket:[") and target.endswith("]"):
            inodes.add(int(target[len("socket:["):-1]))
    return inodes


def _listeners(tables: list[bytes]) -> dict[int, list[_Listener]]:
    """The listening sockets in /proc/net/tcp{,6}'s text, by port. A busy machine lists
    thousands of connected sockets: a line is split only when it may be a listening one."""
    found: dict[int, list[_Listener]] = {}
    for data in tables:
        for line in data.split(b"\n")[1:]:
            if b" 0A " not in line:
                continue
            fields = line.decode("ascii", "replace").split()
            if len(fields) < 10 or fields[3] != _LISTEN:
                continue
            address, _, port = fields[1].partition(":")
            try:
                listener = _Listener(_address(address), int(port, 16), int(fields[9]))
            except ValueError:
                continue
            found.setdefault(listener.port, []).append(listener)
    return found


def _address(hex_text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An address as /proc/net/tcp{,6} prints it: each 32-bit word in host byte order."""
    if len(hex_text) not in (8, 32):
        raise ValueError(hex_text)
    raw = b"".join(int(hex_text[i:i + 8], 16).to_bytes(4, sys.byteorder)
                   for i in range(0, len(hex_text), 8))
    family = socket.AF_INET if len(raw) == 4 else socket.AF_INET6
    return ipaddress.ip_address(socket.inet_ntop(family, raw))


def _reached(listeners: list[_Listener], address: ipaddress.IPv4Address | ipaddress.IPv6Address,
             port: int) -> list[_Listener]:
    """The listening sockets a connection to `address:port` can land on: those of the most
    specific rank that has any."""
    on_port = [item for item in listeners if item.port == port]
    ranks: list[list[_Listener]]
    if address.version == 4:
        mapped = ipaddress.IPv6Address(f"::ffff:{address}")
        ranks = [[item for item in on_port if item.address == address],
                 [item for item in on_port if item.address == ipaddress.IPv4Address(0)],
                 [item for item in on_port if item.address == mapped],
                 [item for item in on_port if item.address == ipaddress.IPv6Address(0)]]
    else:
        ranks = [[item for item in on_port if item.address == address],
                 [item for item in on_port if item.address == ipaddress.IPv6Address(0)]]
    return next((rank for rank in ranks if rank), [])
