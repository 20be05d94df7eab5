"""The door's cost per task, for the fleet benchmark (tests/benchmarks/fleet.py): a sleeping
session in this process takes 100 one-response tasks directly (`Session.submit`) and 100
through its door (`SendMessage` over loopback HTTP), alternately; the median time from sending
to the task's end, both ways (goal: the door adds under 5 ms)."""

from __future__ import annotations

import statistics
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from tests.capsules import write_capsule
from tests.responses import text_response

V1 = {"A2A-Version": "1.0"}


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
