"""Benchmark: the core's layout, before and after, in one run.

The tree of an earlier commit (`--before`, default the last commit with the flat core) is
unpacked into a temporary folder and measured beside the working tree, interleaved:

1. Import time of the headless stack: the command line (`tui.commands.main`, before it
   `tui.cli`), the headless printers, the manifest reader and the loop's session module, each
   in a fresh interpreter, minus a bare
   interpreter's start-up, with bytecode cached as an installed package has it. Best of
   `--imports` runs; the largest self times are listed.
2. `session_overhead.py` and `hooks.py` as each tree has them: the host's cost per turn and per
   hook event must not get worse by more than noise.

Run: python tests/benchmarks/layout.py [--before COMMIT] [--imports N] [--skip-sessions]
(prints one JSON object)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BEFORE = "4d2f73a"  # the last commit with 42 loose modules in tui/core
STACKS = {  # the headless stack, as each layout names it
    "after": "import tui.commands.main; from tui.core import headless; "
             "from tui.core.loop import session; from tui.core.manifest import reader",
    "before": "import tui.cli; from tui.core import headless; "
              "from tui.core.loop import session; from tui.core.manifest import reader",
}


def unpack(commit: str, target: Path) -> None:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")


def run_python(tree: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    # bytecode is written and used, as in an installed package (pip compiles it at install)
    env = {key: value for key, value in os.environ.items()
           if key != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(tree)}
    return subprocess.run([sys.executable, *args], cwd=tree, env=env, check=True,
                          capture_output=True, text=True)


def wall(tree: Path, code: str) -> float:
    started = time.perf_counter()
    run_python(tree, ["-c", code])
    return time.perf_counter() - started


def self_times(tree: Path, code: str, top: int = 8) -> list[tuple[str, float]]:
    """The modules with the largest self time (ms), from `python -X importtime`."""
    lines = run_python(tree, ["-X", "importtime", "-c", code]).stderr.splitlines()
    found = []
    for line in lines[1:]:
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3:
            found.append((parts[2].strip(), int(parts[0]) / 1000))
    return [(name, round(ms, 1)) for name, ms in sorted(found, key=lambda x: -x[1])[:top]]


def imports(trees: dict[str, Path], runs: int) -> dict[str, object]:
    best = {name: float("inf") for name in (*trees, "bare")}
    for name, tree in trees.items():  # the first run writes the bytecode the others read
        wall(tree, STACKS[name])
    for _ in range(runs):  # interleaved: the machine's noise falls on both alike
        best["bare"] = min(best["bare"], wall(trees["after"], "pass"))
        for name, tree in trees.items():
            best[name] = min(best[name], wall(tree, STACKS[name]))
    cost = {name: (best[name] - best["bare"]) * 1000 for name in trees}
    return {
        "bare_interpreter_ms": round(best["bare"] * 1000, 1),
        "before_ms": round(cost["before"], 1),
        "after_ms": round(cost["after"], 1),
        "after_to_before_ratio": round(cost["after"] / cost["before"], 3),
        "wasmtime_loaded_after": "wasmtime" in run_python(
            trees["after"], ["-c", STACKS["after"] + "; import sys; print(sorted(sys.modules))"]
        ).stdout,
        "largest_self_ms_after": self_times(trees["after"], STACKS["after"]),
        "largest_self_ms_before": self_times(trees["before"], STACKS["before"]),
    }


def benchmark(tree: Path, script: str) -> dict[str, object]:
    result = run_python(tree, [str(tree / "tests" / "benchmarks" / script)])
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def _pick(report: dict[str, object], key: str) -> object:
    value: object = report
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def sessions(trees: dict[str, Path]) -> dict[str, object]:
    report: dict[str, object] = {}
    for script, key in (("session_overhead.py", "host_overhead_ms_per_turn"),
                        ("hooks.py", "per_event.per_event_ms")):
        runs = {name: benchmark(tree, script) for name, tree in trees.items()}
        before, after = (_pick(runs[name], key) for name in ("before", "after"))
        report[script] = {"key": key, "before": before, "after": after,
                          "after_to_before_ratio": round(float(after) / float(before), 3)
                          if isinstance(before, (int, float)) and isinstance(after, (int, float))
                          and before else None}
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default=BEFORE)
    parser.add_argument("--imports", type=int, default=20)
    parser.add_argument("--skip-sessions", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        old = Path(scratch) / "before"
        unpack(args.before, old)
        trees = {"before": old, "after": REPO}
        report: dict[str, object] = {"benchmark": "layout", "before": args.before,
                                     "imports": imports(trees, args.imports)}
        if not args.skip_sessions:
            report["sessions"] = sessions(trees)
    print(json.dumps(report))


if __name__ == "__main__":
    sys.exit(main())
