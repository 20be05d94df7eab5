"""The signals a launch takes itself — SIGINT, SIGTERM, SIGHUP — installed and given back."""

from __future__ import annotations

import signal
import threading
from typing import Any

SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                if hasattr(signal, name))


def install(handler: Any) -> dict[int, Any]:
    """Install `handler` (one, or a dict per signal) for SIGINT, SIGTERM and SIGHUP; returns
    what was installed before (nothing when not on the main thread: only it may)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous = {}
    for number in SIGNALS:
        chosen = handler.get(number) if isinstance(handler, dict) else handler
        if chosen is not None:
            previous[number] = signal.signal(number, chosen)
    return previous
