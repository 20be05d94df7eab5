"""Benchmark: the supervisor screen on a long session.

100,000 events — 1,000 model turns, each streaming 80 text deltas then making 5 shell tool
calls (5,000 tool calls and 5,000 shell events in all) — are fed from a thread at 2,000
events/s into the app under `run_test` through the coalescing bridge (drained every 50 ms);
the same stream fed to it as fast as the thread can (a *flood*: no pacing); and, paced, through
a bridge that posts every event as it comes. Reported for each: the worst and p99 event-loop
lag (drift of a 10 ms `set_interval` ticker), the CPU time of the event loop's thread (which a
busy machine does not inflate), the count and worst pause of full garbage collections, the
mounted widget count and the process RSS at 10%, 50% and 100% of the stream (for the flood: of
the stream taken from the bridge), and how long the screen took to catch up after the last
event (given up after 120 s). The post-every-event bridge gets the first 10,000 events only:
it falls further behind with every event, and a full-length run would not end.
Goals (coalescing): worst lag under 50 ms paced,
under 100 ms flooded; widgets and RSS flat from 10% to 100%.

Also reported: the collections' loop CPU, how many froze their survivors, and what a thaw at
the end found and cost (tui/app/gc_policy.py); `--no-refreeze` runs the policy as it was.

Run: python tests/benchmarks/screen.py [--events N] [--skip-immediate] [--no-refreeze]
(prints one JSON object; ~3 minutes)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.benchmarks.lag import LagTicker  # noqa: E402
from tui.app import gc_policy  # noqa: E402
from tui.app.app import SupervisorApp  # noqa: E402
from tui.app.bridge import CoalescingBridge, ImmediateBridge  # noqa: E402
from tui.core.events import vocabulary as ev  # noqa: E402
from tui.core.events.stream import EventStream  # noqa: E402

RATE = 2000  # events per second
DELTAS_PER_TURN = 80
CALLS_PER_TURN = 5  # each: ToolCallStarted, ToolCallFinished, ShellExecuted


def make_events(total: int) -> list[ev.Event]:
    made: list[ev.Event] = []
    stream = EventStream("ses_bench")
    stream.add(type("Collect", (), {"emit": lambda self, e: made.append(e)})())
    turns = total // (DELTAS_PER_TURN + 2 + 3 * CALLS_PER_TURN)
    stream.emit(ev.SessionStarted(capsule_name="bench", capsule_version="1", model="m",
                workdir="/w", trace_path="/w/trace.jsonl", context_id="ctx", record_path=None,
                max_turns=turns, tools=("bash",), context_max_tokens=100_000))
    stream.emit(ev.TaskStarted(task_id="t", context_id="ctx", text="a long session"))
    for turn in range(turns):
        stream.emit(ev.TurnStarted(task_id="t", turn=turn, max_turns=turns,
                    input_tokens=1000 + turn))
        for piece in range(DELTAS_PER_TURN):
            stream.emit(ev.TextDelta(task_id="t", turn=turn,
                        text=f"word{piece} " if piece % 20 else f"\n\nParagraph {turn}: "))
        stream.emit(ev.TurnCompleted(task_id="t", turn=turn, input_tokens=1000 + turn,
                    output_tokens=40, decision="tool_call", stop_reason="tool_call",
                    tool_name="bash", model="m"))
        for number in range(CALLS_PER_TURN):
            call_id = f"c{turn}.{number}"
            call = {"task_id": "t", "turn": turn, "call_id": call_id, "tool_name": "bash"}
            command = {"command": f"echo {turn}.{number}"}
            stream.emit(ev.ToolCallStarted(kind="shell", input=command, **call))
            stream.emit(ev.ToolCallFinished(kind="shell", status="ok", duration_ms=3,
                        input=command, input_bytes=20,
                        output="<untrusted-content>…</untrusted-content>", output_bytes=60,
                        **call))
            stream.emit(ev.ShellExecuted(task_id="t", turn=turn, call_id=call_id,
                        binary="/usr/bin/bash", command=command["command"], exit_code=0,
                        stdout=f"{turn}\n" * 3, stderr="", stdout_bytes=12, stderr_bytes=0,
                        duration_ms=3, truncated=False))
    return made


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 1e6, 1)


async def run(bridge_kind: str, events: list[ev.Event], home: Path, *,
              paced: bool = True) -> dict[str, Any]:
    bridge = CoalescingBridge() if bridge_kind == "coalescing" else ImmediateBridge()
    app = SupervisorApp(home, bridge=bridge)
    ticker = LagTicker()
    marks: dict[str, dict[str, float]] = {}
    fed = [0]
    done = threading.Event()
    full_gc: list[float] = []  # seconds each generation-2 collection took
    full_gc_cpu: list[float] = []  # ... of the loop thread's CPU (which load does not inflate)
    gc_started = [0.0, 0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            gc_started[:] = [time.perf_counter(), time.thread_time()]
        else:
            full_gc.append(time.perf_counter() - gc_started[0])
            full_gc_cpu.append(time.thread_time() - gc_started[1])

    def feed() -> None:
        started = time.perf_counter()
        for index, event in enumerate(events):
            if paced:
                due = started + index / RATE
                delay = due - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
            bridge.emit(event)
            fed[0] = index + 1
        done.set()

    async with app.run_test(size=(160, 48)) as pilot:
        ticker.start(app)
        await pilot.pause(0.2)
        ticker.reset()
        feeder = threading.Thread(target=feed, daemon=True)
        gc.callbacks.append(on_gc)
        started = time.perf_counter()
        cpu_started = time.thread_time()  # the event loop's thread: robust on a busy machine
        feeder.start()
        checkpoints = [(10, len(events) // 10), (50, len(events) // 2), (100, len(events))]
        def taken() -> int:  # paced: what was fed; flooded: what left the bridge
            return fed[0] if paced else fed[0] - bridge.pending

        for percent, count in checkpoints:
            while taken() < count:  # noqa: ASYNC110 - the feeder is a thread
                await asyncio.sleep(0.05)
            marks[f"{percent}%"] = {
                "widgets": len(list(app.supervisor.walk_children(with_self=False))),
                "rss_mb": rss_mb(),
                "worst_lag_ms_so_far": ticker.worst_ms,
            }
        fed_at = time.perf_counter()
        while fed[0] < len(events):  # noqa: ASYNC110 - the feeder is a thread
            await asyncio.sleep(0.01)
        if not paced:
            fed_at = started  # the flood is fed at once: catching up is the whole run
        caught_up = True
        while not app.idle or app._message_queue.qsize():
            await asyncio.sleep(0.05)
            if time.perf_counter() - fed_at > 120:
                caught_up = False
                break
        catch_up = time.perf_counter() - fed_at
        loop_cpu = time.thread_time() - cpu_started
        gc.callbacks.remove(on_gc)
        freezes = app.gc_policy.frozen_since_thaw
        lags = list(ticker.lags)
        thawed = time.thread_time()
        app.gc_policy.thaw()  # what the freezes kept from the collector, and its pause
        thaw_s = time.thread_time() - thawed
        marks["after catch-up"] = {
            "widgets": len(list(app.supervisor.walk_children(with_self=False))),
            "rss_mb": rss_mb(),
        }
        feed_s = fed_at - started
    ticker.lags = lags  # the thaw's pause is reported on its own
    return {
        "bridge": bridge_kind,
        "paced": paced,
        "events": len(events),
        "feed_s": round(feed_s, 2),
        "catch_up_s": round(catch_up, 2),
        "caught_up": caught_up,
        "worst_lag_ms": ticker.worst_ms,
        "p99_lag_ms": ticker.p99_ms,
        "loop_cpu_s": round(loop_cpu, 2),
        "full_gcs": len(full_gc),
        "full_gc_worst_ms": round(max(full_gc, default=0.0) * 1000, 1),
        "full_gc_cpu_worst_ms": round(max(full_gc_cpu, default=0.0) * 1000, 1),
        "full_gc_cpu_median_ms": round(sorted(full_gc_cpu)[len(full_gc_cpu) // 2] * 1000, 1)
        if full_gc_cpu else 0.0,
        "gc_freezes": freezes,
        "thaw_found_objects": app.gc_policy.trapped,
        "thaw_cpu_ms": round(thaw_s * 1000, 1),
        "batches": bridge.delivered,
        "checkpoints": marks,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--immediate-events", type=int, default=10_000,
                        help="events for the post-every-event bridge, which cannot keep up: "
                             "its queue grows without bound and a full-length run never ends")
    parser.add_argument("--skip-immediate", action="store_true",
                        help="measure only the coalescing bridge, paced and flooded")
    parser.add_argument("--no-refreeze", action="store_true",
                        help="the collection policy as it was: survivors never frozen again")
    args = parser.parse_args()
    if args.no_refreeze:
        gc_policy.FREEZE_ABOVE_SECONDS = float("inf")
    events = make_events(args.events)
    with tempfile.TemporaryDirectory() as home:
        os.environ["MURMUR_HOME"] = home
        coalescing = asyncio.run(run("coalescing", events, Path(home)))
        flood = asyncio.run(run("coalescing", events, Path(home), paced=False))
        immediate = None if args.skip_immediate else \
            asyncio.run(run("immediate", events[:args.immediate_events], Path(home)))

    def flat(case: dict[str, Any], key: str, factor: float, slack: float) -> bool:
        first, last = case["checkpoints"]["10%"], case["checkpoints"]["100%"]
        return bool(last[key] <= first[key] * factor + slack)

    report: dict[str, Any] = {
        "benchmark": "screen",
        "events": len(events),
        "rate_per_s": RATE,
        "coalescing": coalescing,
        "flood": flood,
        "immediate": immediate,
        "refreeze": not args.no_refreeze,
        "worst_lag_ratio_flood_to_paced": round(
            flood["worst_lag_ms"] / max(coalescing["worst_lag_ms"], 0.1), 1),
        "worst_lag_ratio_immediate_to_coalescing": None if immediate is None else round(
            immediate["worst_lag_ms"] / max(coalescing["worst_lag_ms"], 0.1), 1),
        "goals": {
            "worst_lag_under_50ms_paced": coalescing["worst_lag_ms"] < 50,
            "worst_lag_under_100ms_flooded": flood["worst_lag_ms"] < 100,
            "widgets_flat_10_to_100": flat(coalescing, "widgets", 1.1, 10)
            and flat(flood, "widgets", 1.1, 10),
            "rss_flat_10_to_100": flat(coalescing, "rss_mb", 1.15, 0)
            and flat(flood, "rss_mb", 1.15, 0),
        },
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
