"""The door's HTTP server: h11 on an asyncio loop that runs on its own daemon thread.

The session's thread never waits on a connection: frames reach each connection's bounded queue
(`frames.Subscriber`) and the loop is woken with `call_soon_threadsafe`; a slow or vanished
client loses the oldest frames (`lagged`), never the session's time. Each connection serves one
request and closes. Bad input gets Murmur's answer: 404 for anything but the card and `POST /`
with a JSON body, 413 for a body over `MAX_BODY`, JSON-RPC errors for the rest.

Under load and hostile input (guard.py, accept.py, reading.py): connections are counted and
capped, total and per peer; a door with tokens refuses a caller before reading its body; a
request's head and body must arrive within one deadline; running out of descriptors pauses
accepting; a malformed head or header gets a 400 naming what is wrong. Nothing a request does
escapes as a traceback: the last resort answers -32603 "internal error" and says one line (at
most one a minute per kind of trouble) where the session logs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys
import threading
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

import h11

from tui.core.door import consent
from tui.core.door.accept import Listener
from tui.core.door.auth import Credential, Refusal, Tokens, refusal_headers
from tui.core.door.frames import Broadcast
from tui.core.door.guard import ConnectionLimits, Guard, HeldConnection, Notes
from tui.core.door.reading import (
    MAX_BODY,
    MAX_HEADERS,
    Counted,
    Reader,
    Trouble,
    last_event_id,
)
from tui.core.door.rpc import (
    INTERNAL,
    VERSION,
    DoorSession,
    dispatch,
    error,
    parse,
    version_problem,
)
from tui.core.door.stream import SseStream

__all__ = ["MAX_BODY", "ConnectionLimits", "DoorServer"]

HEARTBEAT_SECONDS = 15.0
CLOSE_GRACE = 2.0  # seconds an open stream or an answer under way has, on close, to be written
OFF_THE_LOOP = frozenset({"CancelTask"})  # methods that may wait on the session: on a thread


class DoorServer:
    def __init__(self, door: DoorSession, broadcast: Broadcast, tokens: Tokens,
                 card: Callable[[], dict[str, Any]],
                 heartbeat: float = HEARTBEAT_SECONDS, limits: ConnectionLimits | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        self.door = door
        self.broadcast = broadcast
        self.tokens = tokens
        self.card = card
        self.heartbeat = heartbeat
        self.limits = (limits or ConnectionLimits()).within_descriptors()
        self.guard = Guard(self.limits)
        self._log = log
        self.notes = Notes(self._say)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.listener: Listener | None = None
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()
        self._streams: set[asyncio.Task[None]] = set()
        self._answering: set[asyncio.Task[None]] = set()  # a request read, its answer not yet sent
        self._connections: set[asyncio.Task[None]] = set()

    def bind(self, host: str, port: int) -> tuple[str, int]:
        """Bind now (a taken port is an error here, not later); serve from `start`."""
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            sock.close()
            raise
        sock.listen(128)
        sock.setblocking(False)
        self._sock = sock
        bound = sock.getsockname()
        return str(bound[0]), int(bound[1])

    def start(self) -> None:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            loop.set_exception_handler(self._loop_trouble)
            self.loop = loop
            self.listener = Listener(self._sock, loop, self.guard, self._serve, self.notes)
            self.listener.start()
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.close()
                self._stopped.set()

        self._thread = threading.Thread(target=run, name="door", daemon=True)
        self._thread.start()
        ready.wait(10)

    def close(self) -> None:
        """Stop serving: open connections are ended, the loop and its thread finish."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return

        async def stop() -> None:
            if self.listener is not None:
                self.listener.close()
            # the session's last frames are queued, and an answer may be on its way (the
            # `session/stop` that ended the session): let them be written
            if self._streams or self._answering:
                await asyncio.wait(self._streams | self._answering, timeout=CLOSE_GRACE)
            current = asyncio.current_task()
            pending = [t for t in asyncio.all_tasks() if t is not current]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            loop.stop()

        try:
            asyncio.run_coroutine_threadsafe(stop(), loop)
        except RuntimeError:
            return
        # the loop stops once the grace is over; on a loaded machine that takes a while, and a
        # process that exits first cuts every connection it still holds, answered or not
        self._stopped.wait(CLOSE_GRACE + 13)

    # -- what the door says about trouble ---------------------------------------------------
    def _say(self, line: str) -> None:
        """One line where the session logs (its bootstrap log), else on stderr; never a
        traceback, never an exception (the line may be about running out of descriptors)."""
        if self._log is not None:
            try:
                self._log(line)
                return
            except Exception:  # a log that cannot be written: stderr
                pass
        with contextlib.suppress(Exception):
            sys.stderr.write(f"murmur-tui: {line}\n")
            sys.stderr.flush()

    def _loop_trouble(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """What asyncio would print as a traceback: one line per kind, at most once a
        minute."""
        message = str(context.get("message") or "event loop error")
        exc = context.get("exception")
        named = f" ({type(exc).__name__})" if isinstance(exc, BaseException) else ""
        self.notes.note(f"loop:{message}", f"door: {message}{named}")

    # -- one connection ---------------------------------------------------------------------
    def _serve(self, sock: socket.socket, held: HeldConnection) -> None:
        assert self.loop is not None
        task = self.loop.create_task(self._connection(sock, held))
        self._connections.add(task)  # the loop keeps only a weak reference to a task
        task.add_done_callback(self._connections.discard)

    async def _connection(self, sock: socket.socket, held: HeldConnection) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=2 ** 16, loop=loop)
        protocol = Counted(reader, held)
        try:
            transport, _ = await loop.connect_accepted_socket(lambda: protocol, sock)
        except OSError:  # the peer left, or it was evicted, before it was wrapped
            self.guard.release(held)
            sock.close()
            return
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        if not self.guard.holds(held):  # its place went to another while it was wrapped
            transport.abort()
            return
        held.close = transport.abort
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEADERS)
        exchange = _Exchange(conn, reader, writer, held)
        try:
            await self._exchange(exchange, Reader(conn, reader, self.limits, held))
        except (TimeoutError, ConnectionError, h11.LocalProtocolError):
            pass
        except Exception as exc:  # the last resort: an answer, no traceback
            self.notes.note("internal", f"door: internal error answering a request "
                                        f"({type(exc).__name__})")
            await self._internal_error(exchange)
        finally:
            self.guard.release(held)
            writer.close()

    async def _exchange(self, ex: _Exchange, reader: Reader) -> None:
        request = await reader.head()
        if isinstance(request, Trouble):
            await self._early(ex, request)
            return
        if request is None:
            return
        target = request.target.split(b"?", 1)[0]
        if request.method == b"GET" and target == b"/.well-known/agent-card.json":
            await self._send(ex.conn, ex.writer, 200, self.card())
            return
        # the caller is known before its body is read: a stranger's body is never taken in
        credential = self.tokens.authenticate(list(request.headers))
        if not isinstance(credential, Refusal):  # then peer consent (step 3), body unread
            member = credential is not None and credential.member is not None
            credential = consent.refusal(self.door.accepts_peer_tasks(),
                                         list(request.headers), member) or credential
        if isinstance(credential, Refusal):
            await self._refuse(ex.conn, ex.writer, credential)
            await self._linger(ex)
            return
        body = await reader.body(request)
        if isinstance(body, Trouble):
            await self._early(ex, body)
            return
        if body is None:
            return
        ex.held.phase = "answering"
        this = asyncio.current_task()
        if this is not None:
            self._answering.add(this)  # closing the door waits for this answer (CLOSE_GRACE)
        try:
            await self._answer(ex, request, credential, body)
        finally:
            if this is not None:
                self._answering.discard(this)

    async def _early(self, ex: _Exchange, trouble: Trouble) -> None:
        """Answer a request that could not be read whole, then let the peer's rest go."""
        ex.writer.write(trouble.raw())
        ex.answered = True
        await asyncio.wait_for(ex.writer.drain(), self.limits.write_timeout)
        await self._linger(ex)

    async def _linger(self, ex: _Exchange) -> None:
        """Close gently after an answer given before the body was read: closing a socket
        with unread bytes resets it, and the peer could lose the answer. What still comes is
        read and dropped for `ConnectionLimits.linger` seconds (or up to MAX_BODY bytes)."""
        ex.held.phase = "closing"
        with contextlib.suppress(OSError, RuntimeError):
            if ex.writer.can_write_eof():
                ex.writer.write_eof()
        reader = ex.stream
        loop = asyncio.get_running_loop()
        until, dropped = loop.time() + self.limits.linger, 0
        with contextlib.suppress(TimeoutError, ConnectionError):
            while dropped <= MAX_BODY and (left := until - loop.time()) > 0:
                data = await asyncio.wait_for(reader.read(65536), left)
                if not data:
                    return
                dropped += len(data)
                ex.held.taken += len(data)

    async def _internal_error(self, ex: _Exchange) -> None:
        if ex.started:
            return
        body = json.dumps(error(ex.request_id, INTERNAL, "internal error")).encode()
        head = ("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
                f"content-length: {len(body)}\r\n\r\n").encode()
        with contextlib.suppress(Exception):
            ex.writer.write(head + body)
            await asyncio.wait_for(ex.writer.drain(), self.limits.write_timeout)

    async def _send(self, conn: h11.Connection, writer: asyncio.StreamWriter, status: int,
                    body: dict[str, Any], headers: list[tuple[str, str]] | None = None
                    ) -> None:
        data = _encoded(body)
        head = [("content-type", "application/json"), ("content-length", str(len(data))),
                ("connection", "close")]
        head += [h for h in headers or [] if h[0] != "content-type"]
        try:
            writer.write(conn.send(h11.Response(status_code=status, headers=head,
                                                reason=reason_phrase(status))) or b"")
            writer.write(conn.send(h11.Data(data=data)) or b"")
            writer.write(conn.send(h11.EndOfMessage()) or b"")
            await asyncio.wait_for(writer.drain(), self.limits.write_timeout)
        except h11.LocalProtocolError:
            pass

    async def _answer(self, ex: _Exchange, request: h11.Request, credential: Credential | None,
                      body: bytes) -> None:
        conn, writer = ex.conn, ex.writer
        target = request.target.split(b"?", 1)[0]
        content_type = dict(request.headers).get(b"content-type", b"")
        if request.method != b"POST" or target != b"/" or not body or \
                content_type.split(b";")[0].strip().lower() != b"application/json":
            await self._send(conn, writer, 404, {"error": "not_found",
                                                 "message": "this door answers POST / with a "
                                                 "JSON body"})
            return
        parsed, problem = parse(body)
        if problem is not None:
            await self._send(conn, writer, 200, problem)
            return
        ex.request_id = parsed["id"]
        versions = [v.decode("latin-1") for n, v in request.headers if n == b"a2a-version"]
        requested = version_problem(versions)
        if requested is not None:
            answer = error(parsed["id"], VERSION, f"A2A version '{requested}' is not "
                           "supported; this agent speaks 1.0",
                           {"requestedVersion": requested, "supportedVersions": "1.0"})
            await self._send(conn, writer, 200, answer)
            return
        last = last_event_id(list(request.headers))
        if isinstance(last, Trouble):
            await self._send(conn, writer, last.status, {"error": last.error,
                                                         "message": last.message})
            return

        def authorize(method: str) -> Refusal | None:
            return self.tokens.authorize(credential, method)

        # a formation member's call is a peer task, and sees only the tasks it sent
        member = credential.member if credential is not None else None
        origin = "peer" if member is not None else consent.origin(list(request.headers))
        if parsed["method"] in OFF_THE_LOOP:  # it waits for the task to stop: not here
            reply = await asyncio.to_thread(dispatch, self.door, parsed, last, authorize,
                                            origin, member)
        else:
            reply = dispatch(self.door, parsed, last, authorize, origin, member)
        if isinstance(reply, Refusal):
            await self._refuse(conn, writer, reply)
        elif reply.stream is not None:
            ex.held.phase = "streaming"  # no longer a request: the deadline is behind it
            ex.answered = True  # the stream writes its own head: no other answer after it
            this = asyncio.current_task()
            if this is not None:
                self._streams.add(this)
            try:
                await SseStream(writer, self.heartbeat, self.limits.write_timeout
                                ).run(self.broadcast, reply)
            finally:
                if this is not None:
                    self._streams.discard(this)
        else:
            await self._send(conn, writer, 200, reply.body or {})

    async def _refuse(self, conn: h11.Connection, writer: asyncio.StreamWriter,
                      refusal: Refusal) -> None:
        await self._send(conn, writer, refusal.status, refusal.body(), refusal_headers(refusal))


class _Exchange:
    """One connection's request and answer, as far as they got."""

    def __init__(self, conn: h11.Connection, stream: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, held: HeldConnection) -> None:
        self.conn = conn
        self.stream = stream
        self.writer = writer
        self.held = held
        self.request_id: Any = None
        self.answered = False

    @property
    def started(self) -> bool:
        return self.answered or self.conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE)


def reason_phrase(status: int) -> bytes:
    """`OK`, `Not Found`, …: the status line Murmur's door writes (h11 writes none unless
    told)."""
    try:
        return HTTPStatus(status).phrase.encode()
    except ValueError:
        return b""


def _encoded(body: dict[str, Any]) -> bytes:
    """The answer's bytes. A text that is not encodable (a lone surrogate the door did not
    refuse) is written escaped rather than ending the connection unanswered."""
    try:
        return json.dumps(body, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return json.dumps(body).encode()
