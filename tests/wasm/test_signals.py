"""Ctrl-C while a component spins: the session is stopped, not waited for. The first SIGINT
cancels (the task ends `canceled`, every file finished); finishing the files at once from
another thread — what a second Ctrl-C does — leaves complete files and writes nothing after."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.conftest import read_jsonl
from tests.fakes import Collect
from tests.responses import call_response, text_response
from tests.waits import block_until
from tests.wasm.conftest import WasmCapsule
from tui.core.events import vocabulary as ev
from tui.core.loop.launch import LaunchOptions
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule

SPIN = "  - name: spin\n    runtime: tool\n    source: {fixtures}/spin_tool.wasm\n"


def test_sigint_stops_a_spinning_component_headless(wasm_capsule: WasmCapsule,
                                                    murmur_home: Path) -> None:
    root = wasm_capsule([call_response("spin", {}), text_response("never")], SPIN)
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "launch", str(root), "--headless", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        env=dict(os.environ, MURMUR_HOME=str(murmur_home)))
    assert process.stdout is not None
    lines: list[str] = []
    for line in process.stdout:  # until the spinning call has started
        lines.append(line)
        if json.loads(line)["event"] == "ToolCallStarted":
            break
    time.sleep(0.3)  # well inside the component by now
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    lines += out.splitlines()
    assert process.returncode == 1, err
    assert "canceling" in err and "Traceback" not in err
    events = [json.loads(line) for line in lines]
    ended = next(e for e in events if e["event"] == "TaskEnded")
    assert ended["exit_status"] == "canceled"
    assert events[-1]["event"] == "SessionEnded" and events[-1]["exit_status"] == "canceled"
    trace = read_jsonl(next(root.glob("workdir/*/trace.jsonl")))
    assert [line["event_type"] for line in trace[-2:]] == ["task_end", "session_end"]
    assert trace[-1]["exit_status"] == "canceled"
    assert next(root.glob("workdir/*/out/result.txt")).read_text() == \
        "error: canceled by the user"


def test_finishing_at_once_leaves_complete_files_and_nothing_after(
        wasm_capsule: WasmCapsule, murmur_home: Path) -> None:
    root = wasm_capsule([call_response("spin", {}), text_response("never")], SPIN)
    sink = Collect()
    session = Session(load_capsule(root), LaunchOptions(task="spin"), sinks=[sink])
    worker = threading.Thread(target=session.run, daemon=True)
    worker.start()
    block_until(lambda: any(isinstance(e, ev.ToolCallStarted) for e in sink.events))
    session.finish_now()
    trace = read_jsonl(session.paths.trace)
    assert [line["event_type"] for line in trace[-2:]] == ["task_end", "session_end"]
    assert trace[-2]["exit_status"] == "canceled" and trace[-1]["exit_status"] == "canceled"
    assert session.paths.result.read_text() == "error: canceled by the user"
    worker.join(60)
    assert not worker.is_alive()
    assert read_jsonl(session.paths.trace) == trace  # the worker wrote nothing after
    assert session.record_path is not None
    text = session.record_path.read_text()
    roles = [json.loads(line)["role"] for line in text.splitlines()]
    # the task, and the canceled call's pair whole or not at all
    assert text.endswith("\n") and roles in (["user"], ["user", "assistant", "tool"])
