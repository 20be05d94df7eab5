"""Benchmark: one fleet screen watching 200 streaming sessions over 4 hosts, and the door's
cost per task (tests/benchmarks/fleet_door.py).

What it launches: 4 "hosts" (tests/benchmarks/fleet_host.py), each one process under `nice 10`
serving 50 real sessions on threads — the scripted driver, a real door bound to the host's own
loopback address (127.0.0.1 … 127.0.0.4), a real running record in one `MURMUR_HOME` — instead
of 200 `launch --headless --serve` processes, which two cores cannot run beside the screen
being measured. Every tenth session of each host asks questions (a WebAssembly tool; the
questions go to the hosts in turn); the others stream a long answer at `--rate` characters a
second (100: 6 frames a second each, ~1,100 frames a second for the fleet), two tasks queued
each. Each host has its own `MURMUR_HOME`; the fleet's has none of their records and finds them
as it finds another machine's: its `$MURMUR_HOME/tui/fleet.yaml` lists the four under `hosts:`,
each with `discover:` running `murmur-tui ps --json` with that host's `MURMUR_HOME` (a command
like `ssh host-3 murmur-tui ps --json`, without the network), every 15 s (`interval: 15`: a
look costs a Python start and 50 card probes, on the same two cores as the fleet), and
`notify: webhook:` at an HTTP server on loopback in this process.

The fleet screen is the real app (headless Textual at 160×48) in this process, opened twice on
the same running sessions: with the old drawing and collection switched back on (`before`:
every redraw repaints the whole list and lays the screen out, full collections never freeze
their survivors; tests/benchmarks/fleet_stalls.py) and as it is now (`after`). Measured each
time: the first full render (from the app's start to the first refresh of the screen after
every session's row is listed; goal < 2 s),
the event loop's worst and p99 lag (drift of a 10 ms ticker, goal < 50 ms) over `--window`
seconds with questions asked on every host, the full collections' loop CPU, the time from a
question being asked (GetTask polled every 2 ms says input-required) to its row under Needs
you (goal < 300 ms) and to the webhook's POST (goal < 500 ms); the RSS the sessions add to the
fleet (goal < 2 MB a session: RSS with every session listed less RSS of the same app with
none). `--stalls` adds, per loop pause over 40 ms, the frames a sampling thread saw most on the
loop's thread during it.

Run: python tests/benchmarks/fleet.py [--sessions 200] [--hosts 4] [--rate 100]
     (prints one JSON object; ~5 minutes)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from operator import contains
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests.benchmarks.fleet_door import door_overhead  # noqa: E402
from tests.benchmarks.fleet_stalls import Stalls, old_behaviour  # noqa: E402
from tests.benchmarks.lag import LagTicker  # noqa: E402
from tests.capsules import write_capsule  # noqa: E402
from tests.responses import call_response, text_response  # noqa: E402
from tui.app.fleet.app import FleetApp  # noqa: E402

V1 = {"A2A-Version": "1.0"}
ASK_TOOL = REPO / "tests" / "wasm" / "fixtures" / "ask_tool.wasm"
SLEEP = "lifecycle:\n  task_acceptance: queue\n  after_task: sleep\n  queue_depth: 4\n"
LONG = "The fleet watches every session at once. " * 200  # ~8,400 characters


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 1e6, 1)


def capsule(root: Path, asks: bool, rate: int) -> Path:
    if asks:
        steps = [call_response("ask", {"q": "go on?"}, "q"), text_response("thanks")] * 20
    else:
        steps = [text_response(LONG)] * 4
    return write_capsule(root, steps, name=root.name, model="m", max_turns=4, shell=(),
                         driver_config={"chunk_chars": 16, "chars_per_second": rate},
                         tools={"ask": ASK_TOOL} if asks else None,
                         extra=SLEEP + "  input_timeout_secs: 300\n")


class Door:
    """A session as the benchmark drives it: its door's URL, one shared HTTP client."""

    def __init__(self, client: httpx.Client, session_id: str, url: str, asks: bool,
                 host: str) -> None:
        self.client, self.session_id, self.url = client, session_id, f"http://{url}"
        self.asks, self.host = asks, host

    def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        return dict(self.client.post(self.url + "/", json=body, headers=V1).json())

    def send(self, text: str, **extra: Any) -> dict[str, Any]:
        message = {"messageId": f"m{time.monotonic_ns()}", "role": "ROLE_USER",
                   "parts": [{"text": text}], **extra}
        return dict(self.rpc("SendMessage", {"message": message})["result"]["task"])

    def poll_until_asking(self, task_id: str) -> float:
        while True:
            state = self.rpc("GetTask", {"id": task_id})["result"]["status"]["state"]
            if state == "TASK_STATE_INPUT_REQUIRED":
                return time.monotonic()
            time.sleep(0.002)


def host_name(url: str) -> str:
    """127.0.0.3:PORT → host-3: the host a door belongs to, as fleet.yaml names them."""
    return f"host-{url.split(':')[0].rsplit('.', 1)[-1]}"


