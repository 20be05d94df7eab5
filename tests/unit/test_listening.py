"""Which process a connection to an address reaches, read from the real kernel tables: a
listening socket in a child process, an impostor's socket in this one."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tui.core.errors import AddressNotHeld
from tui.core.running.listening import Tables, held_by

LISTENER = """
import socket, sys
family = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
sock = socket.socket(family)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
sock.bind((sys.argv[1], int(sys.argv[2])))
sock.listen()
print(sock.getsockname()[1], flush=True)
sys.stdin.read()
"""


@contextmanager
def child_listening(host: str, port: int = 0) -> Iterator[tuple[int, int]]:
    """(pid, port) of a child process listening on host:port until the block ends."""
    child = subprocess.Popen([sys.executable, "-c", LISTENER, host, str(port)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        yield child.pid, int(child.stdout.readline())
    finally:
        child.kill()
        child.wait(30)


def mine(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen()
    return sock


def test_the_process_holding_the_socket_is_found_and_another_is_not() -> None:
    with child_listening("127.0.0.1") as (pid, port):
        assert held_by(pid, "127.0.0.1", port) == f"127.0.0.1:{port}"
        assert held_by(pid, "localhost", port) == f"127.0.0.1:{port}"
        with pytest.raises(AddressNotHeld, match=f"pid {os.getpid()} does not hold the socket"):
            held_by(os.getpid(), "127.0.0.1", port)


def test_a_socket_bound_to_the_exact_address_wins_over_the_process_wildcard() -> None:
    """The record's process listens on 0.0.0.0:P; an impostor binds 127.0.0.1:P too (both
    with SO_REUSEPORT): a connection to 127.0.0.1 reaches the impostor, so the process does
    not hold it."""
    with child_listening("0.0.0.0") as (pid, port):
        assert held_by(pid, "127.0.0.1", port) == f"127.0.0.1:{port}"
        impostor = mine("127.0.0.1", port)
        try:
            with pytest.raises(AddressNotHeld):
                held_by(pid, "127.0.0.1", port)
            assert held_by(os.getpid(), "127.0.0.1", port) == f"127.0.0.1:{port}"
        finally:
            impostor.close()


def test_localhost_is_checked_at_each_of_its_addresses_and_the_held_one_is_named() -> None:
    with child_listening("::1") as (pid, port):
        impostor = mine("127.0.0.1", port)
        try:
            assert held_by(pid, "localhost", port) == f"[::1]:{port}"
            assert held_by(pid, "[::1]", port) == f"[::1]:{port}"
        finally:
            impostor.close()


def test_a_name_other_than_localhost_and_another_users_process_are_not_checked() -> None:
    with child_listening("127.0.0.1") as (pid, port), \
            pytest.raises(AddressNotHeld, match="is a name"):
        held_by(pid, "example.com", port)
    if os.getuid() != 0:  # root reads every process's open files
        with pytest.raises(AddressNotHeld, match="cannot be read"):
            held_by(1, "127.0.0.1", 1)


def test_one_round_reads_the_kernel_tables_once_and_sees_every_door_listening_before_it(
        ) -> None:
    tables = Tables()
    with child_listening("127.0.0.1") as (first, one), \
            child_listening("127.0.0.1") as (second, two):
        assert held_by(first, "127.0.0.1", one, tables) == f"127.0.0.1:{one}"
        assert held_by(second, "127.0.0.1", two, tables) == f"127.0.0.1:{two}"
    assert len(tables.read) == 1  # one network namespace, read once
