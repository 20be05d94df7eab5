"""Benchmark: what hooks cost a session.

1. Per event. Sessions of 500 scripted turns (each calls the WAT echo tool) with one blocking
   WAT hook bound to every handler (the demo's summarise-hook, which answers `none` to all but
   on-compaction, copied with a manifest that binds it to everything), against the same
   sessions with no hook. Per-event cost = (with - without) / hook events dispatched
   (on-inference and on-tool-call each turn, plus the session's own five). Goal: under 1 ms.
2. On-compaction. One dispatch of a compaction event with 100 and with 1,000 messages (text,
   tool calls and tool results in the seed-003 envelope, ~400 bytes each) to a hook that answers
   `none` (the demo's noisy-hook): building the event plus the call, which lowers every
   message into the guest's memory. Goal: 1,000 messages under 50 ms.

Run: python tests/benchmarks/hooks.py   (prints one JSON object)
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.benchmarks.wasm_host import session_capsule, time_session  # noqa: E402
from tui.core.loop.compaction import compaction_event  # noqa: E402
from tui.core.text import tokens  # noqa: E402
from tui.core.wasm import calls, versions  # noqa: E402
from tui.core.wasm.guest import Guest, Sandbox  # noqa: E402
from tui.core.wasm.runtime import WasmRuntime  # noqa: E402

TURNS = 500
COMPONENTS = REPO / "tui" / "demo" / "components"
SESSION_EVENTS = 5  # on-stage, on-session-start, on-task-start, on-task-end, on-session-end


def capsule(root: Path, with_hook: bool) -> Path:
    hook = ""
    if with_hook:
        folder = root / "watcher"
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(COMPONENTS / "summarise-hook" / "summarise-hook.wasm",
                    folder / "watcher.wasm")
        (folder / "murmur.yaml").write_text("name: watcher\nversion: '1'\nruntime: hook\n"
                                            "execution_mode: blocking\n")
        hook = f"  - name: watcher\n    runtime: hook\n    source: {folder}\n"
    return session_capsule(root, "echo", TURNS, hook)


def per_event(scratch: Path) -> dict[str, Any]:
    tokens.encoding()
    plain = capsule(scratch / "plain", with_hook=False)
    hooked = capsule(scratch / "hooked", with_hook=True)
    time_session(plain)  # warm the compile cache and the interpreter
    time_session(hooked)
    without, with_hook = [], []
    for _ in range(3):
        without.append(time_session(plain))
        with_hook.append(time_session(hooked))
    plain_s, hooked_s = statistics.median(without), statistics.median(with_hook)
    events = 2 * TURNS + SESSION_EVENTS
    return {"turns": TURNS, "hook_events": events,
            "session_without_hook_s": round(plain_s, 3),
            "session_with_hook_s": round(hooked_s, 3),
            "with_vs_without_ratio": round(hooked_s / plain_s, 3),
            "per_event_ms": round((hooked_s - plain_s) / events * 1000, 3)}


def messages(count: int) -> list[dict[str, Any]]:
    made: list[dict[str, Any]] = []
    for n in range(count):
        pad = "the quick brown fox jumps over the lazy dog " * 6
        if n % 3 == 0:
            made.append({"role": "user", "id": f"msg_{n:032x}",
                         "content": [{"type": "text", "text": f"{n}: {pad}"}]})
        elif n % 3 == 1:
            made.append({"role": "assistant", "id": f"msg_{n:032x}", "content": [
                {"type": "text", "text": pad[:120]},
                {"type": "tool_call", "id": f"t{n}", "name": "bash",
                 "input": {"command": f"grep -n {n} *.py"}}]})
        else:
            made.append({"role": "tool", "id": f"msg_{n:032x}", "tool_call_id": f"t{n - 1}",
                         "is_error": False, "content": [{"type": "text", "text": pad}]})
    return made


def compaction_dispatch(scratch: Path) -> dict[str, Any]:
    wasm = COMPONENTS / "noisy-hook" / "noisy-hook.wasm"
    runtime = WasmRuntime(scratch / "compiled-hook")
    loaded = runtime.load(wasm)
    export = versions.check(wasm, "hook", loaded.imports, loaded.exports)
    sandbox = Sandbox(log_path=scratch / "hook.log", memory_bytes=512 << 20,
                      deadline_seconds=30, limits_key="capabilities.limits")
    guest = Guest(runtime, loaded, export, sandbox, "noisy-hook")
    context = calls.CallContext("noisy-hook", "hook")
    report: dict[str, Any] = {}
    for count in (100, 1000):
        history = messages(count)
        size = sum(len(json.dumps(m)) for m in history)

        def once(history: list[dict[str, Any]] = history) -> tuple[float, float]:
            started = time.perf_counter()
            event = compaction_event(history, 10_000, 0.99, "m", None)
            built = time.perf_counter()
            result = guest.call("on-compaction", event, context=context)
            assert getattr(result, "tag", "none") == "none"
            return built - started, time.perf_counter() - built

        once()
        runs = [once() for _ in range(7)]
        build = statistics.median(r[0] for r in runs)
        call = statistics.median(r[1] for r in runs)
        report[f"messages_{count}"] = {"bytes": size, "build_event_ms": round(build * 1000, 2),
                                       "call_ms": round(call * 1000, 2),
                                       "total_ms": round((build + call) * 1000, 2)}
    guest.close()
    runtime.close()
    return report


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        result: dict[str, Any] = {"benchmark": "hooks", "per_event": per_event(scratch),
                                  "on_compaction": compaction_dispatch(scratch)}
    result["goals"] = {
        "blocking_hook_under_1ms_per_event": result["per_event"]["per_event_ms"] < 1.0,
        "compaction_1000_messages_under_50ms":
            result["on_compaction"]["messages_1000"]["total_ms"] < 50,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
