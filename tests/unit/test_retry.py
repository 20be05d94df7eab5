"""Retry waits and server-sent event framing."""

from __future__ import annotations

import email.utils
import random
import time

from tui.core.inference.retry import RetryPolicy, parse_retry_after
from tui.core.manifest.model import Retry
from tui.core.text.sse import ServerEvent, events


def test_waits_double_with_jitter_up_to_the_ceiling() -> None:
    policy = RetryPolicy(Retry(max_attempts=6, initial_backoff_ms=100, max_backoff_ms=800),
                         random.Random(7))
    for attempt, step in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.8), (5, 0.8)]:
        waits = [policy.delay(attempt) for _ in range(50)]
        assert all(w is not None and step / 2 <= w <= step for w in waits)
        assert len(set(waits)) > 1  # jittered


def test_retry_after_is_honoured_in_seconds_or_as_a_date_and_capped() -> None:
    policy = RetryPolicy(Retry(max_attempts=3, initial_backoff_ms=100, max_backoff_ms=5000))
    assert policy.delay(1, "2") == 2.0
    assert policy.delay(1, "60") is None  # longer than max_backoff_ms: fail instead of stall
    later = email.utils.formatdate(time.time() + 3, usegmt=True)
    parsed = parse_retry_after(later)
    assert parsed is not None and 1.0 < parsed <= 3.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_server_sent_events_are_framed_by_blank_lines() -> None:
    lines = [": comment", "event: ping", "data: {}", "", "data: a", "data: b", "", "id: 3",
             "data:no-space", ""]
    assert list(events(lines)) == [ServerEvent("ping", "{}"), ServerEvent("message", "a\nb"),
                                   ServerEvent("message", "no-space")]
    assert list(events(["data: tail"])) == [ServerEvent("message", "tail")]
