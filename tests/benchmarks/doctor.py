"""Benchmark: `murmur-tui doctor` on a capsule that declares 30 artifacts, each a distinct
component installed in the project store as `mur install` writes it (`.mur.zip`, `.sha256`,
`.meta.json`; tests/murmur_store.py).

Cold: a fresh `$MURMUR_HOME` (no compiled code, nothing unpacked) — every archive is verified,
unpacked and every component compiled. Warm: the same run again (the compile cache and the
unpacked files are there). Measured two ways: the whole command as a user runs it (a new
`python -m tui doctor` process: interpreter start and imports included), and doctor's own work
in this process (`examine`, with a new engine each time, as a new process would have).
Goals: cold under 500 ms, warm under 100 ms. The ratios are cold / warm, for the command and
for doctor's own work. `interpreter_and_imports_ms` is what a new process pays before doctor
looks at anything (Python and wasmtime's import), which no cache changes.

Run: python tests/benchmarks/doctor.py   (prints one JSON object)
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests.capsules import write_capsule  # noqa: E402
from tests.murmur_store import mur_install  # noqa: E402
from tests.responses import text_response  # noqa: E402

ECHO = REPO / "tests" / "wasm" / "fixtures" / "echo_tool.wasm"
ARTIFACTS = 30
RUNS = 5


def distinct(component: bytes, n: int) -> bytes:
    """The component with a custom section appended: the same code, another sha256 (so
    nothing is shared between the 30 in any cache)."""
    name = b"bench"
    payload = bytes([len(name)]) + name + n.to_bytes(4, "little")
    return component + b"\x00" + bytes([len(payload)]) + payload


def capsule(scratch: Path) -> Path:
    root = scratch / "capsule"
    entries = "".join(f"  - name: tool-{n:02d}\n    runtime: tool\n    version: '1.0.0'\n"
                      for n in range(ARTIFACTS))
    write_capsule(root, [text_response("done")], name="doctor-bench", max_turns=None,
                  shell=(), artifacts=entries)
    base = ECHO.read_bytes()
    for n in range(ARTIFACTS):
        wasm = scratch / "built" / f"tool-{n:02d}.wasm"
        wasm.parent.mkdir(parents=True, exist_ok=True)
        wasm.write_bytes(distinct(base, n))
        mur_install(root / ".murmur" / "artifacts", f"tool-{n:02d}", "1.0.0", wasm)
    return root


def command(root: Path, home: Path) -> float:
    env = dict(os.environ, MURMUR_HOME=str(home))
    env.pop("MURMUR_COMPILED_CACHE", None)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tui", "doctor", str(root)], env=env,
                          capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert f"all {ARTIFACTS + 1} artifact(s) would load" in done.stdout
    return elapsed


IMPORTS = ("import tui.commands.main, tui.commands.doctor, tui.core.manifest.reader, "
           "tui.core.wasm.runtime, tui.core.wasm.guest, tui.core.wasm.sandbox, "
           "tui.core.wasm.versions")


def interpreter_and_imports() -> float:
    """What every `murmur-tui doctor` pays before it looks at anything: a new interpreter and
    the modules it needs (wasmtime among them)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", IMPORTS], check=True)
    return time.perf_counter() - started


def in_process(root: Path, home: Path) -> float:
    from tui.commands.doctor import examine
    from tui.core.manifest.reader import load_capsule

    os.environ["MURMUR_HOME"] = str(home)
    started = time.perf_counter()
    checks = examine(load_capsule(root), home)
    elapsed = time.perf_counter() - started
    assert all(c.murmur_loads and c.tui_loads for c in checks)
    return elapsed


def main() -> None:
    os.environ.pop("MURMUR_COMPILED_CACHE", None)
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        root = capsule(scratch)
        cold_cmd, warm_cmd, cold_own, warm_own, start = [], [], [], [], []
        for run in range(RUNS):
            home = scratch / f"home-cmd-{run}"
            cold_cmd.append(command(root, home))
            warm_cmd.append(command(root, home))
            shutil.rmtree(home)
            own = scratch / f"home-own-{run}"
            cold_own.append(in_process(root, own))
            warm_own.append(in_process(root, own))
            shutil.rmtree(own)
            start.append(interpreter_and_imports())
    cold, warm = statistics.median(cold_cmd), statistics.median(warm_cmd)
    own_cold, own_warm = statistics.median(cold_own), statistics.median(warm_own)
    print(json.dumps({
        "benchmark": "doctor", "artifacts": ARTIFACTS, "runs": RUNS,
        "command_cold_ms": round(cold * 1000, 1), "command_warm_ms": round(warm * 1000, 1),
        "examine_cold_ms": round(own_cold * 1000, 1),
        "examine_warm_ms": round(own_warm * 1000, 1),
        "interpreter_and_imports_ms": round(statistics.median(start) * 1000, 1),
        "ratio_cold_to_warm": round(cold / warm, 2),
        "ratio_examine_cold_to_warm": round(own_cold / own_warm, 2),
        "goal_cold_ms": 500, "goal_warm_ms": 100,
        "meets_goal_command": cold < 0.5 and warm < 0.1,
        "meets_goal_examine": own_cold < 0.5 and own_warm < 0.1}))


if __name__ == "__main__":
    main()
