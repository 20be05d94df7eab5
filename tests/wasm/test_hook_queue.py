"""An async hook's bounded queue: a job that takes long fills it, and what cannot wait is
dropped with a fault (on_overflow: drop) — the session never blocks on it."""

from __future__ import annotations

import time
from pathlib import Path

from tests.capsules import set_driver_config
from tests.fakes import Collect
from tests.responses import text_response
from tests.wasm.conftest import WasmCapsule
from tests.wasm.test_wasm_session import hook_entry
from tui.core.events import vocabulary as ev
from tui.core.loop.compaction import compaction_event
from tui.core.loop.hook_points import tool_event
from tui.core.loop.launch import LaunchOptions
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule
from tui.core.wasm.hooks import QUEUE_SIZE


def test_an_async_hooks_full_queue_drops_jobs_with_a_fault(wasm_capsule: WasmCapsule,
                                                          tmp_path: Path) -> None:
    # the hook's on-compaction asks the driver, which streams a long answer slowly: the
    # hook's worker is busy with that one job while more events arrive
    root = wasm_capsule([text_response("x" * 400)],
                        hook_entry("watcher", "all_hook", contract="execution_mode: async\n",
                                   tmp=tmp_path))
    set_driver_config(root, chunk_chars=1, chars_per_second=20)
    sink = Collect()
    session = Session(load_capsule(root), LaunchOptions(task="t"), sinks=[sink])
    runner = session.hooks.runner
    assert runner is not None
    try:
        message = {"role": "user", "id": "msg_1", "content": [{"type": "text", "text": "hi"}]}
        runner.dispatch("on-compaction", compaction_event([message], 1, 1.0, None, None))
        for _ in range(400):  # until the worker has taken that job and waits on the driver
            if session.driver.remaining == 0:  # type: ignore[attr-defined]
                break
            time.sleep(0.01)
        assert session.driver.remaining == 0  # type: ignore[attr-defined]
        for n in range(QUEUE_SIZE + 10):  # returns at once: the busy hook never blocks it
            runner.dispatch("on-tool-call", tool_event(n, "echo", 1, 1, 1, "ok"))
        dropped = [f for f in sink.of(ev.HookFault) if "queue-overflow" in (f.error or "")]
        assert len(dropped) == 10
        assert all(not f.traced and f.handler == "on-tool-call" for f in dropped)
        log = (session.paths.logs / "hook-watcher.log").read_text()
        assert log.count("queue-overflow") == 10
    finally:
        session.cancel.set()  # ends the slow answer
        runner.close(drain_seconds=5.0)
        session.close_runtime()
