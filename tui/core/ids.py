"""Identifiers in Murmur's formats: a prefix plus a UUIDv7 as 32 lowercase hex digits.

The first 12 hex digits of a UUIDv7 are its mint time in Unix milliseconds, so ids sort by
creation time. Within one millisecond a counter in the random field keeps them increasing.
"""

from __future__ import annotations

import os
import re
import threading
import time

_lock = threading.Lock()
_last_ms = 0
_counter = 0


def uuid7_hex(now_ms: int | None = None) -> str:
    """A UUIDv7 (RFC 9562) as 32 lowercase hex digits, monotonic within this process."""
    global _last_ms, _counter
    with _lock:
        ms = time.time_ns() // 1_000_000 if now_ms is None else now_ms
        if ms <= _last_ms:
            ms = _last_ms
            _counter += 1
            if _counter > 0xFFF:  # 4096 ids in one millisecond: borrow the next one
                ms += 1
                _counter = 0
        else:
            _counter = int.from_bytes(os.urandom(2), "big") & 0x3FF
        _last_ms = ms
        rand_a = _counter
    rand_b = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
    return f"{value:032x}"


def mint(prefix: str) -> str:
    """`<prefix>_<uuid7 hex>`, e.g. `msg_0199…`."""
    return f"{prefix}_{uuid7_hex()}"


def message_id() -> str:
    return mint("msg")


def session_id() -> str:
    return mint("ses")


def task_id() -> str:
    return mint("tsk")


def context_id() -> str:
    return mint("ctx")


def event_id() -> str:
    return mint("evt")


def formation_id() -> str:
    return mint("frm")


FORMATION_ID = re.compile(r"frm_[0-9a-f]{32}")


def mint_time_ms(identifier: str) -> int:
    """The mint time of an id minted here (the first 48 bits of its UUIDv7)."""
    hex_part = identifier.rsplit("_", 1)[-1]
    return int(hex_part[:12], 16)
