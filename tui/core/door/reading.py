"""Reading one request off a door connection, within its limits: the head first (so the door can
refuse a caller before its body is read), then the body, both within one deadline counted from
the connection's first moment (`ConnectionLimits.deadline`) and a wait for each next byte
(`ConnectionLimits.read_timeout`). A request that breaks a rule gets a `Trouble` — the plain
HTTP answer it is owed — never an exception out of the connection. What a peer sent is never
echoed: a header h11 refuses is named, not quoted (it may hold a token)."""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass

import h11

from tui.core.door.guard import ConnectionLimits, HeldConnection

MAX_BODY = 1024 * 1024
MAX_HEADERS = 64 * 1024
CHUNK = 65536
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,64}")
REASONS = {400: "Bad Request", 408: "Request Timeout", 413: "Content Too Large",
           414: "URI Too Long", 431: "Request Header Fields Too Large",
           501: "Not Implemented", 505: "HTTP Version Not Supported"}


@dataclass(frozen=True)
class Trouble:
    """The plain HTTP answer a request gets when it cannot be read as one."""

    status: int
    error: str
    message: str

    def raw(self) -> bytes:
        body = json.dumps({"error": self.error, "message": self.message}).encode()
        head = (f"HTTP/1.1 {self.status} {REASONS.get(self.status, 'Error')}\r\n"
                "content-type: application/json\r\nconnection: close\r\n"
                f"content-length: {len(body)}\r\n\r\n")
        return head.encode() + body


def too_large() -> Trouble:
    return Trouble(413, "payload_too_large", f"the body is over {MAX_BODY} bytes")


class Counted(asyncio.StreamReaderProtocol):
    """A connection's protocol that notes, on its `HeldConnection`, when bytes come and how
    many: the guard tells a silent peer from one whose bytes wait for a late loop."""

    def __init__(self, stream: asyncio.StreamReader, held: HeldConnection) -> None:
        super().__init__(stream)
        self.held = held

    def data_received(self, data: bytes) -> None:
        self.held.heard = time.monotonic()
        self.held.arrived += len(data)
        super().data_received(data)


class Reader:
    """One connection's request, read through h11 within the deadline."""

    def __init__(self, conn: h11.Connection, stream: asyncio.StreamReader, limits: ConnectionLimits,
                 held: HeldConnection) -> None:
        """`held`: the connection as the guard counts it (accepted at `held.since`, on the
        loop's clock, time.monotonic; what the reader consumes is counted in `held.taken`)."""
        self.conn = conn
        self.stream = stream
        self.limits = limits
        self.held = held
        self._clock = asyncio.get_running_loop().time
        self._deadline = held.since + limits.deadline
        self._head = bytearray()  # what came before the request was parsed, to name a bad line
        self.received = 0
        self._ended = False  # the peer closed its side

    async def head(self) -> h11.Request | Trouble | None:
        """The request's head; a Trouble to answer; None when the peer left or said nothing."""
        while True:
            try:
                event = self.conn.next_event()
            except h11.RemoteProtocolError as exc:
                return Trouble(exc.error_status_hint or 400, "bad_request",
                               malformed(bytes(self._head)))
            if event is h11.NEED_DATA:
                late = await self._more(keep=True)
                if late is not None:
                    return late if self.received else None
                continue
            if isinstance(event, h11.Request):
                self._head.clear()
                return event
            return None  # ConnectionClosed, or PAUSED: nothing to answer

    async def body(self, request: h11.Request) -> bytes | Trouble | None:
        """The request's body; a Trouble to answer; None when the peer left mid-body."""
        length = dict(request.headers).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > MAX_BODY:
            return too_large()
        body = bytearray()
        while True:
            try:
                event = self.conn.next_event()
            except h11.RemoteProtocolError:
                return Trouble(400, "bad_request", "the body is not framed as its headers say "
                               "(content-length or chunked encoding)")
            if event is h11.NEED_DATA:
                late = await self._more(keep=False)
                if late is not None:
                    return late
                if self.conn.their_state is h11.SEND_BODY and self._ended:
                    return None  # cut short: the peer closed before its body was whole
                continue
            if isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_BODY:
                    return too_large()
            elif isinstance(event, h11.EndOfMessage):
                return bytes(body)
            else:
                return None

    async def _more(self, keep: bool) -> Trouble | None:
        """Feed h11 the next bytes; a 408 Trouble when the deadline or the wait for a byte
        passes first."""
        left = self._deadline - self._clock()
        wait = min(self.limits.read_timeout, left)
        try:
            if wait <= 0:
                raise TimeoutError
            data = await asyncio.wait_for(self.stream.read(CHUNK), wait)
        except TimeoutError:
            if left <= self.limits.read_timeout:
                said = f"the request was not whole within {self.limits.deadline:g} s"
            else:
                said = f"no byte of the request came for {self.limits.read_timeout:g} s"
            return Trouble(408, "request_timeout", said)
        self._ended = not data
        self.held.taken += len(data)
        self.received += len(data)
        if keep and len(self._head) < MAX_HEADERS + CHUNK:
            self._head += data
        self.conn.receive_data(data)
        return None


def malformed(head: bytes) -> str:
    """Why a request head h11 refused is not HTTP, naming the header at fault (never its
    value)."""
    lines = head.split(b"\n")
    if len(head) >= MAX_HEADERS:
        return f"the request head is over {MAX_HEADERS} bytes"
    after = "the request line"
    for raw in lines[1:]:
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if not line:
            break
        name, colon, value = line.partition(b":")
        if not colon or _TOKEN.fullmatch(name) is None:
            return f"a line after {after} is not a `name: value` header"
        shown = name.decode("latin-1")
        if any((byte < 0x20 and byte != 0x09) or byte == 0x7F for byte in value):
            return f"the {shown} header holds a control character (NUL, CR or LF)"
        after = f"the {shown} header"
    return "the request is not HTTP/1.1 as this door reads it"


LARGEST_EVENT_ID = 2**64 - 1  # Murmur's ids are u64


def last_event_id(headers: list[tuple[bytes, bytes]]) -> int | Trouble | None:
    """The `Last-Event-ID` cursor: None when absent, 0 for text that is not a number (Murmur
    replays from the start then); a Trouble (400) for bytes that are not ASCII or a number
    past the largest event id."""
    for name, value in headers:
        if name.lower() != b"last-event-id":
            continue
        if not value.isascii():
            at = next(i for i, byte in enumerate(value) if byte > 0x7F)
            return Trouble(400, "invalid_header", "the Last-Event-ID header must be ASCII "
                           f"digits; byte {at + 1} is 0x{value[at]:02x}")
        text = value.strip()
        if not text.isdigit():  # ASCII digits only, for bytes
            return 0
        if len(text) > len(str(LARGEST_EVENT_ID)) or int(text) > LARGEST_EVENT_ID:
            return Trouble(400, "invalid_header", "the Last-Event-ID header is over "
                           f"{LARGEST_EVENT_ID}, the largest event id")
        return int(text)
    return None
