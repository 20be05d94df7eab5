"""The door's HTTP server: h11 on an asyncio loop that runs on its own daemon thread.

The session's thread never waits on a connection: frames reach each connection's bounded queue
(`frames.Subscriber`) and the loop is woken with `call_soon_threadsafe`; a slow or vanished
client loses the oldest frames (`lagged`), never the session's time. Each connection serves one
request and closes. Bad input gets Murmur's answer: 404 for anything but the card and `POST /`
with a JSON body, 413 for a body over `MAX_BODY`, JSON-RPC errors for the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections.abc import Callable
from typing import Any

import h11

from tui.core.door.auth import Refusal, Tokens, refusal_headers
from tui.core.door.frames import HEARTBEAT, Broadcast, Frame, Subscriber
from tui.core.door.rpc import VERSION, DoorSession, Reply, dispatch, error, parse, version_problem

MAX_BODY = 1024 * 1024
MAX_HEADERS = 64 * 1024
HEARTBEAT_SECONDS = 15.0
READ_TIMEOUT = 30.0
CLOSE_GRACE = 2.0  # seconds an open stream has, on close, to write what it still holds


class DoorServer:
    def __init__(self, door: DoorSession, broadcast: Broadcast, tokens: Tokens,
                 card: Callable[[], dict[str, Any]],
                 heartbeat: float = HEARTBEAT_SECONDS) -> None:
        self.door = door
        self.broadcast = broadcast
        self.tokens = tokens
        self.card = card
        self.heartbeat = heartbeat
        self.loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()
        self._streams: set[asyncio.Task[None]] = set()

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
            self.loop = loop

            async def serve() -> None:
                self._server = await asyncio.start_server(self._connection, sock=self._sock)
                ready.set()

            loop.run_until_complete(serve())
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
            if self._server is not None:
                self._server.close()
            if self._streams:  # the session's last frames are queued: let them be written
                await asyncio.wait(set(self._streams), timeout=CLOSE_GRACE)
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
        self._stopped.wait(5)

    # -- one connection ---------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
                          ) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEADERS)
        try:
            request, body = await self._read(conn, reader)
            if request is not None:
                await self._answer(conn, writer, request, body)
        except (TimeoutError, h11.RemoteProtocolError, ConnectionError):
            pass
        except _TooLarge:
            await self._send(conn, writer, 413, {"error": "payload_too_large",
                                                 "message": f"the body is over {MAX_BODY} "
                                                 "bytes"})
        finally:
            writer.close()

    async def _read(self, conn: h11.Connection, reader: asyncio.StreamReader
                    ) -> tuple[h11.Request | None, bytes]:
        request: h11.Request | None = None
        body = bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await asyncio.wait_for(reader.read(65536), READ_TIMEOUT)
                conn.receive_data(data)
                if not data and conn.their_state is h11.SEND_BODY:
                    return None, b""
                continue
            if isinstance(event, h11.Request):
                request = event
                length = dict(event.headers).get(b"content-length")
                if length is not None and length.isdigit() and int(length) > MAX_BODY:
                    raise _TooLarge
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_BODY:
                    raise _TooLarge
            elif isinstance(event, h11.EndOfMessage):
                return request, bytes(body)
            elif isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
                return None, b""

    async def _send(self, conn: h11.Connection, writer: asyncio.StreamWriter, status: int,
                    body: dict[str, Any], headers: list[tuple[str, str]] | None = None
                    ) -> None:
        data = json.dumps(body, ensure_ascii=False).encode()
        head = [("content-type", "application/json"), ("content-length", str(len(data))),
                ("connection", "close")]
        head += [h for h in headers or [] if h[0] != "content-type"]
        try:
            writer.write(conn.send(h11.Response(status_code=status, headers=head)) or b"")
            writer.write(conn.send(h11.Data(data=data)) or b"")
            writer.write(conn.send(h11.EndOfMessage()) or b"")
            await writer.drain()
        except h11.LocalProtocolError:
            pass

    async def _answer(self, conn: h11.Connection, writer: asyncio.StreamWriter,
                      request: h11.Request, body: bytes) -> None:
        target = request.target.split(b"?", 1)[0]
        if request.method == b"GET" and target == b"/.well-known/agent-card.json":
            await self._send(conn, writer, 200, self.card())
            return
        credential = self.tokens.authenticate(list(request.headers))
        if isinstance(credential, Refusal):
            await self._refuse(conn, writer, credential)
            return
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
        versions = [v.decode("latin-1") for n, v in request.headers if n == b"a2a-version"]
        requested = version_problem(versions)
        if requested is not None:
            answer = error(parsed["id"], VERSION, f"A2A version '{requested}' is not "
                           "supported; this agent speaks 1.0",
                           {"requestedVersion": requested, "supportedVersions": "1.0"})
            await self._send(conn, writer, 200, answer)
            return
        last = _last_event_id(request.headers)
        reply = dispatch(self.door, parsed, last,
                         lambda method: self.tokens.authorize(credential, method))
        if isinstance(reply, Refusal):
            await self._refuse(conn, writer, reply)
        elif reply.stream is not None:
            await self._stream(conn, writer, reply)
        else:
            await self._send(conn, writer, 200, reply.body or {})

    async def _refuse(self, conn: h11.Connection, writer: asyncio.StreamWriter,
                      refusal: Refusal) -> None:
        await self._send(conn, writer, refusal.status, refusal.body(), refusal_headers(refusal))

    async def _stream(self, conn: h11.Connection, writer: asyncio.StreamWriter, reply: Reply
                      ) -> None:
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()

        def woken() -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(wake.set)

        subscriber = Subscriber(woken)
        this = asyncio.current_task()
        if this is not None:
            self._streams.add(this)
        ends_on = reply.task_id if reply.stream == "task" else None
        replay = self.broadcast.subscribe(subscriber, reply.last_event_id)
        writer.write(conn.send(h11.Response(status_code=200, headers=[
            ("content-type", "text/event-stream"), ("cache-control", "no-cache"),
            ("connection", "keep-alive")])) or b"")
        try:
            done = await self._write(conn, writer, [*reply.prelude, *replay], ends_on)
            if reply.start is not None and not done:
                done = await self._write(conn, writer, reply.start(), ends_on)
            next_beat = loop.time() + self.heartbeat
            while not done:
                timeout = max(0.0, next_beat - loop.time())
                try:
                    await asyncio.wait_for(wake.wait(), timeout)
                except TimeoutError:
                    writer.write(conn.send(h11.Data(data=HEARTBEAT)) or b"")
                    await writer.drain()
                    next_beat += self.heartbeat
                    continue
                wake.clear()
                done = await self._write(conn, writer, subscriber.drain(), ends_on)
                if subscriber.closed and not done:
                    # what came between the drain and the close: a task stream still ends on
                    # its task's final status when that is among it, never after it
                    done = await self._write(conn, writer, subscriber.drain(), ends_on) or True
            writer.write(conn.send(h11.EndOfMessage()) or b"")
            await writer.drain()
        except (ConnectionError, h11.LocalProtocolError):
            pass
        finally:
            self.broadcast.unsubscribe(subscriber)
            if this is not None:
                self._streams.discard(this)

    async def _write(self, conn: h11.Connection, writer: asyncio.StreamWriter,
                     frames: list[Frame], ends_on: str | None) -> bool:
        """Write `frames`; True once the stream is over (a task stream's final status, or
        `capsule-closed`)."""
        done = False
        for frame in frames:
            writer.write(conn.send(h11.Data(data=frame.sse())) or b"")
            if frame.event == "capsule-closed" or (
                    ends_on is not None and frame.final and frame.data.get("id") == ends_on):
                done = True
                break
        await writer.drain()
        return done


class _TooLarge(Exception):
    pass


def _last_event_id(headers: Any) -> int | None:
    for name, value in headers:
        if name == b"last-event-id":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else 0
    return None
