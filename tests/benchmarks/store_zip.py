"""Benchmark: an artifact's first load from Murmur's store layout (`<name>-<ver>.mur.zip` with
its `.sha256` and `.meta.json`, as `mur install` writes it) vs murmur-tui's bare layout
(`<name>.wasm` with `<name>.wasm.sha256`).

First load = what a session does for a tool it has never seen: resolve it in the store (the
sidecar checked; for the archive, unpacked) and load the component through an empty compile
cache (compiled). Each run uses a fresh `$MURMUR_HOME`. Two components: the WAT echo tool
(20 KB: the archive's own costs show most) and the componentize-py test tool (18 MB: what a
real tool weighs). Goal: the archive within 10 % of the bare file. The ratio is zip / bare.

Run: python tests/benchmarks/store_zip.py   (prints one JSON object; builds the Python guest
with componentize-py on first use, cached in tests/.cache/)
"""

from __future__ import annotations

import hashlib
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests.capsules import write_capsule  # noqa: E402
from tests.guests.build import build_guest  # noqa: E402
from tests.murmur_store import mur_install  # noqa: E402
from tests.responses import text_response  # noqa: E402

ECHO = REPO / "tests" / "wasm" / "fixtures" / "echo_tool.wasm"


def bare(store: Path, wasm: Path) -> None:
    folder = store / "echo" / "1.0.0"
    folder.mkdir(parents=True)
    target = folder / "echo.wasm"
    shutil.copy(wasm, target)
    (folder / "echo.wasm.sha256").write_text(hashlib.sha256(target.read_bytes()).hexdigest())


def first_load(scratch: Path, wasm: Path, layout: str, run: int) -> float:
    from tui.core.artifacts.resolve import resolve_wasm
    from tui.core.manifest.reader import load_capsule
    from tui.core.wasm.runtime import WasmRuntime

    home = scratch / f"home-{layout}-{run}"
    root = write_capsule(scratch / f"capsule-{layout}-{run}", [text_response("x")],
                         name="zip-bench", max_turns=None, shell=(),
                         artifacts="  - name: echo\n    runtime: tool\n    version: '1.0.0'\n")
    if layout == "zip":
        mur_install(home / "artifacts", "echo", "1.0.0", wasm)
    else:
        bare(home / "artifacts", wasm)
    capsule = load_capsule(root)
    runtime = WasmRuntime(home / "cache" / "compiled")
    try:
        started = time.perf_counter()
        entry = capsule.artifact("echo")
        assert entry is not None
        resolved = resolve_wasm(capsule, entry, home)
        loaded = runtime.load(resolved.wasm)
        elapsed = time.perf_counter() - started
    finally:
        runtime.close()
    assert loaded.source == "compiled" and "murmur:tool/run@0.2.0" in loaded.exports
    return elapsed


def compare(scratch: Path, wasm: Path, runs: int) -> dict[str, object]:
    zipped, plain = [], []
    for run in range(runs):  # interleaved, so a busy moment falls on both
        plain.append(first_load(scratch, wasm, "bare", run))
        zipped.append(first_load(scratch, wasm, "zip", run))
    zip_s, bare_s = statistics.median(zipped), statistics.median(plain)
    ratio = zip_s / bare_s
    return {"wasm_bytes": wasm.stat().st_size, "runs": runs,
            "bare_first_load_ms": round(bare_s * 1000, 2),
            "zip_first_load_ms": round(zip_s * 1000, 2),
            "ratio_zip_to_bare": round(ratio, 3), "meets_goal": ratio <= 1.10}


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        report = {"benchmark": "store_zip", "goal_ratio": 1.10,
                  "wat_echo_tool": compare(scratch / "wat", ECHO, 15),
                  "componentize_py_tool": compare(scratch / "py", build_guest("py_tool"), 3)}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
