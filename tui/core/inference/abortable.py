"""Connections a cancel closes at once: the built-in HTTP drivers' sockets.

A model call blocks its thread in `recv` while the provider thinks — for minutes, with a
read timeout of 300 s. Closing the httpx response from the thread that cancels does not end
that wait: `close(2)` on a socket another thread is reading neither wakes the reader nor tells
the peer, and httpx's response is not safe to close from a second thread (the reader then
fails with `StreamClosed`, which is not a cancel). What does end it is `shutdown(2)`: the
blocked `recv` returns at once with end-of-stream, and the provider sees the connection
closed. So every socket a driver's client opens is wrapped here, and while a call runs
(`watching(cancel)`, on the calling thread) each read, write and TLS handshake is registered
with that call's cancel token: setting the token shuts the socket down. Opening a connection
(DNS, TCP connect) cannot be interrupted that way, so it runs on a helper thread the call
stops waiting for when canceled; a connection that opens after that is closed unused.

Nothing here knows about cancel's meaning: the driver sees an ordinary broken connection
(`httpx.ReadError`, `RemoteProtocolError`, a cut stream) and, its token being set, ends the
call `StopOnCancel` — not a failure, not retried.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import httpcore
import httpx

from tui.core.cancel import CancelToken

_calling = threading.local()  # .token: the cancel token of the call running on this thread


@contextlib.contextmanager
def watching(cancel: CancelToken) -> Iterator[None]:
    """While the block runs, the connections this thread uses are shut down when `cancel` is
    set."""
    previous = getattr(_calling, "token", None)
    _calling.token = cancel
    try:
        yield
    finally:
        _calling.token = previous


def _token() -> CancelToken | None:
    token = getattr(_calling, "token", None)
    return token if isinstance(token, CancelToken) else None


def abortable(client: httpx.Client) -> bool:
    """Wrap the network backend of every connection pool of `client` (its own transport and
    the proxies it took from the environment), so that `watching` can shut its sockets down.
    httpx offers no public way to give a client's pools a network backend and keep its proxy
    handling, so this reaches for the pools' `_network_backend`; False when a future httpx
    holds them elsewhere (a cancel then waits for the read timeout — the tests say so)."""
    transports: Iterable[object] = (client._transport, *client._mounts.values())
    wrapped = False
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if isinstance(backend, httpcore.NetworkBackend) and not isinstance(backend, Backend):
            pool._network_backend = Backend(backend)  # type: ignore[union-attr]
            wrapped = True
    return wrapped


class Backend(httpcore.NetworkBackend):
    """A network backend whose streams a cancel shuts down, and whose connects it abandons."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _connect(lambda: self._inner.connect_tcp(host, port, timeout, local_address,
                                                        socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> httpcore.NetworkStream:
        return _connect(lambda: self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        token = _token()
        if token is None:
            self._inner.sleep(seconds)
        elif token.wait(seconds):
            raise httpcore.ConnectError("canceled")


class _AbortableStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with self._abortable():
            return self._inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        with self._abortable():
            self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        with self._abortable():
            return _AbortableStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)

    @contextlib.contextmanager
    def _abortable(self) -> Iterator[None]:
        token = _token()
        if token is None:
            yield
            return
        unsubscribe = token.subscribe(self.shut)  # already set: shut now, the read ends at once
        try:
            yield
        finally:
            unsubscribe()

    def shut(self) -> None:
        """End the connection both ways: a read blocked on it returns, the peer sees it end.
        On the plain socket under any TLS layer, so no TLS state is touched from this
        thread."""
        sock = self._inner.get_extra_info("socket")
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):  # already closed, or never connected
                socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _connect(connect: Callable[[], httpcore.NetworkStream]) -> httpcore.NetworkStream:
    """`connect()` — on a helper thread while a cancel can stop the wait for it."""
    token = _token()
    if token is None:
        return _AbortableStream(connect())
    if token.is_set():
        raise httpcore.ConnectError("canceled before connecting")
    attempt = _Connecting(connect)
    unsubscribe = token.subscribe(attempt.done.set)
    try:
        attempt.done.wait()
    finally:
        unsubscribe()
    return _AbortableStream(attempt.outcome())


class _Connecting:
    """One connect on its own thread; abandoned (its stream closed when it comes) if the
    caller stops waiting first."""

    def __init__(self, connect: Callable[[], httpcore.NetworkStream]) -> None:
        self.done = threading.Event()
        self._guard = threading.Lock()
        self._stream: httpcore.NetworkStream | None = None
        self._error: BaseException | None = None
        self._abandoned = False
        self._connect = connect
        threading.Thread(target=self._run, name="provider-connect", daemon=True).start()

    def _run(self) -> None:
        try:
            stream = self._connect()
        except BaseException as exc:  # handed to the caller, who raises it
            with self._guard:
                self._error = exc
        else:
            with self._guard:
                if self._abandoned:
                    stream.close()
                else:
                    self._stream = stream
        self.done.set()

    def outcome(self) -> httpcore.NetworkStream:
        with self._guard:
            if self._stream is not None:
                return self._stream
            if self._error is not None:
                raise self._error
            self._abandoned = True
        raise httpcore.ConnectError("canceled while connecting")
