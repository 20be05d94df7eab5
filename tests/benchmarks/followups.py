"""Benchmark: a follow-up task in a long threaded session.

1. Latency. A threaded session whose context already holds N messages (100, 10,000,
   100,000: loaded from a real record for the first task) is sent a follow-up with
   `Session.submit`; the time from the submit to the driver receiving the follow-up's request
   is measured. Compared in the same run with what re-reading the context from the record
   costs (the reader's parse of the same file, as a task that re-read it would pay). Goal:
   under 20 ms at every size, and flat.
2. Memory. RSS after 10 and after 200 short tasks in one session. Goal: flat within 10%.

Run: python tests/benchmarks/followups.py   (prints one JSON object)
"""

from __future__ import annotations

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
from tests.capsules import write_capsule  # noqa: E402
from tui.core.cancel import CancelToken  # noqa: E402
from tui.core.chat import assistant_message, user_message  # noqa: E402
from tui.core.inference.driver import DriverReply, StreamSink  # noqa: E402
from tui.core.loop.launch import LaunchOptions  # noqa: E402
from tui.core.loop.session import Session  # noqa: E402
from tui.core.manifest.reader import load_capsule  # noqa: E402
from tui.core.record.reader import RecordReader  # noqa: E402
from tui.core.record.writer import RecordWriter, record_path  # noqa: E402

SIZES = (100, 10_000, 100_000)


class TimedDriver:
    """Answers every request at once and keeps when each arrived."""

    name = "timed"

    def __init__(self) -> None:
        self.arrived: list[float] = []
        self.event = threading.Event()

    def complete(self, request: dict[str, Any], stream: StreamSink,
                 cancel: CancelToken) -> DriverReply:
        self.arrived.append(time.perf_counter())
        self.event.set()
        answer = {"stop_reason": "end_turn", "content": [{"type": "text", "text": "ok"}]}
        return DriverReply("passed", json.dumps(answer))

    def close(self) -> None:
        return None


def capsule(root: Path) -> Path:
    return write_capsule(root, [], name="bench", model="m", max_turns=None, shell=(),
                         lifecycle={"task_acceptance": "queue", "queue_depth": 1000,
                                    "after_task": "sleep", "conversation": "threaded"})


def seed_record(home: Path, context: str, count: int) -> Path:
    path = record_path(home, "bench", context)
    assert path is not None
    writer = RecordWriter(home, path, lambda _: None)
    for n in range(count // 2):
        writer.append(user_message(f"question {n} about the project"))
        writer.append(assistant_message([{"type": "text", "text": f"answer {n}, in words"}]))
    writer.close()
    return path


def start(root: Path, home: Path, context: str) -> tuple[Session, TimedDriver, threading.Thread]:
    driver = TimedDriver()
    session = Session(load_capsule(root), LaunchOptions(task="begin", context_id=context,
                                                        home=home), driver=driver)
    worker = threading.Thread(target=session.run, daemon=True)
    worker.start()
    return session, driver, worker


def wait_for(driver: TimedDriver, count: int, limit: float = 600) -> None:
    deadline = time.monotonic() + limit
    while len(driver.arrived) < count:
        if time.monotonic() > deadline:
            raise RuntimeError("the session did not answer")
        time.sleep(0.0005)


def latency(base: Path, size: int) -> dict[str, Any]:
    home = base / f"home-{size}"
    root = capsule(base / f"capsule-{size}")
    context = f"ctx_bench{size}"
    path = seed_record(home, context, size)
    session, driver, worker = start(root, home, context)
    wait_for(driver, 1)  # the first task (the record loaded once)
    times = []
    for n in range(5):
        time.sleep(0.05)  # the previous task ends and the session sleeps
        sent = time.perf_counter()
        assert session.submit(f"follow-up {n}") is None
        wait_for(driver, n + 2)
        times.append(driver.arrived[-1] - sent)
    session.inbox.close()
    worker.join(60)
    started = time.perf_counter()
    RecordReader(cache=False).messages(path)
    reread = time.perf_counter() - started
    best = min(times)
    return {"messages": size, "followup_ms": round(best * 1000, 2),
            "reread_record_ms": round(reread * 1000, 2),
            "reread_to_followup_ratio": round(reread / best, 1)}


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def memory(base: Path) -> dict[str, Any]:
    home = base / "home-mem"
    root = capsule(base / "capsule-mem")
    session, driver, worker = start(root, home, "ctx_mem")
    wait_for(driver, 1)
    marks = {}
    for n in range(1, 201):
        while session.submit(f"task {n}") is not None:
            time.sleep(0.001)
        wait_for(driver, n + 1)
        if n in (10, 200):
            time.sleep(0.05)
            marks[n] = rss_kb()
    session.inbox.close()
    worker.join(60)
    return {"rss_kb_after_10_tasks": marks[10], "rss_kb_after_200_tasks": marks[200],
            "rss_200_to_10_ratio": round(marks[200] / marks[10], 3)}


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        os.environ["MURMUR_HOME"] = str(base / "home")
        sizes = [latency(base, size) for size in SIZES]
        report = {"benchmark": "followups", "latency": sizes,
                  "followup_ms_max": max(s["followup_ms"] for s in sizes),
                  "goal_ms": 20, "memory": memory(base)}
        report["meets_latency_goal"] = report["followup_ms_max"] < 20
        mem = report["memory"]
        report["meets_memory_goal"] = mem["rss_200_to_10_ratio"] <= 1.10
    print(json.dumps(report))


if __name__ == "__main__":
    sys.exit(main())
