"""Delivery: the bridge's batches of events reach the screen on the app's loop in order, one
at a time — one long-lived consumer, so a batch never overtakes the one before it while that
one is still being drawn."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from tui.core.events import vocabulary as ev


class Delivery:
    """`take(batch)`: what the app does with a batch (draw it, and tell its parts)."""

    def __init__(self, take: Callable[[list[ev.Event]], Awaitable[None]]) -> None:
        self.take = take
        self._batches: asyncio.Queue[list[ev.Event]] = asyncio.Queue()
        self._applying = False

    def deliver(self, batch: list[ev.Event]) -> None:
        """The bridge's sink, on the app's loop."""
        self._batches.put_nowait(batch)

    async def consume(self) -> None:
        """Run as the app's worker for as long as it runs."""
        while True:
            batch = await self._batches.get()
            self._applying = True
            try:
                await self.take(batch)
            finally:
                self._applying = False

    @property
    def waiting(self) -> bool:
        """A batch waits, or is being taken."""
        return not self._batches.empty() or self._applying
