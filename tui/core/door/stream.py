"""One SSE stream on a door connection (`stream/watch`, `SendStreamingMessage`): the replay, then
live frames as the session publishes them, a heartbeat every `heartbeat` seconds, until the
stream is over (a task stream's final status, or `capsule-closed`). The session's thread never
waits on it: frames reach the subscriber's bounded queue and the loop is woken. A peer that
takes nothing for `write_timeout` seconds is let go."""

from __future__ import annotations

import asyncio
import contextlib

import h11

from tui.core.door.frames import HEARTBEAT, Broadcast, DoorFrame, Subscriber
from tui.core.door.rpc import Reply


class SseStream:
    def __init__(self, conn: h11.Connection, writer: asyncio.StreamWriter, heartbeat: float,
                 write_timeout: float) -> None:
        self.conn = conn
        self.writer = writer
        self.heartbeat = heartbeat
        self.write_timeout = write_timeout

    async def run(self, broadcast: Broadcast, reply: Reply) -> None:
        conn, writer = self.conn, self.writer
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()

        def woken() -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(wake.set)

        subscriber = Subscriber(woken)
        ends_on = reply.task_id if reply.stream == "task" else None
        replay = broadcast.subscribe(subscriber, reply.last_event_id)
        writer.write(conn.send(h11.Response(status_code=200, headers=[
            ("content-type", "text/event-stream"), ("cache-control", "no-cache"),
            ("connection", "close")])) or b"")  # one request per connection, as every answer
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
                    writer.write(conn.send(h11.Data(data=HEARTBEAT)) or b"")
                    await self._drain()
                    next_beat += self.heartbeat
                    continue
                wake.clear()
                done = await self._write(subscriber.drain(), ends_on)
                if subscriber.closed and not done:
                    # what came between the drain and the close: a task stream still ends on
                    # its task's final status when that is among it, never after it
                    done = await self._write(subscriber.drain(), ends_on) or True
            writer.write(conn.send(h11.EndOfMessage()) or b"")
            await self._drain()
        except (ConnectionError, TimeoutError, h11.LocalProtocolError):
            pass
        finally:
            broadcast.unsubscribe(subscriber)

    async def _write(self, frames: list[DoorFrame], ends_on: str | None) -> bool:
        """Write `frames`; True once the stream is over (a task stream's final status, or
        `capsule-closed`)."""
        done = False
        for frame in frames:
            self.writer.write(self.conn.send(h11.Data(data=frame.sse())) or b"")
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
