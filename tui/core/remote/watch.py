"""Watching a session's stream (`stream/watch`) on a thread of its own, reconnecting when it
drops, never handing on a frame twice.

The stream drops when it ends without `capsule-closed`, the connection resets, or no byte
(not even the `:heartbeat` Murmur writes every 15 s) arrives for two heartbeat periods. The
watcher then reconnects after a back-off (`BACKOFF_FIRST` doubling to `BACKOFF_MAX`), asking
for the door's whole replay buffer (`Last-Event-ID: 0`: frame ids are labels that restart per
task, so a replay from the last id seen would skip a later task's frames). What the replay
repeats is dropped: a frame is known by (task id, event, id, hash of its data), counted, so a
frame the session really wrote twice still comes through twice. After `gone_after` seconds
without a connection — or at once, when the door refuses the watch (a token it does not take,
a different session answering) — the watcher reports `gone` with why, and ends.

`heard` is when the door was last heard (monotonic): a new frame (one a replay repeats, or a
connection's own `connection-ack` / `gap`, says nothing of the session) or a heartbeat — from
the first stream opened on. A reconnect that hears nothing new leaves it where it was, so a
reader (the fleet's stall rule, tui/app/fleet/lifeline.py) counts a silence across reconnects.
It is one float the watcher's thread writes and a reader only reads: no event per heartbeat.

Each watcher holds one thread and one connection; `close()` ends both promptly.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tui.core.a2a.client import DoorClient, refusal, rpc_error, shared_tls
from tui.core.errors import DoorError, ReconnectWatch, WatchRefused
from tui.core.text.sse import SseParser

if TYPE_CHECKING:
    import httpx

HEARTBEAT_SECONDS = 15.0  # Murmur's heartbeat period
BACKOFF_FIRST = 0.2
BACKOFF_MAX = 5.0
GONE_AFTER = 60.0  # seconds without a connection before a session is reported gone
SEEN_LIMIT = 2048  # frames remembered for de-duplication (the door replays at most 512)

WatchKind = Literal["connecting", "live", "reconnecting", "closed", "gone"]


@dataclass(frozen=True)
class WatchState:
    kind: WatchKind
    attempt: int = 0  # reconnecting: the attempt about to be made, from 1
    reason: str = ""  # reconnecting: why the stream dropped; gone: why it is given up


@dataclass(frozen=True)
class StreamFrame:
    """One frame of the stream: its type, its own id, its data parsed (None: not a JSON
    object) and as sent."""

    event: str
    id: str | None
    body: dict[str, Any] | None
    data: str = field(repr=False)

    @property
    def task_id(self) -> str | None:
        value = self.body.get("id") if self.body is not None else None
        return value if isinstance(value, str) else None


def to_stream_frame(event: str, data: str, frame_id: str | None) -> StreamFrame:
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    return StreamFrame(event, frame_id, body if isinstance(body, dict) else None, data)


class Dedup:
    """Which frames a new connection repeats: counts of each frame's key from earlier
    connections, and from this one; a frame passes once this connection has shown it more
    often than earlier ones did. Bounded: the oldest keys are forgotten first. A key is one
    hash of (task id, event, id, data): a fleet keeps this for every session it watches."""

    def __init__(self, limit: int = SEEN_LIMIT) -> None:
        self.limit = limit
        self.seen: OrderedDict[int, int] = OrderedDict()
        self.now: dict[int, int] = {}
        self.repeats = 0

    def connection(self) -> None:
        self.now = {}

    def fresh(self, frame: StreamFrame) -> bool:
        if frame.id is None:  # connection frames (ack, gap, closed): never replayed
            return True
        key = hash((frame.task_id or "", frame.event, frame.id, frame.data))
        here = self.now.get(key, 0) + 1
        if len(self.now) < self.limit or key in self.now:
            self.now[key] = here
        before = self.seen.get(key, 0)
        if here <= before:
            self.repeats += 1
            return False
        self.seen[key] = before + 1
        self.seen.move_to_end(key)
        while len(self.seen) > self.limit:
            self.seen.popitem(last=False)
        return True


class Watcher:
    """Watches one door's stream: `on_frame(frame)` for each new frame, `on_state(state)`
    for each change of state. Both are called on the watcher's thread."""

    def __init__(self, door: DoorClient, on_frame: Callable[[StreamFrame], None],
                 on_state: Callable[[WatchState], None] | None = None, *,
                 heartbeat: float = HEARTBEAT_SECONDS, backoff_first: float = BACKOFF_FIRST,
                 backoff_max: float = BACKOFF_MAX, gone_after: float = GONE_AFTER,
                 session_id: str | None = None, skip: frozenset[str] = frozenset()) -> None:
        """`skip`: frame types the caller does not want (the fleet's rows: `text`,
        `thinking`), dropped before they are parsed — unless murmur-tui's door tells the
        session's events on one (the turn's usage rides on a turn's last `text` frame)."""
        self.door = door
        self.skip = skip
        self.on_frame = on_frame
        self.on_state = on_state
        self.heartbeat = heartbeat
        self.backoff_first = backoff_first
        self.backoff_max = backoff_max
        self.gone_after = gone_after
        self.session_id = session_id  # the session expected to answer (None: whichever)
        self.dedup = Dedup()
        self.state = WatchState("connecting")
        self.connections = 0  # streams opened
        self.heard: float | None = None  # a new frame or a heartbeat, last (monotonic)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._response: httpx.Response | None = None
        self._thread = threading.Thread(target=self._run, name=f"watch {door.url}",
                                        daemon=True)

    def start(self) -> Watcher:
        self._thread.start()
        return self

    @property
    def finished(self) -> bool:
        return self.state.kind in ("closed", "gone")

    def close(self, wait: float = 5.0) -> None:
        """Stop watching: the connection is shut at once and the thread ends."""
        self._stop.set()
        with self._lock:
            response = self._response
        if response is not None:
            _shut(response)
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(wait)

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def _set(self, state: WatchState) -> None:
        self.state = state
        if self.on_state is not None:
            self.on_state(state)

    def _run(self) -> None:
        import httpx

        delay = self.backoff_first
        attempt = 0
        lost_since: float | None = None
        client = httpx.Client(timeout=httpx.Timeout(self.door.timeout,
                                                    read=2 * self.heartbeat),
                              verify=shared_tls())
        try:
            while not self._stop.is_set():
                try:
                    self._check_card()
                    if self._watch(client):
                        self._set(WatchState("closed"))
                        return
                    raise ReconnectWatch("the stream ended without capsule-closed")
                except WatchRefused as exc:
                    self._set(WatchState("gone", reason=str(exc)))
                    return
                except (ReconnectWatch, DoorError, httpx.HTTPError, OSError) as exc:
                    if self._stop.is_set():
                        return
                    reason = _why(exc, self.door.url, self.heartbeat)
                    if self.state.kind == "live":  # it was up: start the clock and back-off
                        lost_since, delay, attempt = time.monotonic(), self.backoff_first, 0
                    elif lost_since is None:
                        lost_since = time.monotonic()
                    if time.monotonic() - lost_since >= self.gone_after:
                        self._set(WatchState("gone", reason=f"{reason}, for "
                                             f"{self.gone_after:g} s"))
                        return
                    attempt += 1
                    self._set(WatchState("reconnecting", attempt=attempt, reason=reason))
                    if self._stop.wait(delay):
                        return
                    delay = min(delay * 2, self.backoff_max)
        finally:
            client.close()

    def _check_card(self) -> None:
        """On every connection: the card again, so a different session answering at the
        address is seen (Murmur's third check on a running record)."""
        try:
            card = self.door.card(refresh=True)
        except DoorError as exc:
            if exc.status in (401, 403):
                raise WatchRefused(str(exc)) from exc
            raise
        if self.session_id and card.session_id and card.session_id != self.session_id:
            raise WatchRefused(f"the door at {self.door.url} now answers for session "
                               f"{card.session_id}, not {self.session_id}")

    def _watch(self, client: httpx.Client) -> bool:
        """One connection; True when it ended with capsule-closed."""
        door = self.door
        generation = door.card().generation
        headers = door.headers(generation)
        headers["accept"] = "text/event-stream"
        headers["Last-Event-ID"] = "0"
        body = json.dumps(door.envelope("stream/watch", {}))
        request = client.build_request("POST", door.url + "/", headers=headers, content=body)
        response = client.send(request, stream=True)
        with self._lock:
            self._response = response
        try:
            if self._stop.is_set():
                return False
            self._refused(response)
            parser = SseParser()
            self.dedup.connection()
            self.connections += 1
            if self.heard is None:  # the silence is counted from the first stream opened
                self.heard = time.monotonic()
            beats = 0
            for chunk in response.iter_bytes():
                raws = parser.feed(chunk)
                if parser.comments != beats:  # a heartbeat
                    beats, self.heard = parser.comments, time.monotonic()
                for raw in raws:
                    if raw.event in self.skip and '"tui":' not in raw.data:
                        continue  # not wanted: not even parsed (unless it tells events)
                    frame = to_stream_frame(raw.event, raw.data, raw.id)
                    if frame.event == "connection-ack" and self.state.kind != "live":
                        self._set(WatchState("live"))
                    if not self.dedup.fresh(frame):
                        continue
                    if frame.id is not None:  # the session's own frame, new
                        self.heard = time.monotonic()
                    self.on_frame(frame)
                    if frame.event == "capsule-closed":
                        return True
                if self._stop.is_set():
                    return False
            return False
        finally:
            with self._lock:
                self._response = None
            response.close()

    def _refused(self, response: httpx.Response) -> None:
        """A watch the door answered with something other than a stream."""
        kind = response.headers.get("content-type", "")
        if response.status_code == 200 and kind.startswith("text/event-stream"):
            return
        data = response.read()[:65536]
        try:
            parsed: Any = json.loads(data)
        except ValueError:
            parsed = None
        if response.status_code in (401, 403):
            raise WatchRefused(str(refusal(self.door.url, "stream/watch", response.status_code,
                                           parsed)))
        if isinstance(parsed, Mapping) and parsed.get("error") is not None:
            raise WatchRefused(str(rpc_error(self.door.url, "stream/watch", parsed["error"])))
        raise ReconnectWatch(f"the door answered stream/watch with HTTP {response.status_code} "
                             f"{kind or 'without a content type'}")


def _shut(response: httpx.Response) -> None:
    """Wake a read blocked on this response's socket (closing alone does not)."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _why(exc: BaseException, url: str, heartbeat: float) -> str:
    import httpx

    if isinstance(exc, httpx.ReadTimeout):
        return f"no heartbeat from {url} for {2 * heartbeat:g} s"
    if isinstance(exc, httpx.ConnectError):
        return f"cannot reach {url}: connection refused" if "refused" in str(exc).lower() \
            else f"cannot reach {url}: {exc}"
    if isinstance(exc, DoorError):
        return exc.text
    if isinstance(exc, ReconnectWatch):
        return str(exc)
    return f"the stream from {url} broke: {exc or type(exc).__name__}"
