"""Benchmark: one fleet screen watching 50 served sessions, and the door's cost per task.

Fleet: 50 real `murmur-tui launch --headless --serve` processes (scripted driver, each
streaming a long answer at 400 characters a second; five of them ask questions) watched by one
fleet screen (the real app, headless Textual at 160×48, in this process). Measured: the fleet
process's RSS with 5 sessions live and with 50 (goal: it grows by under 2 MB a session); the
event loop's worst and p99 lag (drift of a 10 ms ticker) while 50 stream (goal: under 50 ms);
and the time from a question being asked (GetTask polled every 2 ms says input-required) to
its row under *Needs you* (goal: under 200 ms), over ten questions.

Door: a sleeping session in this process takes 100 tasks directly (`Session.submit`) and 100
through its door (`SendMessage` over loopback HTTP), each a one-response task; the median time
from sending to the task's end, both ways (goal: the door adds under 5 ms).

Run: python tests/benchmarks/fleet.py [SESSIONS]   (prints one JSON object)
"""

from __future__ import annotations

import asyncio
import json
import os
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
from tests.capsules import write_capsule  # noqa: E402
from tests.responses import call_response, text_response  # noqa: E402
from tui.app.fleet.app import FleetApp  # noqa: E402
from tui.app.fleet.model import FleetSession  # noqa: E402

V1 = {"A2A-Version": "1.0"}
ASK_TOOL = REPO / "tests" / "wasm" / "fixtures" / "ask_tool.wasm"
SLEEP = "lifecycle:\n  task_acceptance: queue\n  after_task: sleep\n  queue_depth: 4\n"
LONG = "The fleet watches every session at once. " * 200  # ~8,400 characters: ~21 s at 400/s


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 1e6, 1)


def capsule(root: Path, asks: bool) -> Path:
    if asks:
        steps = [call_response("ask", {"q": "go on?"}, "q"), text_response("thanks")] * 10
    else:
        steps = [text_response(LONG)] * 4
    return write_capsule(root, steps, name=root.name, model="m", max_turns=4, shell=(),
                         driver_config={"chunk_chars": 16, "chars_per_second": 400},
                         tools={"ask": ASK_TOOL} if asks else None,
                         extra=SLEEP + "  input_timeout_secs: 300\n")


class Served:
    def __init__(self, root: Path, home: Path, log: Path) -> None:
        self.log = log
        self.process = subprocess.Popen(
            ["nice", "-n", "10", sys.executable, "-m", "tui", "launch", str(root),
             "--headless", "--json", "--serve"], stdout=log.open("wb"), stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, env={**os.environ, "MURMUR_HOME": str(home)}, cwd=REPO)
        self.url = ""
        self.session_id = ""
        self.client: httpx.Client | None = None

    def ready(self) -> bool:
        if self.url:
            return True
        for line in self.log.read_text(errors="replace").splitlines():
            if line.startswith("{") and '"url"' in line:
                found = json.loads(line)
                if "session_id" in found and "event" not in found:
                    # `host:port`, as `mur run --json` writes it
                    self.url, self.session_id = f"http://{found['url']}", found["session_id"]
                    self.client = httpx.Client(base_url=self.url, timeout=30)
                    return True
        return False

    def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.client is not None
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        return dict(self.client.post("/", json=body, headers=V1).json())

    def send(self, text: str, **extra: Any) -> dict[str, Any]:
        message = {"messageId": f"m{time.monotonic_ns()}", "role": "ROLE_USER",
                   "parts": [{"text": text}], **extra}
        return dict(self.rpc("SendMessage", {"message": message})["result"]["task"])

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)
        if self.client is not None:
            self.client.close()


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


def start(count: int, base: Path, home: Path, first: int) -> list[Served]:
    out = []
    for n in range(first, first + count):
        asks = n % 10 == 0  # five askers in fifty
        root = capsule(base / f"cap{n}{'-ask' if asks else ''}", asks)
        out.append(Served(root, home, base / f"s{n}.log"))
    deadline = time.monotonic() + 180
    while not all(s.ready() for s in out):
        if time.monotonic() > deadline:
            raise SystemExit("sessions did not start: " + ", ".join(
                str(s.log) for s in out if not s.ready()))
        time.sleep(0.1)
    return out


