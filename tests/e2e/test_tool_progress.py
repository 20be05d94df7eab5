"""A WebAssembly tool built with componentize-py reports progress while its call runs: the
guest waits for a file the test writes only once it has seen the guest's first progress
message, so the message provably arrived before the call ended."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.conftest import read_jsonl
from tests.e2e.test_language_guests import capsule, guest
from tests.responses import call_response, text_response
from tui.core.events import vocabulary as ev
from tui.core.headless import HeadlessResponder
from tui.core.loop.launch import LaunchOptions
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule

pytestmark = pytest.mark.slow


class Release:
    """Keeps every event; writes `go.txt` in the workdir once the guest says it waits."""

    def __init__(self) -> None:
        self.events: list[ev.Event] = []
        self.workdir: Path | None = None

    def emit(self, event: ev.Event) -> None:
        self.events.append(event)
        if isinstance(event, ev.SessionStarted):
            self.workdir = Path(event.workdir)
        if isinstance(event, ev.ToolProgress) and "waiting for go.txt" in event.text:
            assert self.workdir is not None
            (self.workdir / "go.txt").write_text("go")


def test_a_tools_progress_arrives_while_its_call_runs(tmp_path: Path, murmur_home: Path) -> None:
    tool = guest("py_tool")
    entries = f"  - name: pytool\n    runtime: tool\n    source: {tool}\n"
    root = capsule(tmp_path / "c",
                   [call_response("pytool", {"op": "progress", "path": "go.txt"}, "p"),
                    text_response("released")], entries)
    sink = Release()
    session = Session(load_capsule(root), LaunchOptions(task="wait"), sinks=[sink],
                      responder=HeadlessResponder([], stdin=io.StringIO(""), err=io.StringIO()))
    result = session.run()
    assert result.exit_status == "ok"
    (finished,) = [e for e in sink.events if isinstance(e, ev.ToolCallFinished)]
    assert finished.status == "ok" and "found" in finished.output  # it saw the file
    progress = [e for e in sink.events if isinstance(e, ev.ToolProgress)]
    assert {(e.call_id, e.turn) for e in progress} == {("p", 0)}
    assert "".join(e.text for e in progress) == "waiting for go.txt\nfound it\n"
    kinds = [e.event_type for e in sink.events]
    assert kinds.index("ToolCallStarted") < kinds.index("ToolProgress") < \
        kinds.index("ToolCallFinished")
    assert not any("waiting for" in e.text for e in sink.events if isinstance(e, ev.TextDelta))
    trace = read_jsonl(result.paths.trace)  # progress is not a trace line
    assert not any("progress" in line["event_type"] for line in trace)
