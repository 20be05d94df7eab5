"""The event loop's lag as the screen benchmarks measure it: a 10 ms ticker on the app, each
tick's drift past its 10 ms (a loop busy for 60 ms drifts ~50 ms)."""

from __future__ import annotations

import time
from typing import Any

from textual.app import App

PERIOD_S = 0.01


class LagTicker:
    def __init__(self) -> None:
        self.lags: list[float] = []  # seconds each tick came late
        self._last = time.perf_counter()

    def start(self, app: App[Any]) -> None:
        self._last = time.perf_counter()
        app.set_interval(PERIOD_S, self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        self.lags.append(now - self._last - PERIOD_S)
        self._last = now

    def reset(self) -> None:
        """Measure from now: the lags so far are forgotten."""
        self.lags.clear()
        self._last = time.perf_counter()

    @property
    def worst_ms(self) -> float:
        return round(max(self.lags, default=0.0) * 1000, 1)

    @property
    def p99_ms(self) -> float:
        lags = sorted(self.lags)
        return round(lags[int(len(lags) * 0.99)] * 1000, 1) if lags else 0.0
