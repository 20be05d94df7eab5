"""One SSE stream on a door connection (`stream/watch`, `SendStreamingMessage`): the replay, then
live frames as the session publishes them, a heartbeat every `heartbeat` seconds, until the
stream is over (a task stream's final status, or `capsule-closed`). The session's thread never
waits on it: frames reach the subscriber's bounded queue and the loop is woken. A peer that
takes nothing for `write_timeout` seconds is let go.

Framed as Murmur's door frames it (streaming-protocol.md "Endpoints"): the head `HTTP/1.1 200
OK`, `content-type: text/event-stream`, `cache-control: no-cache`, `connection: keep-alive`,
no content-length and no chunked encoding — the frames are the body's bytes as they are, and
the body ends when the connection closes (every connection serves one request)."""

from __future__ import annotations

import asyncio
import contextlib

from tui.core.door.frames import HEARTBEAT, Broadcast, DoorFrame, Subscriber
from tui.core.door.rpc import Reply

HEAD = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
        b"connection: keep-alive\r\n\r\n")


class SseStream:
    def __init__(self, writer: asyncio.StreamWriter, heartbeat: float,
                 write_timeout: float) -> None:
        self.writer = writer
        self.heartbeat = heartbeat
        self.write_timeout = write_timeout

    async def run(self, broadcast: Broadcast, reply: Reply) -> None:
        writer = self.writer
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()

        def woken() -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(wake.set)

        subscriber = Subscriber(woken)
        ends_on = reply.task_id if reply.stream == "task" else None
        replay = broadcast.subscribe(subscriber, reply.last_event_id)
        writer.write(HEAD)
        try:
            done = await self._write([*reply.prelude, *replay], ends_on)
            if reply.start is not None and not done:
                done = await self._write(reply.start(), ends_on)
            next_beat = loop.time() + self.heartbeat
            while not done:
                timeout = max(0.0, next_beat - loop.time())
                try:
                    await asyncio.wait_for(wake.wait(), timeout)
                except TimeoutError:
                    writer.write(HEARTBEAT)
                    await self._drain()
                    next_beat += self.heartbeat
                    continue
                wake.clear()
                done = await self._write(subscriber.drain(), ends_on)
                if subscriber.closed and not done:
                    # what came between the drain and the close: a task stream still ends on
                    # its task's final status when that is among it, never after it
                    done = await self._write(subscriber.drain(), ends_on) or True
            await self._drain()  # the body ends as the connection closes
        except (ConnectionError, TimeoutError):
            pass
        finally:
            broadcast.unsubscribe(subscriber)

    async def _write(self, frames: list[DoorFrame], ends_on: str | None) -> bool:
        """Write `frames`; True once the stream is over (a task stream's final status, or
        `capsule-closed`)."""
        done = False
        for frame in frames:
            if frame.event == "capsule-closed" and ends_on is not None:
                done = True  # Murmur writes it on stream/watch only: a task stream just ends
                break
            self.writer.write(frame.sse())
            if frame.event == "capsule-closed" or (
                    ends_on is not None and frame.final and frame.data.get("id") == ends_on):
                done = True
                break
        await self._drain()
        return done

    async def _drain(self) -> None:
        """A peer that takes nothing for `write_timeout` is let go (TimeoutError): it would
        hold its place and its unsent frames for good."""
        await asyncio.wait_for(self.writer.drain(), self.write_timeout)
