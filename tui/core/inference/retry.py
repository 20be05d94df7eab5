"""When an inference call is tried again, and after how long (`inference.retry`).

Retried: HTTP 408, 429, 500, 502, 503, 504, and a connection that broke before any response.
Waits grow exponentially from `initial_backoff_ms` to `max_backoff_ms`, with full jitter (a
random wait between half and all of the step, so that many sessions do not retry in step), and
a `Retry-After` from the provider (seconds or an HTTP date) is honoured as the wait, capped at
`max_backoff_ms` — a provider asking for longer than that fails the call instead of stalling
the session. At most `max_attempts` attempts in all.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from tui.core.cancel import CancelToken
from tui.core.errors import StopOnCancel
from tui.core.manifest.model import Retry

RETRYABLE = frozenset({408, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryNotice:
    """One retry about to happen (shown on the status bar)."""

    attempt: int  # the attempt that failed, from 1
    max_attempts: int
    status: int | None  # None: the connection broke
    reason: str
    delay_s: float


class RetryPolicy:
    def __init__(self, settings: Retry, rng: random.Random | None = None) -> None:
        self.max_attempts = max(1, settings.max_attempts)
        self.initial = max(0, settings.initial_backoff_ms) / 1000
        self.ceiling = max(self.initial, settings.max_backoff_ms / 1000)
        self._rng = rng or random.Random()

    def delay(self, attempt: int, retry_after: str | None = None) -> float | None:
        """Seconds to wait after failed attempt `attempt` (from 1), or None when the provider
        asks for longer than the ceiling."""
        asked = parse_retry_after(retry_after)
        if asked is not None:
            return asked if asked <= self.ceiling else None
        step = min(self.ceiling, self.initial * 2.0 ** (attempt - 1))
        return step / 2 + self._rng.random() * step / 2


    def pause(self, attempt: int, status: int | None, reason: str, cancel: CancelToken,
              notify: Callable[[RetryNotice], None] | None,
              retry_after: str | None = None) -> str | None:
        """Wait before the attempt after `attempt` (announced through `notify` first; a cancel
        ends the wait with StopOnCancel). Returns instead why there is no next attempt —
        appended to the failure's reason — when none is left or the provider asks for longer
        than the ceiling."""
        if attempt >= self.max_attempts:
            return f" after {attempt} attempts" if attempt > 1 else ""
        delay = self.delay(attempt, retry_after)
        if delay is None:
            return (f"; the provider asks to wait {retry_after} s, longer than "
                    "inference.retry.max_backoff_ms")
        if notify is not None:
            notify(RetryNotice(attempt, self.max_attempts, status, reason, delay))
        if cancel.wait(delay):
            raise StopOnCancel()
        return None


def parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils  # an HTTP date: rare, and the module is slow to import

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
