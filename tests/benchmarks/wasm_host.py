"""Benchmark: the WebAssembly host's costs.

1. Loading the componentize-py test tool (18 MB) from the compile cache vs compiling it
   fresh (ratio; goal >= 100x).
2. A warm call of the WAT echo tool through the host's Guest wrapper vs the bare wasmtime
   call on the same instance (ratio), and a whole fresh-instance tool call (what a session
   does per call).
3. A whole tool dispatch inside a session: sessions of N turns that each call the WAT echo
   tool vs the same sessions calling an undeclared tool (a refusal that runs nothing);
   (difference) / N = the cost of one WebAssembly dispatch. Goal: under 2 ms.

Run: python tests/benchmarks/wasm_host.py   (prints one JSON object; builds the Python guest
with componentize-py on first use, cached in tests/.cache/)
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests.capsules import write_capsule  # noqa: E402
from tests.guests.build import build_guest  # noqa: E402
from tests.responses import call_response, text_response  # noqa: E402
from tui.core.wasm import calls, versions  # noqa: E402
from tui.core.wasm.guest import Guest, Sandbox  # noqa: E402
from tui.core.wasm.runtime import WasmRuntime  # noqa: E402
from tui.core.wasm.values import record  # noqa: E402

ECHO = REPO / "tests" / "wasm" / "fixtures" / "echo_tool.wasm"
CALLS = 2000
TURNS = 300


def cached_vs_compiled(scratch: Path) -> dict[str, object]:
    wasm = build_guest("py_tool")
    folder = scratch / "compiled"
    compile_runtime = WasmRuntime(folder)
    started = time.perf_counter()
    loaded = compile_runtime.load(wasm)
    compile_s = time.perf_counter() - started
    assert loaded.source == "compiled"
    compile_runtime.close()
    loads = []
    for _ in range(5):
        fresh = WasmRuntime(folder)  # a new process would start like this: nothing in memory
        started = time.perf_counter()
        loaded = fresh.load(wasm)
        loads.append(time.perf_counter() - started)
        assert loaded.source == "cache"
        fresh.close()
    cached_s = statistics.median(loads)
    return {"component": "py_tool (componentize-py)", "wasm_bytes": wasm.stat().st_size,
            "compile_s": round(compile_s, 3), "cached_load_ms": round(cached_s * 1000, 2),
            "cached_vs_compile_ratio": round(compile_s / cached_s, 1)}


def warm_calls(scratch: Path) -> dict[str, object]:
    runtime = WasmRuntime(scratch / "compiled-echo")
    loaded = runtime.load(ECHO)
    export = versions.check(ECHO, "tool", loaded.imports, loaded.exports)
    sandbox = Sandbox(log_path=scratch / "echo.log", memory_bytes=64 << 20,
                      deadline_seconds=60, limits_key="capabilities.limits",
                      preopen=scratch)
    argument = record(data='{"text":"hello"}', log_path=None)
    guest = Guest(runtime, loaded, export, sandbox, "echo")
    assert guest.store is not None and guest.instance is not None
    function = guest._func("run")
    assert function is not None
    context = calls.CallContext("echo", "tool")

    def bare() -> float:
        started = time.perf_counter()
        for _ in range(CALLS):
            function(guest.store, argument)
        return (time.perf_counter() - started) / CALLS

    def hosted() -> float:
        started = time.perf_counter()
        for _ in range(CALLS):
            guest.call("run", argument, context=context)
        return (time.perf_counter() - started) / CALLS

    def fresh_instance() -> float:
        started = time.perf_counter()
        for _ in range(CALLS // 4):
            one = Guest(runtime, loaded, export, sandbox, "echo")
            one.call("run", argument, context=context)
            one.close()
        return (time.perf_counter() - started) / (CALLS // 4)

    bare_s = min(bare() for _ in range(3))
    hosted_s = min(hosted() for _ in range(3))
    fresh_s = min(fresh_instance() for _ in range(3))
    guest.close()
    runtime.close()
    return {"bare_call_us": round(bare_s * 1e6, 1), "host_call_us": round(hosted_s * 1e6, 1),
            "host_vs_bare_ratio": round(hosted_s / bare_s, 3),
            "host_overhead_us": round((hosted_s - bare_s) * 1e6, 1),
            "fresh_instance_call_us": round(fresh_s * 1e6, 1)}


def session_capsule(root: Path, tool: str, turns: int = TURNS, extra_artifacts: str = ""
                    ) -> Path:
    """A scripted session of `turns` turns, each calling `tool` (the WAT echo tool is
    declared; `extra_artifacts` adds more `artifacts:` items)."""
    steps = [call_response(tool, {"n": n}, f"c{n}") for n in range(turns)]
    return write_capsule(root, [*steps, text_response("ok")], name="bench", model="m",
                         max_turns=turns + 1, shell=(), tools={"echo": ECHO},
                         artifacts=extra_artifacts)


def time_session(root: Path) -> float:
    from tui.core.loop.launch import LaunchOptions
    from tui.core.loop.session import Session
    from tui.core.manifest.reader import load_capsule

    session = Session(load_capsule(root), LaunchOptions(task="bench"))
    started = time.perf_counter()
    result = session.run()
    elapsed = time.perf_counter() - started
    assert result.exit_status == "ok", result.result
    return elapsed


def session_dispatch(scratch: Path) -> dict[str, object]:
    from tui.core.text import tokens

    tokens.encoding()
    wasm_root = session_capsule(scratch / "wasm-capsule", "echo")
    refused_root = session_capsule(scratch / "refusal-capsule", "not-declared")
    wasm_runs, refused_runs = [], []
    for _ in range(3):
        refused_runs.append(time_session(refused_root))
        wasm_runs.append(time_session(wasm_root))
    wasm_s, refused_s = min(wasm_runs), min(refused_runs)
    per_dispatch_ms = (wasm_s - refused_s) / TURNS * 1000
    return {"turns": TURNS, "session_with_wasm_tool_s": round(wasm_s, 3),
            "session_with_refused_tool_s": round(refused_s, 3),
            "wasm_dispatch_ms": round(per_dispatch_ms, 3),
            "session_ratio": round(wasm_s / refused_s, 3),
            "goal_ms": 2.0, "meets_goal": per_dispatch_ms < 2.0}


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        os.environ["MURMUR_HOME"] = str(scratch / "home")
        os.environ["MURMUR_COMPILED_CACHE"] = str(scratch / "home-compiled")
        report = {
            "benchmark": "wasm_host",
            "cache": cached_vs_compiled(scratch),
            "warm_call": warm_calls(scratch),
            "session_dispatch": session_dispatch(scratch),
        }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
