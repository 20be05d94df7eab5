"""Benchmark: a shell command writing 10,000 lines a second, watched live on the screen.

A real session in the real app (headless Textual at 160×48) runs a real `bash` command that
prints 1,000 lines every 100 ms for 3 s (30,000 lines). Compared in one run:

- `live`: the command's lines reach the Shell pane while it runs (ShellOutput events, at most
  ten a second per stream, the rest counted as skipped);
- `result-only`: the same command with the ShellOutput events held back before the screen —
  the pane shows the result's excerpt once the command ends, as before live output.

Measured while the command runs: the event loop's worst and p99 lag (drift of a 10 ms
ticker), the ShellOutput events and lines that reached the screen, how long after the result
arrived the pane showed it, RSS before and after. Goals: worst lag under 100 ms live, the
result on screen within 0.5 s, RSS flat (within 10 MB).

Run: python tests/benchmarks/shell_live.py   (prints one JSON object)
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests.app.conftest import leave_prompt  # noqa: E402
from tests.benchmarks.lag import LagTicker  # noqa: E402
from tests.capsules import write_capsule  # noqa: E402
from tests.responses import text_response, tool_response  # noqa: E402
from tui.app.app import SupervisorApp  # noqa: E402
from tui.core.events import vocabulary as ev  # noqa: E402
from tui.core.loop.launch import LaunchOptions  # noqa: E402
from tui.core.loop.session import Session  # noqa: E402
from tui.core.manifest.reader import load_capsule  # noqa: E402

COMMAND = "for i in $(seq 30); do seq 1 1000; sleep 0.1; done"
LINES = 30_000


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 1e6, 1)


def capsule(root: Path) -> Path:
    return write_capsule(root, [tool_response(COMMAND, "flood"), text_response("done")],
                         name="flood", model="m", max_turns=None)


class Screen:
    """The app's bridge, counting what passes; `live=False` holds ShellOutput back."""

    def __init__(self, app: SupervisorApp, live: bool) -> None:
        self.app, self.live = app, live
        self.outputs = 0
        self.lines = 0
        self.skipped = 0
        self.result_at: float | None = None

    def emit(self, event: ev.Event) -> None:
        if isinstance(event, ev.ShellOutput):
            if not self.live:
                return
            self.outputs += 1
            self.lines += event.text.count("\n") + 1
            self.skipped += event.skipped_lines
        elif isinstance(event, ev.ShellExecuted):
            self.result_at = time.perf_counter()
        self.app.bridge.emit(event)


async def watch(live: bool, home: Path, work: Path) -> dict[str, Any]:
    app = SupervisorApp(home)
    screen = Screen(app, live)
    session = Session(load_capsule(capsule(work / "capsule")),
                      LaunchOptions(task="go", home=home, workdir=work / "workdir"),
                      sinks=[screen], responder=app.responder, cancel=app.cancel)
    app.attach(session)
    ticker = LagTicker()
    rss_before = rss_mb()
    async with app.run_test(size=(160, 48)) as pilot:
        await leave_prompt(pilot)  # out of the prompt: the Shell pane, where the lines go
        await pilot.press("2")
        ticker.start(app)
        shell = app.supervisor.shell
        while not shell.row_count and app.result is None:  # noqa: ASYNC110 - a thread runs it
            await asyncio.sleep(0.005)
        ticker.reset()
        started = time.perf_counter()
        while shell.count == 0 and time.perf_counter() - started < 60:  # noqa: ASYNC110
            await asyncio.sleep(0.005)
        shown_at = time.perf_counter()
        running_s = shown_at - started
        while app.result is None:  # noqa: ASYNC110 - the session's thread ends it
            await asyncio.sleep(0.05)
        rows = shell.row_count
    result_delay = shown_at - screen.result_at if screen.result_at is not None else None
    return {
        "way": "live" if live else "result-only",
        "command_s": round(running_s, 2),
        "worst_lag_ms": ticker.worst_ms,
        "p99_lag_ms": ticker.p99_ms,
        "shell_output_events": screen.outputs,
        "lines_shown_live": screen.lines,
        "lines_skipped_live": screen.skipped,
        "pane_rows": rows,
        "result_on_screen_after_ms": None if result_delay is None
        else round(result_delay * 1000, 1),
        "rss_mb_before": rss_before,
        "rss_mb_after": rss_mb(),
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        asyncio.run(watch(True, base / "warm-home", base / "warm"))  # imports, caches
        live = asyncio.run(watch(True, base / "home-live", base / "live"))
        quiet = asyncio.run(watch(False, base / "home-quiet", base / "quiet"))
    print(json.dumps({
        "benchmark": "shell_live",
        "command": COMMAND,
        "lines_written": LINES,
        "live": live,
        "result_only": quiet,
        "worst_lag_ratio_live_to_result_only": round(
            live["worst_lag_ms"] / max(quiet["worst_lag_ms"], 0.1), 2),
        "goals": {
            "worst_lag_under_100ms_live": live["worst_lag_ms"] < 100,
            "result_on_screen_within_500ms": (live["result_on_screen_after_ms"] or 1e9) < 500,
            "lines_accounted_for": live["lines_shown_live"] + live["lines_skipped_live"]
            == LINES,
            "rss_flat_within_10mb": live["rss_mb_after"] - live["rss_mb_before"] < 10,
        },
    }, indent=2))


if __name__ == "__main__":
    main()
