"""Benchmark: what a hostile WebAssembly tool costs the host.

1. Peak RSS. A headless session (`python -m tui launch CAPSULE --headless`, a subprocess whose
   peak RSS `os.wait4` reports) whose tool (tests/wasm/fixtures/flood_tool.wasm) returns a
   result of 1, 10 and 100 MiB, over the peak RSS of the same session with a 1 KiB result.
   murmur-tui keeps the first 1 MiB of a result; what is left is the component's own memory
   and wasmtime's copies while it lifts the result. Goal: under 3x at 100 MiB.
2. Stopping a spinning component: the time from SIGINT to exit of a headless session while its
   tool spins, over the time the same session takes from the same moment when only the
   component's deadline stops it. Goal: under 1 s.

Run: python tests/benchmarks/hostile.py   (prints one JSON object)

`write_capsule` and `session_peak_rss` are also what tests/wasm/test_hostile.py measures with.
"""

from __future__ import annotations

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

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "wasm" / "fixtures"
sys.path.insert(0, str(REPO))
from tests import capsules  # noqa: E402
from tests.responses import call_response, text_response  # noqa: E402

MIB = 1 << 20
SIZES = {"1KiB": 1024, "1MiB": MIB, "10MiB": 10 * MIB, "100MiB": 100 * MIB}
GOAL_RATIO_AT_100MIB = 3.0


def write_capsule(root: Path, tool_input: dict[str, Any], *, fixture: str = "flood_tool",
                  limits: str = "", extra: str = "") -> Path:
    """A capsule whose scripted model calls the tool `t` (a fixture) once with `tool_input`,
    then answers "done". `limits` is the tool's `capabilities.limits` mapping as YAML flow
    text (e.g. "{memory_bytes: 134217728}")."""
    caps = f"    capabilities:\n      limits: {limits}\n" if limits else ""
    return capsules.write_capsule(
        root, [call_response("t", tool_input), text_response("done")], name="hostile",
        model="m", max_turns=None, shell=(),
        artifacts=f"  - name: t\n    runtime: tool\n    source: {FIXTURES / fixture}.wasm\n"
        + caps, extra=extra)


def session_peak_rss(root: Path, home: Path, *args: str,
                     timeout: float = 300) -> tuple[int, int, str]:
    """Run a headless session of `root` in a subprocess: (its peak RSS in bytes, its exit
    code, its stdout). Killed after `timeout` seconds."""
    env = dict(os.environ, MURMUR_HOME=str(home))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "tui", "launch", str(root), "--headless", "--task", "go",
             *args], stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=REPO)
        killer = threading.Timer(timeout, process.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            killer.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", errors="replace")
        if process.returncode not in (0, 1):
            stdout += err.read().decode("utf-8", errors="replace")
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes there, KiB on Linux
    return usage.ru_maxrss * scale, process.returncode, stdout


def rss_ratios(scratch: Path) -> dict[str, Any]:
    peaks: dict[str, int] = {}
    for label, size in SIZES.items():
        root = write_capsule(scratch / label, {"q": f"bytes={size}"})
        best = None
        for run in range(2):  # the lower of two runs: the machine is shared
            peak, code, stdout = session_peak_rss(root, scratch / f"home-{label}-{run}")
            if code != 0:
                raise SystemExit(f"the {label} session failed ({code}):\n{stdout[-2000:]}")
            best = peak if best is None else min(best, peak)
        assert best is not None
        peaks[label] = best
    base = peaks["1KiB"]
    ratios = {label: round(peak / base, 2) for label, peak in peaks.items() if label != "1KiB"}
    return {
        "peak_rss_mib": {label: round(peak / MIB, 1) for label, peak in peaks.items()},
        "ratio_to_1KiB": ratios,
        "extra_mib_per_result_mib": {
            label: round((peaks[label] - base) / SIZES[label], 2)
            for label in ("10MiB", "100MiB")},
        "goal_ratio_at_100MiB": GOAL_RATIO_AT_100MIB,
        "meets_goal": ratios["100MiB"] < GOAL_RATIO_AT_100MIB,
    }


def interrupt_to_exit(scratch: Path) -> dict[str, Any]:
    """Time from SIGINT to exit of a headless session while its component spins
    (tests/wasm/fixtures/spin_tool.wasm, `deadline_seconds: 3`), against the time the same
    session takes from the same moment when nothing stops it but the deadline. Goal: under
    1 s. The median of three runs each."""
    root = write_capsule(scratch / "spin", {}, fixture="spin_tool",
                         limits="{deadline_seconds: 3}")
    interrupted = [_spin_then(root, scratch / f"home-int-{run}", interrupt=True)
                   for run in range(3)]
    waited = [_spin_then(root, scratch / f"home-wait-{run}", interrupt=False)
              for run in range(3)]
    median_interrupted = statistics.median(interrupted)
    median_waited = statistics.median(waited)
    return {
        "sigint_to_exit_s": round(median_interrupted, 3),
        "deadline_to_exit_s": round(median_waited, 3),
        "ratio": round(median_interrupted / median_waited, 3),
        "goal_s": 1.0,
        "meets_goal": median_interrupted < 1.0,
    }


def _spin_then(root: Path, home: Path, *, interrupt: bool) -> float:
    """Seconds from 0.5 s into the spinning call to the session's exit (SIGINT sent then,
    or not)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "launch", str(root), "--headless", "--json", "--task",
         "spin"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=dict(os.environ, MURMUR_HOME=str(home)), cwd=REPO)
    assert process.stdout is not None
    for line in process.stdout:
        if json.loads(line).get("event") == "ToolCallStarted":
            break
    time.sleep(0.5)
    started = time.perf_counter()
    if interrupt:
        process.send_signal(signal.SIGINT)
    process.stdout.read()
    process.wait(timeout=60)
    return time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        report: dict[str, Any] = {"benchmark": "hostile", "result_rss": rss_ratios(scratch)}
        report["interrupt_to_exit"] = interrupt_to_exit(scratch)
    print(json.dumps(report))


if __name__ == "__main__":
    sys.exit(main())
