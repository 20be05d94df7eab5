"""Benchmark: the host's own cost per turn, and the record reader's parse cache.

1. A session of 1,000 scripted turns, each running `true` through the shell tool (bash -c),
   against the same 1,000 subprocesses run alone. Host overhead per turn =
   (session time - subprocess time) / 1,000. Goal: under 2 ms.
2. The record reader over a 100,000-message record: time per page walking with the parse cache
   vs. without it (every page re-reads and re-parses the file). Reported as a ratio.

Run: python tests/benchmarks/session_overhead.py   (prints one JSON object)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests import capsules  # noqa: E402
from tests.responses import text_response, tool_response  # noqa: E402

TURNS = 1000
RECORD_MESSAGES = 100_000
PAGES = 20


def write_capsule(root: Path) -> None:
    responses = [tool_response("true", f"call_{n}") for n in range(TURNS)]
    capsules.write_capsule(root, [*responses, text_response("done")], name="bench", model="m",
                           max_turns=TURNS + 1)


def time_subprocesses_alone(workdir: Path) -> float:
    """The same command, environment and pipes as the shell tool uses, without the session."""
    from tui.core.shell.tool import ShellTool

    env = ShellTool(("bash",), workdir, workdir / "logs").environment
    started = time.perf_counter()
    for _ in range(TURNS):
        process = subprocess.Popen(["bash", "-c", "true"], cwd=workdir, env=env,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
        process.communicate()
    return time.perf_counter() - started


def time_session(root: Path) -> tuple[float, str]:
    from tui.core.loop.launch import LaunchOptions
    from tui.core.loop.session import Session
    from tui.core.manifest.reader import load_capsule

    session = Session(load_capsule(root), LaunchOptions(task="run true a thousand times"))
    started = time.perf_counter()
    result = session.run()
    return time.perf_counter() - started, result.exit_status


def reader_pages(home: Path) -> dict[str, float]:
    from tui.core.chat import assistant_message, tool_message, user_message
    from tui.core.record.reader import RecordReader
    from tui.core.record.writer import RecordWriter, record_path

    path = record_path(home, "bench", "ctx_reader")
    assert path is not None
    writer = RecordWriter(home, path, lambda _: None)
    filler = "x" * 300
    for n in range(RECORD_MESSAGES):
        kind = n % 3
        if kind == 0:
            writer.append(user_message(f"{n} {filler}"))
        elif kind == 1:
            writer.append(assistant_message([{"type": "tool_call", "id": f"c{n}",
                                              "name": "bash", "input": {"command": filler}}]))
        else:
            writer.append(tool_message(f"c{n - 1}", False, filler, "tool:bash"))
    writer.close()

    def walk(reader: RecordReader) -> list[float]:
        cursor = None
        times = []
        for _ in range(PAGES):
            started = time.perf_counter()
            page = reader.read_page(path, cursor, 50)
            times.append(time.perf_counter() - started)
            cursor = page.next_cursor
        return times

    cached = walk(RecordReader())
    uncached = walk(RecordReader(cache=False))
    warm = statistics.mean(cached[1:])  # the first page pays the one whole-file parse
    cold = statistics.mean(uncached)
    return {
        "record_messages": RECORD_MESSAGES,
        "record_bytes": path.stat().st_size,
        "pages_of_50": PAGES,
        "first_page_ms": round(cached[0] * 1000, 3),
        "page_ms_with_cache": round(warm * 1000, 4),
        "page_ms_without_cache": round(cold * 1000, 3),
        "walk_ms_with_cache": round(sum(cached) * 1000, 3),
        "walk_ms_without_cache": round(sum(uncached) * 1000, 3),
        "cache_page_speedup_ratio": round(cold / warm, 1),
        "cache_walk_speedup_ratio": round(sum(uncached) / sum(cached), 1),
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        os.environ["MURMUR_HOME"] = str(base / "home")
        root = base / "capsule"
        root.mkdir()
        write_capsule(root)
        from tui.core.text import tokens

        started = time.perf_counter()
        tokens.encoding()  # a one-time start-up cost, reported apart from the per-turn cost
        encoding_load_s = time.perf_counter() - started
        alone_runs, session_runs = [], []
        status = ""
        for _ in range(2):  # interleave to share the machine's noise
            alone_runs.append(time_subprocesses_alone(base))
            elapsed, status = time_session(root)
            session_runs.append(elapsed)
        alone, session = min(alone_runs), min(session_runs)
        overhead_ms = (session - alone) / TURNS * 1000
        report = {
            "benchmark": "session_overhead",
            "turns": TURNS,
            "session_exit_status": status,
            "session_s": round(session, 3),
            "subprocesses_alone_s": round(alone, 3),
            "host_overhead_ms_per_turn": round(overhead_ms, 3),
            "session_to_subprocesses_ratio": round(session / alone, 3),
            "encoding_load_s_once": round(encoding_load_s, 3),
            "goal_ms_per_turn": 2.0,
            "meets_goal": overhead_ms < 2.0,
            "runs": {"session_s": [round(s, 3) for s in session_runs],
                     "alone_s": [round(s, 3) for s in alone_runs],
                     "stdev_session_s": round(statistics.pstdev(session_runs), 3)},
        }
        report["reader"] = reader_pages(base / "home")
    print(json.dumps(report))


if __name__ == "__main__":
    sys.exit(main())
