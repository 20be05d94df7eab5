"""Benchmark: a session launched on a 100,000-message threaded context, before and after.

A record of `--messages` messages (a user question and an assistant answer, in turn) is written
once; each run copies it into a fresh `$MURMUR_HOME` and launches a real
`python -m tui launch --headless --json` subprocess on it (a scripted driver, `conversation:
threaded`, one task). Measured from the subprocess's start:

- `task_ms`: until its `TaskStarted` event is on stdout (the first task has begun);
- `load_ms`: from its `SessionStarted` event to its `TaskStarted` (their `ts_ms`): the
  context's part of `task_ms`, without the interpreter's start-up;
- `rss_at_task_mb`: the peak RSS so far at that moment (`VmHWM` in `/proc/<pid>/status`);
- `first_turn_ms`: until `TurnStarted` (the context counted, the request about to be sent);
- `peak_rss_mb`: the peak RSS of the whole run (the first turn sends the whole conversation,
  as Murmur sends it), from the child's rusage.

`before` is an earlier commit's tree (`--before`, default the last commit whose threaded
reload held the record parsed), unpacked into a temporary folder as `layout.py` does; `after`
is the working tree. Runs interleave; the best of `--runs` is kept for each.

Run: python tests/benchmarks/threaded_context.py [--messages N] [--runs N] [--before COMMIT]
(prints one JSON object)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.benchmarks.followups import seed_record  # noqa: E402
from tests.benchmarks.layout import unpack  # noqa: E402
from tui.core.record.writer import record_path  # noqa: E402

BEFORE = "ed009e4"
CONTEXT = "ctx_bench"
GOAL_TASK_MS = 500
GOAL_RSS_MB = 120


def capsule(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    answer = {"stop_reason": "end_turn", "content": [{"type": "text", "text": "ok"}]}
    (root / "script.json").write_text(json.dumps([answer]))
    (root / "murmur.yaml").write_text(
        "name: bench\nversion: '1'\nartifacts:\n"
        "  - name: drv\n    runtime: driver\n    builtin: scripted\n"
        "    config: {script: script.json}\n"
        "inference:\n  model: m\n  driver: {artifact: drv}\n"
        "lifecycle:\n  conversation: threaded\n")
    return root


def peak_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def launch(tree: Path, caps: Path, home: Path) -> dict[str, Any]:
    env = {key: value for key, value in os.environ.items()
           if key != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(tree),
                                                    "MURMUR_HOME": str(home)}
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "tui", "launch", "--headless", "--json", "--task", "go on",
         "--context", CONTEXT, str(caps)],
        cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    found: dict[str, Any] = {}
    assert child.stdout is not None
    session_ms = 0
    for line in child.stdout:
        value = json.loads(line)
        event = value.get("event")
        if event == "SessionStarted":
            session_ms = value["ts_ms"]
        elif event == "TaskStarted" and "task_ms" not in found:
            found["task_ms"] = (time.perf_counter() - started) * 1000
            found["load_ms"] = value["ts_ms"] - session_ms
            found["rss_at_task_mb"] = peak_kb(child.pid) / 1024
        elif event == "TurnStarted" and "first_turn_ms" not in found:
            found["first_turn_ms"] = (time.perf_counter() - started) * 1000
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0 or len(found) != 4:
        raise RuntimeError(f"{tree}: the session ended {child.returncode}, saw {sorted(found)}")
    found["peak_rss_mb"] = usage.ru_maxrss / 1024  # kB on Linux
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", default=BEFORE)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        trees = {"before": base / "before", "after": REPO}
        unpack(args.before, trees["before"])
        caps = capsule(base / "capsule")
        record = seed_record(base / "seed", CONTEXT, args.messages)
        best: dict[str, dict[str, float]] = {name: {} for name in trees}
        for run in range(args.runs):
            for name, tree in trees.items():  # interleaved: load falls on both alike
                home = base / f"home-{name}-{run}"
                target = record_path(home, "bench", CONTEXT)
                assert target is not None
                target.parent.mkdir(parents=True)
                shutil.copyfile(record, target)  # a fresh copy: each run appends its task
                for key, value in launch(tree, caps, home).items():
                    best[name][key] = min(best[name].get(key, value), value)
                shutil.rmtree(home)
    rounded = {name: {key: round(value, 1) for key, value in found.items()}
               for name, found in best.items()}
    after, before = best["after"], best["before"]
    report = {
        "benchmark": "threaded_context", "messages": args.messages, "runs": args.runs,
        "before_commit": args.before, "before": rounded["before"], "after": rounded["after"],
        "task_ms_ratio": round(before["task_ms"] / after["task_ms"], 2),
        "load_ms_ratio": round(before["load_ms"] / max(after["load_ms"], 1), 2),
        "rss_at_task_ratio": round(before["rss_at_task_mb"] / after["rss_at_task_mb"], 2),
        "first_turn_ms_ratio": round(before["first_turn_ms"] / after["first_turn_ms"], 2),
        "peak_rss_ratio": round(before["peak_rss_mb"] / after["peak_rss_mb"], 2),
        "goal_task_ms": GOAL_TASK_MS, "goal_rss_mb": GOAL_RSS_MB,
        "meets_task_goal": after["task_ms"] < GOAL_TASK_MS,
        "meets_rss_at_task_goal": after["rss_at_task_mb"] < GOAL_RSS_MB,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    sys.exit(main())
