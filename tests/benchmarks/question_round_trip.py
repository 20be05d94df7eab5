"""Benchmark: a question's round trip, the door's answer to the waiting tool call, before and
after, in one run.

A served headless session (Door, Session, Serving, the headless responder with its questions
waiting for the door — as `launch --headless --serve` builds it) runs one task through the
door whose tool (tests/wasm/fixtures/ask_tool.wasm) asks, call after call. For each question
the measuring thread waits for it to be asked, then answers it with a real `SendMessage`
(taskId) over HTTP on loopback. Two times, from just before that request is sent:
- `answer_to_waiting_call`: until the responder's `ask` returns the answer on the session's
  thread, inside the `request-input` host call (what a poll delays);
- `answer_to_tool_with_journal`: until the host call hands it to the tool (its `InputAnswered`
  event), after the turn journal has recorded the answer (a synced write, by design).
For scale, a `GetTask` exchange with the same door is timed before each answer: the part of a
round trip that is HTTP on loopback and the door's own work, with no question in it.

The tree of an earlier commit (`--before`, default 7a4296b: a question waited in a 0.1 s poll
loop) is unpacked into a temporary folder; each tree runs the same child (this file, with
`--child`, importing that tree's `tui`), interleaved, `--rounds` times. Goal: no poll — the
median under 2 ms.

Run: python tests/benchmarks/question_round_trip.py [--before COMMIT] [--questions N]
     [--rounds N]   (prints one JSON object)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from io import BytesIO
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
V1 = {"A2A-Version": "1.0"}
BEFORE = "7a4296b"  # the last commit whose questions waited in a 0.1 s poll loop


# -- the served session (child process, one tree) --------------------------------------------
class Watch:
    """A sink: when each question was asked and when its answer reached the host call."""

    def __init__(self) -> None:
        self.asked = threading.Condition()
        self.waiting: list[str] = []  # request ids asked and not yet answered
        self.answered_at: dict[str, float] = {}
        self.woke_at: dict[str, float] = {}
        self.ended = threading.Event()

    def emit(self, event: Any) -> None:
        kind = type(event).__name__
        if kind == "InputAnswered":
            self.answered_at[event.request_id] = time.perf_counter()
        elif kind == "InputRequested":
            with self.asked:
                self.waiting.append(event.request_id)
                self.asked.notify_all()
        elif kind == "TaskEnded" and event.task_id.startswith("tsk_"):
            self.ended.set()

    def next_question(self) -> str:
        with self.asked:
            if not self.asked.wait_for(lambda: self.waiting, 60):
                raise SystemExit("no question was asked")
            return self.waiting.pop(0)


def child(questions: int) -> None:
    import httpx

    from tui.core.asking.questions import QuestionBoard
    from tui.core.door import Door
    from tui.core.door.serving import Serving
    from tui.core.headless import HeadlessResponder
    from tui.core.loop.launch import LaunchOptions
    from tui.core.loop.session import Session
    from tui.core.manifest.reader import load_capsule

    tree = Path(os.environ["PYTHONPATH"])
    base = Path(tempfile.mkdtemp(prefix="round-trip-"))
    root = base / "capsule"
    root.mkdir()
    ask: dict[str, Any] = {"stop_reason": "tool_call", "content": [
        {"type": "tool_call", "id": "c", "name": "ask", "input": {"q": "which branch?"}}]}
    done: dict[str, Any] = {"stop_reason": "end_turn", "content": [{"type": "text", "text": "ok"}]}
    steps = [done] + [dict(ask, content=[dict(ask["content"][0], id=f"c{n}")])
                      for n in range(questions)] + [done]
    (root / "script.json").write_text(json.dumps(steps))
    (root / "murmur.yaml").write_text(
        "name: round-trip\nversion: '1'\nartifacts:\n"
        "  - name: drv\n    runtime: driver\n    builtin: scripted\n"
        "    config: {script: script.json}\n"
        f"  - name: ask\n    runtime: tool\n    source: {tree}/tests/wasm/fixtures/ask_tool.wasm\n"
        "inference:\n  model: m\n  driver: {artifact: drv}\n"
        f"  max_turns: {questions + 5}\n"
        "lifecycle:\n  task_acceptance: queue\n  after_task: sleep\n  queue_depth: 4\n"
        "  input_timeout_secs: 600\n")
    capsule = load_capsule(root)
    board = QuestionBoard()
    board.door_only = True  # as `launch --headless --serve`: questions wait for the door
    door = Door(capsule, board)
    watch = Watch()

    class Timed(HeadlessResponder):
        """The moment the waiting call has its answer (before the journal records it)."""

        def ask(self, request: Any) -> str:
            answer = super().ask(request)
            watch.woke_at[request.request_id] = time.perf_counter()
            return answer

    session = Session(capsule, LaunchOptions(task="warm", home=base / "home"),
                      sinks=[door.sink, watch],
                      responder=Timed([], board=board, err=io.StringIO()))
    serving = Serving.start(door, session)
    runner = threading.Thread(target=session.run, daemon=True)
    runner.start()
    took: list[float] = []
    woke: list[float] = []
    http: list[float] = []
    with httpx.Client(base_url=serving.url, timeout=60) as client:
        sent = client.post("/", headers=V1, json={
            "jsonrpc": "2.0", "id": 0, "method": "SendMessage", "params": {"message": {
                "messageId": "m0", "role": "ROLE_USER", "parts": [{"text": "ask me"}]}}})
        task_id = sent.json()["result"]["task"]["id"]
        for n in range(questions):
            request_id = watch.next_question()
            while door.table.get(task_id) is None or \
                    door.table.get(task_id).state != "input-required":  # type: ignore[union-attr]
                time.sleep(0.0005)  # the door's task table takes the question on its loop
            body = {"jsonrpc": "2.0", "id": n + 1, "method": "SendMessage", "params": {
                "message": {"messageId": f"a{n}", "role": "ROLE_USER", "taskId": task_id,
                            "parts": [{"text": "main"}]}}}
            started = time.perf_counter()  # the HTTP exchange alone, for scale: GetTask
            client.post("/", headers=V1, json={"jsonrpc": "2.0", "id": -1, "method": "GetTask",
                                               "params": {"id": task_id}})
            http.append(time.perf_counter() - started)
            started = time.perf_counter()
            answer = client.post("/", headers=V1, json=body).json()
            if "result" not in answer:
                raise SystemExit(f"the answer was refused: {answer}")
            deadline = time.monotonic() + 60
            while request_id not in watch.answered_at:  # the reply may come first
                if time.monotonic() > deadline:
                    raise SystemExit("the answer never reached the tool")
                time.sleep(0.0005)
            took.append(watch.answered_at[request_id] - started)
            woke.append(watch.woke_at[request_id] - started)
    watch.ended.wait(60)
    session.inbox.close()
    session.cancel.set()
    runner.join(30)
    serving.end()
    shutil.rmtree(base, ignore_errors=True)
    import tui

    print(json.dumps({"tui": str(Path(tui.__file__).parent), "woke_s": woke,
                      "to_tool_s": took, "get_task_s": http}))


# -- the comparison --------------------------------------------------------------------------
def unpack(commit: str, target: Path) -> None:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")


def run_child(tree: Path, questions: int) -> dict[str, Any]:
    env = dict(os.environ) | {"PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, __file__, "--child", "--questions", str(questions)],
                          cwd=tree, env=env, check=True, capture_output=True, text=True)
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if Path(found["tui"]) != tree / "tui":
        raise SystemExit(f"the child imported {found['tui']}, not {tree / 'tui'}")
    return found


def summary(took: list[float]) -> dict[str, float]:
    ordered = sorted(took)
    return {"min_ms": round(ordered[0] * 1000, 3),
            "median_ms": round(statistics.median(ordered) * 1000, 3),
            "p90_ms": round(ordered[int(len(ordered) * 0.9)] * 1000, 3),
            "max_ms": round(ordered[-1] * 1000, 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default=BEFORE)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(args.questions)
        return
    with tempfile.TemporaryDirectory(prefix="round-trip-before-") as folder:
        before = Path(folder)
        unpack(args.before, before)
        trees = {"before": before, "after": REPO}
        woke: dict[str, list[float]] = {name: [] for name in trees}
        to_tool: dict[str, list[float]] = {name: [] for name in trees}
        get_task: list[float] = []
        for _ in range(args.rounds):  # interleaved: the machine's noise falls on both alike
            for name, tree in trees.items():
                found = run_child(tree, args.questions)
                woke[name] += found["woke_s"]
                to_tool[name] += found["to_tool_s"]
                get_task += found["get_task_s"]
    with open("/proc/loadavg") as load:
        load_1min = float(load.read().split()[0])
    woken = {name: summary(values) for name, values in woke.items()}
    tool = {name: summary(values) for name, values in to_tool.items()}
    print(json.dumps({
        "before": args.before, "questions_each": len(woke["after"]),
        "load_average_1min_at_end": load_1min,
        "answer_to_waiting_call": {"before": woken["before"], "after": woken["after"]},
        "answer_to_tool_with_journal": {"before": tool["before"], "after": tool["after"]},
        "get_task_http_exchange_for_scale": summary(get_task),
        "before_over_after_median_ratio": round(woken["before"]["median_ms"] /
                                                woken["after"]["median_ms"], 1),
        "goal_under_2ms": woken["after"]["median_ms"] < 2.0}))

if __name__ == "__main__":
    main()
