"""Benchmark: how long a cancel takes while the built-in HTTP driver waits for a provider.

The provider on loopback takes the request and stays silent for HOLD seconds before it
answers (a model thinking, a provider overloaded). The cancel comes 0.3 s into the wait.

1. The driver (in this process), two ways in one run: as murmur-tui builds it (its sockets
   shut down by the cancel, `tui/core/inference/abortable.py`) against the same driver on a
   plain httpx client, which is how a cancel fared before — nothing interrupts the wait, so
   the call ends when the provider's answer comes. Measured: cancel → `complete()` has
   returned (`StopOnCancel`), and cancel → the provider saw the connection close.
   ratio = fixed / plain (median of RUNS each).
2. End to end: `murmur-tui launch --headless --json`, one SIGINT during the silence →
   the `TaskEnded` line saying `canceled` on stdout, and → the provider's hang-up.
   Goal: under 0.5 s.

Run: python tests/benchmarks/cancel.py   (prints one JSON object)
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.providers.server import Handler, Provider, openai_frames  # noqa: E402
from tests.providers.test_http_drivers import capsule  # noqa: E402
from tui.core.cancel import CancelToken  # noqa: E402
from tui.core.errors import StopOnCancel  # noqa: E402
from tui.core.inference.credentials import Credentials  # noqa: E402
from tui.core.inference.driver import NullStream  # noqa: E402
from tui.core.inference.http_driver import HttpDriver  # noqa: E402
from tui.core.inference.retry import RetryPolicy  # noqa: E402
from tui.core.manifest.model import Gateway, Retry  # noqa: E402

HOLD = 3.0  # seconds the provider stays silent before it answers
CANCEL_AFTER = 0.3
RUNS = 5
GOAL_S = 0.5


def thinking(handler: Handler) -> None:
    """Silent for HOLD seconds, then the answer — unless the client hung up first."""
    handler.hold(limit=HOLD)
    if not handler.owner.hung_up.is_set():
        handler.sse(openai_frames("late answer"))


def hung_up_at(provider: Provider) -> list[float]:
    seen: list[float] = []

    def wait() -> None:
        if provider.hung_up.wait(HOLD * 3):
            seen.append(time.monotonic())

    threading.Thread(target=wait, daemon=True).start()
    return seen


def driver_once(provider: Provider, plain: bool) -> tuple[float, float | None]:
    provider.replies, provider.seen = [thinking], []
    provider.hung_up.clear()
    driver = HttpDriver("model", "openai", Gateway(endpoint=provider.url, keyless=True),
                        Credentials(Path(tempfile.mkdtemp())),
                        RetryPolicy(Retry(max_attempts=1)))
    if plain:  # the client as it was: no socket of it is shut down by a cancel
        driver._client.close()
        driver._client = httpx.Client(timeout=httpx.Timeout(30.0, read=300.0),
                                      follow_redirects=False)
    cancel = CancelToken()
    ended: list[float] = []

    def call() -> None:
        with contextlib.suppress(StopOnCancel):
            driver.complete({"model": "m", "messages": []}, NullStream(), cancel)
        ended.append(time.monotonic())

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    while not provider.seen:
        time.sleep(0.005)
    time.sleep(CANCEL_AFTER)
    hang_up = hung_up_at(provider)
    start = time.monotonic()
    cancel.set()
    worker.join(HOLD * 3)
    driver.close()
    time.sleep(0.1)  # let the provider notice a close that came with the answer
    return ended[0] - start, (hang_up[0] - start) if hang_up else None


def headless_once(provider: Provider, root: Path, home: Path) -> tuple[float, float | None]:
    provider.replies, provider.seen = [thinking], []
    provider.hung_up.clear()
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "launch", str(root), "--headless", "--json",
         "--task", "think"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL, text=True, env=dict(os.environ, MURMUR_HOME=str(home)))
    assert process.stdout is not None
    while not provider.seen:
        time.sleep(0.005)
    time.sleep(CANCEL_AFTER)
    hang_up = hung_up_at(provider)
    start = time.monotonic()
    process.send_signal(signal.SIGINT)
    ended = None
    for line in process.stdout:
        event: dict[str, Any] = json.loads(line) if line.startswith("{") else {}
        if event.get("event") == "TaskEnded":
            assert event["exit_status"] == "canceled", event
            ended = time.monotonic() - start
    process.wait(60)
    assert ended is not None, "no TaskEnded line"
    return ended, (hang_up[0] - start) if hang_up else None


def summary(samples: list[tuple[float, float | None]]) -> dict[str, Any]:
    ends = [end for end, _ in samples]
    hang_ups = [hang for _, hang in samples if hang is not None]
    return {"ended_median_s": round(statistics.median(ends), 4),
            "ended_max_s": round(max(ends), 4),
            "provider_saw_close_median_s": round(statistics.median(hang_ups), 4)
            if hang_ups else None,
            "provider_saw_close_in": f"{len(hang_ups)}/{len(samples)}"}


def main() -> None:
    provider = Provider().start()
    try:
        fixed = summary([driver_once(provider, plain=False) for _ in range(RUNS)])
        plain = summary([driver_once(provider, plain=True) for _ in range(RUNS)])
        with tempfile.TemporaryDirectory() as folder:
            home = Path(folder) / "home"
            root = capsule(Path(folder) / "c", home, "openai", provider.url)
            headless = summary([headless_once(provider, root, home) for _ in range(3)])
    finally:
        provider.stop()
    ratio = fixed["ended_median_s"] / plain["ended_median_s"]
    print(json.dumps({
        "benchmark": "cancel while the provider is silent",
        "provider_silent_for_s": HOLD, "cancel_after_s": CANCEL_AFTER, "runs": RUNS,
        "driver_fixed": fixed, "driver_plain_httpx": plain,
        "ratio_fixed_to_plain": round(ratio, 4),
        "headless_sigint": headless,
        "goal_s": GOAL_S,
        "goal_met": headless["ended_max_s"] < GOAL_S and fixed["ended_max_s"] < GOAL_S,
    }))


if __name__ == "__main__":
    main()