async def wait(condition: Any, within: float = 120.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting")
        await asyncio.sleep(0.05)


BASELINE = """
import sys, time
lags, last = [], time.perf_counter()
while sys.stdin.readable():
    time.sleep(0.01)
    now = time.perf_counter()
    lags.append(now - last - 0.01)
    last = now
    if len(lags) % 50 == 0 and __import__("select").select([sys.stdin], [], [], 0)[0]:
        break
lags.sort()
print(round(lags[-1] * 1000, 1), round(lags[int(len(lags) * 0.99)] * 1000, 1))
"""


def baseline() -> subprocess.Popen[str]:
    """A bare 10 ms ticker in its own process: what the machine's load alone does to lag."""
    return subprocess.Popen([sys.executable, "-c", BASELINE], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def poll_until_asking(door: Served, task_id: str) -> float:
    while True:
        state = door.rpc("GetTask", {"id": task_id})["result"]["status"]["state"]
        if state == "TASK_STATE_INPUT_REQUIRED":
            return time.monotonic()
        time.sleep(0.002)


async def fleet(total: int, base: Path) -> dict[str, Any]:
    home = base / "home"
    everyone: list[Served] = []
    try:
        everyone += start(5, base, home, 0)
        app = Timed(home)
        app.asked_at = {}
        lags: list[float] = []
        async with app.run_test(size=(160, 48)) as pilot:
            def live(n: int) -> bool:
                return sum(s.connection == "live" for s in app.sessions.values()) >= n

            await wait(lambda: live(5))
            streamers = [s for s in everyone if "-ask" not in str(s.log.name)]
            for door in everyone:
                if door.session_id and "ask" not in app.sessions[door.session_id].capsule:
                    door.send("stream")
            await pilot.pause(3.0)
            rss5 = rss_mb()
            everyone += start(total - 5, base, home, 5)
            await wait(lambda: live(total), within=180)
            for door in everyone[5:]:
                if "ask" not in app.sessions[door.session_id].capsule:
                    door.send("stream")
            streamers = [d for d in everyone if "ask" not in app.sessions[d.session_id].capsule]
            askers = [d for d in everyone if d not in streamers]
            last = [time.perf_counter()]

            def tick() -> None:
                now = time.perf_counter()
                lags.append(now - last[0] - 0.01)
                last[0] = now

            await pilot.pause(2.0)
            last[0] = time.perf_counter()
            app.set_interval(0.01, tick)
            bare = baseline()
            cpu_before, wall_before = os.times(), time.perf_counter()
            delays: list[float] = []
            for n in range(10):
                door = askers[n % len(askers)]
                app.asked_at.pop(door.session_id, None)
                task = await asyncio.to_thread(door.send, "ask")  # off the loop measured
                asked = await asyncio.to_thread(poll_until_asking, door, task["id"])
                await wait(lambda d=door: d.session_id in app.asked_at, within=30)
                delays.append(app.asked_at[door.session_id] - asked)
                await asyncio.to_thread(door.send, "yes", taskId=task["id"],
                                        contextId=task["contextId"])
                await wait(lambda d=door: app.sessions[d.session_id].group != "needs")
            rss50 = rss_mb()
            cpu_after = os.times()
            cpu_share = ((cpu_after.user - cpu_before.user) + (cpu_after.system -
                         cpu_before.system)) / (time.perf_counter() - wall_before)
            assert bare.stdin is not None
            bare.stdin.write("stop\n")
            bare.stdin.flush()
            lags_taken = list(lags)
            out = (await asyncio.to_thread(bare.communicate, None, 30))[0]
            bare_worst, bare_p99 = (float(x) for x in out.split())
            streaming = sum(isinstance(s, FleetSession) and s.group == "working"
                            for s in app.sessions.values())
            del streamers
        return {
            "sessions": total,
            "streaming_while_measured": streaming,
            "rss_mb_at_5": rss5,
            "rss_mb_at_all": rss50,
            # the growth past the first five sessions (none when five or fewer were launched)
            "rss_mb_per_session": round((rss50 - rss5) / (total - 5), 2) if total > 5 else None,
            "worst_lag_ms": round(max(lags_taken, default=0.0) * 1000, 1),
            "p99_lag_ms": round(sorted(lags_taken)[int(len(lags_taken) * 0.99)] * 1000, 1)
            if lags_taken else 0,
            "fleet_cpu_of_one_core": round(cpu_share, 2),
            "bare_loop_worst_lag_ms": bare_worst,
            "bare_loop_p99_lag_ms": bare_p99,
            "question_to_row_ms_median": round(statistics.median(delays) * 1000, 1),
            "question_to_row_ms_worst": round(max(delays) * 1000, 1),
        }
    finally:
        for door in everyone:
            door.close()


class Ended:
    """An EventSink that wakes whoever waits for the next task's end."""

    def __init__(self) -> None:
        self.ended = threading.Condition()
        self.count = 0

    def emit(self, event: Any) -> None:
        from tui.core.events import vocabulary as ev

        if isinstance(event, ev.TaskEnded):
            with self.ended:
                self.count += 1
                self.ended.notify_all()

    def wait_past(self, count: int) -> None:
        with self.ended:
            if not self.ended.wait_for(lambda: self.count > count, timeout=30):
                raise SystemExit("a task did not end")


def door_overhead(base: Path, tasks: int = 100) -> dict[str, Any]:
    """The same one-response task sent directly and through the door, alternately."""
    from tui.core.asking.questions import QuestionBoard
    from tui.core.door import Door
    from tui.core.door.serving import Serving
    from tui.core.headless import HeadlessResponder
    from tui.core.loop.launch import LaunchOptions
    from tui.core.loop.session import Session
    from tui.core.manifest.reader import load_capsule

    root = write_capsule(base / "overhead", [text_response("ok")] * (2 * tasks + 1),
                         name="overhead", model="m", max_turns=None, shell=(),
                         lifecycle={"task_acceptance": "queue", "after_task": "sleep",
                                    "queue_depth": 4})
    capsule = load_capsule(root)
    board = QuestionBoard()
    door = Door(capsule, board)
    ended = Ended()
    session = Session(capsule, LaunchOptions(task="warm", home=base / "overhead-home"),
                      sinks=[door.sink, ended], responder=HeadlessResponder([], board=board))
    serving = Serving.start(door, session)
    runner = threading.Thread(target=session.run, daemon=True)
    runner.start()
    ended.wait_past(0)
    direct: list[float] = []
    served: list[float] = []
    with httpx.Client(base_url=serving.url, timeout=30) as client:
        for n in range(2 * tasks):
            count = ended.count
            started = time.perf_counter()
            if n % 2:
                body = {"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": {
                    "message": {"messageId": f"m{n}", "role": "ROLE_USER",
                                "parts": [{"text": "task"}]}}}
                assert "result" in client.post("/", json=body, headers=V1).json()
            else:
                assert session.submit("task") is None
            ended.wait_past(count)
            (served if n % 2 else direct).append(time.perf_counter() - started)
    session.inbox.close()
    runner.join(30)
    serving.end()
    added = statistics.median(served) - statistics.median(direct)
    return {"tasks_each_way": tasks,
            "direct_median_ms": round(statistics.median(direct) * 1000, 2),
            "door_median_ms": round(statistics.median(served) * 1000, 2),
            "door_adds_ms": round(added * 1000, 2),
            "door_over_direct_ratio": round(statistics.median(served) /
                                            statistics.median(direct), 2)}


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    with tempfile.TemporaryDirectory() as tmp:
        result = door_overhead(Path(tmp))
        result.update(asyncio.run(fleet(total, Path(tmp))))
    result["goals"] = {"door_adds_ms": 5.0, "rss_mb_per_session": 2.0, "worst_lag_ms": 50,
                       "question_to_row_ms": 200}
    print(json.dumps(result))


if __name__ == "__main__":
    threading.excepthook = lambda args: None  # a watcher thread torn down at exit says nothing
    main()