@contextmanager
def hosts(base: Path, home: Path, sessions: int, count: int, rate: int,
          client: httpx.Client) -> Iterator[list[Door]]:
    processes: list[subprocess.Popen[str]] = []
    doors: list[Door] = []
    try:
        for h in range(count):  # every tenth session of each host asks
            roots = [capsule(base / f"cap{n}{'-ask' if (n // count) % 10 == 0 else ''}",
                             (n // count) % 10 == 0, rate) for n in range(h, sessions, count)]
            processes.append(subprocess.Popen(
                ["nice", "-n", "10", sys.executable, str(REPO / "tests" / "benchmarks" /
                 "fleet_host.py"), "--home", str(home / f"host-{h + 1}"),
                 "--bind", f"127.0.0.{h + 1}",
                 *map(str, roots)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                cwd=REPO))
        for process in processes:
            assert process.stdout is not None
            for line in process.stdout:
                found = json.loads(line)
                if "ready" in found:
                    break
                doors.append(Door(client, found["session_id"], found["url"],
                                  found["capsule"].endswith("-ask"), host_name(found["url"])))
            else:
                raise SystemExit("a host ended before its sessions were up")
        yield doors
    finally:
        for process in processes:
            assert process.stdin is not None
            process.stdin.close()
        for process in processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()


class Webhook:
    """A loopback HTTP server taking the fleet's notifications: when each session's came."""

    def __init__(self) -> None:
        self.came: dict[str, float] = {}
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                hook.came[body["session"]] = time.monotonic()
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"


class Timed(FleetApp):
    """The fleet app, noting when each session's row first lands under Needs you."""

    asked_at: dict[str, float]

    def _drain(self) -> None:
        before = {key for key, s in self.sessions.items() if s.group == "needs"}
        super()._drain()
        now = time.monotonic()
        for key, session in self.sessions.items():
            if session.group == "needs" and key not in before:
                self.asked_at.setdefault(key, now)


async def wait(condition: Callable[[], bool], within: float = 120.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting")
        await asyncio.sleep(0.01)


def answered(app: FleetApp, session_id: str) -> bool:
    return app.sessions[session_id].group != "needs"


def full_collections() -> tuple[list[float], Callable[[], None]]:
    """The loop thread's CPU time of each full collection (which load does not inflate)."""
    taken: list[float] = []
    started = [0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if info["generation"] == 2 and threading.current_thread() is threading.main_thread():
            if phase == "start":
                started[0] = time.thread_time()
            else:
                taken.append(time.thread_time() - started[0])

    gc.callbacks.append(on_gc)
    return taken, lambda: gc.callbacks.remove(on_gc)


async def empty_fleet(home: Path) -> float:
    """RSS with the fleet app up and no session: what the sessions' RSS is measured from."""
    app = FleetApp(home)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(1.0)
        return rss_mb()


async def measure(doors: list[Door], home: Path, hook: Webhook, window: float,
                  questions: int, stalls: bool) -> dict[str, Any]:
    total = len(doors)
    app = Timed(home)
    app.asked_at = {}
    ticker = LagTicker()
    sampler = Stalls() if stalls else None
    started = time.perf_counter()
    async with app.run_test(size=(160, 48)) as pilot:
        await wait(lambda: sum(key in app.fleet.lines for key in app.sessions) >= total
                   and len(app.sessions) >= total)
        painted: list[float] = []  # the first refresh of the screen after every row is listed
        app.call_after_refresh(lambda: painted.append(time.perf_counter()))
        await wait(lambda: bool(painted))
        first_render = painted[0] - started
        await pilot.pause()
        await wait(lambda: sum(s.connection == "live" for s in app.sessions.values()) >= total)
        all_live = time.perf_counter() - started
        await pilot.pause(2.0)
        rss = rss_mb()
        ticker.start(app)
        if sampler is not None:
            sampler.start(app)
        collected, stop_counting = full_collections()
        cpu_before, wall_before = os.times(), time.perf_counter()
        to_row: list[float] = []
        to_hook: list[float] = []
        askers = [d for d in doors if d.asks]
        asked_on: list[str] = []
        turns: dict[str, int] = {}  # each host's askers numbered: the hosts ask in turn
        ranked = []
        for door in askers:
            turns[door.host] = turns.get(door.host, 0) + 1
            ranked.append((turns[door.host], door.host, door))
        by_host = [door for _, _, door in sorted(ranked, key=lambda item: item[:2])]
        for n in range(questions):
            door = by_host[n % len(by_host)]
            asked_on.append(door.host)
            sid = door.session_id
            app.asked_at.pop(door.session_id, None)
            hook.came.pop(door.session_id, None)
            task = await asyncio.to_thread(door.send, "ask")  # off the loop measured
            asked = await asyncio.to_thread(door.poll_until_asking, task["id"])
            await wait(partial(contains, app.asked_at, sid), within=30)
            await wait(partial(contains, hook.came, sid), within=30)
            to_row.append(app.asked_at[door.session_id] - asked)
            to_hook.append(hook.came[door.session_id] - asked)
            await asyncio.to_thread(door.send, "yes", taskId=task["id"],
                                    contextId=task["contextId"])
            await wait(partial(answered, app, sid))
        rest = window - (time.perf_counter() - wall_before)
        if rest > 0:
            await pilot.pause(rest)
        cpu_after = os.times()
        cpu_share = ((cpu_after.user - cpu_before.user) + (cpu_after.system -
                     cpu_before.system)) / (time.perf_counter() - wall_before)
        stop_counting()
        streaming = sum(s.group == "working" for s in app.sessions.values())
        hosts_seen = sorted({s.host for s in app.sessions.values()})
        lags = list(ticker.lags)
        worst_stalls = sampler.stop() if sampler is not None else None
        freezes = app.gc_policy.frozen_since_thaw
        thawed = time.thread_time()
        app.gc_policy.thaw()  # what the freezes kept from the collector, and its pause
        thaw = time.thread_time() - thawed
    ticker.lags = lags
    out: dict[str, Any] = {
        "first_full_render_s": round(first_render, 2),
        "all_live_s": round(all_live, 2),
        "streaming_while_measured": streaming,
        "hosts": hosts_seen,
        "rss_mb": rss,
        "measured_s": round(time.perf_counter() - wall_before, 1),
        "worst_lag_ms": ticker.worst_ms,
        "p99_lag_ms": ticker.p99_ms,
        "lags_over_50ms": sum(lag > 0.05 for lag in lags),
        "fleet_cpu_of_one_core": round(cpu_share, 2),
        "full_gcs": len(collected),
        "full_gc_cpu_worst_ms": round(max(collected, default=0.0) * 1000, 1),
        "gc_freezes": freezes,
        "thaw_found_objects": app.gc_policy.trapped,
        "thaw_cpu_ms": round(thaw * 1000, 1),
        "questions_asked_on": sorted(set(asked_on)),
        "question_to_row_ms_median": round(statistics.median(to_row) * 1000, 1),
        "question_to_row_ms_worst": round(max(to_row) * 1000, 1),
        "question_to_webhook_ms_median": round(statistics.median(to_hook) * 1000, 1),
        "question_to_webhook_ms_worst": round(max(to_hook) * 1000, 1),
    }
    if worst_stalls is not None:
        out["stalls"] = worst_stalls
    return out


async def fleet(args: argparse.Namespace, base: Path) -> dict[str, Any]:
    home = base / "home"
    hook = Webhook()
    bare = await empty_fleet(base / "empty-home")
    fleet_yaml = home / "tui" / "fleet.yaml"
    fleet_yaml.parent.mkdir(parents=True, mode=0o700)
    fleet_yaml.write_text(json.dumps({
        "notify": {"webhook": hook.url, "terminal": False, "desktop": False},
        "hosts": [{"name": f"host-{h + 1}", "interval": 15,
                   "discover": ["env", f"MURMUR_HOME={home / f'host-{h + 1}'}",
                                sys.executable, "-m", "tui", "ps", "--json"]}
                  for h in range(args.hosts)]}))  # JSON is YAML
    fleet_yaml.chmod(0o600)
    out: dict[str, Any] = {"sessions": args.sessions, "hosts": args.hosts,
                           "chars_per_second": args.rate, "rss_mb_no_session": bare}
    with httpx.Client(timeout=30) as client, \
            hosts(base, home, args.sessions, args.hosts, args.rate, client) as doors:
        for door in doors:  # two long answers each: streaming all through the run
            if not door.asks:
                door.send("stream")
                door.send("stream again")
        for mode in args.modes.split(","):
            with old_behaviour(mode == "before"):
                measured = await measure(doors, home, hook, args.window, args.questions,
                                         args.stalls)
            measured["rss_mb_per_session"] = round((measured["rss_mb"] - bare) /
                                                   len(doors), 2)
            out[mode] = measured
    hook.server.shutdown()
    if "before" in out and "after" in out:
        out["worst_lag_before_over_after"] = round(
            out["before"]["worst_lag_ms"] / max(out["after"]["worst_lag_ms"], 0.1), 2)
        out["p99_lag_before_over_after"] = round(
            out["before"]["p99_lag_ms"] / max(out["after"]["p99_lag_ms"], 0.1), 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--hosts", type=int, default=4)
    parser.add_argument("--rate", type=int, default=100,
                        help="characters a second each streaming session sends")
    parser.add_argument("--window", type=float, default=30.0,
                        help="seconds of lag measured in each mode (at least)")
    parser.add_argument("--questions", type=int, default=8)
    parser.add_argument("--modes", default="before,after")
    parser.add_argument("--skip-door", action="store_true")
    parser.add_argument("--stalls", action="store_true")
    args = parser.parse_args()
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_door:
            result.update(door_overhead(Path(tmp)))
        result.update(asyncio.run(fleet(args, Path(tmp))))
    result["goals"] = {"door_adds_ms": 5.0, "first_full_render_s": 2.0,
                       "rss_mb_per_session": 2.0, "worst_lag_ms": 50, "question_to_row_ms": 300,
                       "question_to_webhook_ms": 500}
    print(json.dumps(result))


if __name__ == "__main__":
    threading.excepthook = lambda args: None  # a watcher thread torn down at exit says nothing
    main()
