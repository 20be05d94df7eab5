"""Files that are not files: every reader of a session file murmur-tui keeps — the trace (for
`murmur-tui trace`, its analysis and the resume), `background.jsonl` (the resume) and `task.md`
(the launch) — and every appender, fed a FIFO, a link to /dev/zero, a line nested 100,000 deep
and a line cut short. Each answers with a refusal naming what is there or a skip with a
warning naming file and line: never a hang (each call runs under a deadline, so a regression
fails instead of stalling the run), never an exception of another kind."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from tui.core.errors import LaunchError, NotAFile, TraceFormatError
from tui.core.events import vocabulary as ev
from tui.core.fs.private_files import append_private, open_append
from tui.core.fs.task_file import MAX_TASK_BYTES, read_task_at
from tui.core.shell.background import Background, report_lost, unaccounted
from tui.core.trace.reader import first_event, read_trace

T = TypeVar("T")
DEADLINE = 20.0  # far above what any of these takes; only a hang reaches it
DEEP = b"[" * 100_000 + b"]" * 100_000
START = b'{"event_type":"session_start","event_id":"evt_1","session_id":"ses_1"}'
DETACHED = {"event": "detached", "work_id": "wrk_a", "binary": "/bin/bash",
            "command": "sleep 100", "detached_at_ms": 1}


@pytest.fixture
def fifos() -> Iterator[list[Path]]:
    """FIFOs a test made: opened for writing at the end, so a reader a regression left blocked
    on one is let go."""
    made: list[Path] = []
    yield made
    for path in made:
        with contextlib.suppress(OSError):  # (nobody is blocked on it)
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def within(call: Callable[[], T]) -> T:
    """`call()`, which must return (or raise) within DEADLINE seconds."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # handed to the test as it was raised
            failure.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(DEADLINE)
    assert not worker.is_alive(), f"still running after {DEADLINE} s: it hangs"
    if failure:
        raise failure[0]
    return outcome[0]


def plant(path: Path, kind: str, fifos: list[Path]) -> None:
    if kind == "fifo":
        os.mkfifo(path)
        fifos.append(path)
    else:
        path.symlink_to("/dev/zero")


# -- the trace ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "words"), [("fifo", "it is a FIFO (named pipe)"),
                                             ("zero-link", "it is a link")])
def test_a_trace_that_is_not_a_file_is_refused_by_name(
        tmp_path: Path, fifos: list[Path], kind: str, words: str) -> None:
    path = tmp_path / "trace.jsonl"
    plant(path, kind, fifos)
    for read in (read_trace, first_event):
        with pytest.raises(TraceFormatError) as info:
            within(lambda read=read: read(path))  # type: ignore[misc]
        assert str(info.value) == f"{path}: not read: {words}"


@pytest.mark.parametrize("first", [True, False], ids=["first-line", "later-line"])
def test_a_trace_line_nested_100000_deep_is_refused_naming_file_and_line(
        tmp_path: Path, first: bool) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_bytes((DEEP + b"\n" + START if first else START + b"\n" + DEEP) + b"\n")
    line = 1 if first else 2
    with pytest.raises(TraceFormatError, match=rf"trace.jsonl:{line}: not JSON \(nested deeper"):
        within(lambda: read_trace(path))
    if first:
        with pytest.raises(TraceFormatError, match=r"trace.jsonl:1: not JSON \(nested deeper"):
            within(lambda: first_event(path))
    else:
        assert within(lambda: first_event(path))["event_id"] == "evt_1"


def test_a_trace_cut_short_is_read_up_to_the_cut(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_bytes(START + b'\n{"event_type":"task_start","te')
    trace = within(lambda: read_trace(path))
    assert [line["event_type"] for line in trace] == ["session_start"]
    assert trace.cut_line == 2 and trace.skipped == 1
    path.write_bytes(START[:30])  # the first line itself cut: no session node to name
    with pytest.raises(TraceFormatError, match=r"trace.jsonl:1: not JSON"):
        within(lambda: first_event(path))


def test_a_trace_over_its_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    from tui.core.trace import reader

    path = tmp_path / "trace.jsonl"
    with path.open("wb") as handle:
        handle.truncate(reader.MAX_TRACE_BYTES + 1)  # sparse: costs no disk
    with pytest.raises(TraceFormatError, match=r"the trace is 256 MiB, over the 256 MiB"):
        within(lambda: read_trace(path))


# -- background.jsonl ---------------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "words"), [("fifo", "it is a FIFO (named pipe)"),
                                             ("zero-link", "it is a link")])
def test_a_background_record_that_is_not_a_file_is_skipped_with_a_warning(
        tmp_path: Path, fifos: list[Path], kind: str, words: str) -> None:
    plant(tmp_path / "background.jsonl", kind, fifos)
    said: list[str] = []
    assert within(lambda: unaccounted(tmp_path, said.append)) == []
    assert said == [f"{tmp_path / 'background.jsonl'}: not read: {words}; background work it "
                    "noted is not reported lost"]


@pytest.mark.parametrize(("bad", "why"), [
    (DEEP, "not JSON (nested deeper than 127)"),
    (b'{"event": "detached", "work_id": "wrk_c', "cut short"),
    (b"[1, 2]", "not a note of background work"),
], ids=["deep-line", "cut-line", "not-a-note"])
def test_a_background_line_that_cannot_be_read_is_skipped_naming_file_and_line(
        tmp_path: Path, bad: bytes, why: str) -> None:
    other = {**DETACHED, "work_id": "wrk_b"}
    cut = why == "cut short"
    lines = [json.dumps(DETACHED).encode(), bad] if cut else \
        [json.dumps(DETACHED).encode(), bad, json.dumps(other).encode()]
    (tmp_path / "background.jsonl").write_bytes(b"\n".join(lines) + (b"" if cut else b"\n"))
    said: list[str] = []
    lost = within(lambda: unaccounted(tmp_path, said.append))
    assert [work["work_id"] for work in lost] == (["wrk_a"] if cut else ["wrk_a", "wrk_b"])
    assert len(said) == 1 and said[0].startswith(f"{tmp_path / 'background.jsonl'}:2: {why}")
    assert said[0].endswith("; skipped")


def test_lost_work_is_reported_on_a_line_of_its_own_after_a_cut_trace_line(
        tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(START + b'\n{"event_type":"shell_detached","work_id":"wr')  # killed
    (tmp_path / "background.jsonl").write_text(json.dumps(DETACHED) + "\n")
    said: list[str] = []
    lost = within(lambda: report_lost(tmp_path, "ses_1", "ses_2", "tsk_1", said.append))
    assert [work["work_id"] for work in lost] == ["wrk_a"] and said == []
    lines = within(lambda: read_trace(trace))  # the trace is still a trace
    assert [line["event_type"] for line in lines] == ["session_start", "shell_lost"]
    assert lines.cut_lines == [2] and lines.cut_line is None
    assert lines.events[1]["parent_id"] == "evt_1"
    assert unaccounted(tmp_path) == []  # reported once: noted in background.jsonl


@pytest.mark.parametrize("kind", ["fifo", "zero-link"])
def test_lost_work_whose_trace_is_not_a_file_is_still_reported_and_said(
        tmp_path: Path, fifos: list[Path], kind: str) -> None:
    plant(tmp_path / "trace.jsonl", kind, fifos)
    (tmp_path / "background.jsonl").write_text(json.dumps(DETACHED) + "\n")
    said: list[str] = []
    lost = within(lambda: report_lost(tmp_path, "ses_1", "ses_2", "tsk_1", said.append))
    assert [work["work_id"] for work in lost] == ["wrk_a"]
    assert len(said) == 2
    assert said[0].startswith(f"{tmp_path / 'trace.jsonl'}: not read: it is a")
    assert said[1].startswith(f"{tmp_path / 'trace.jsonl'}: the shell_lost lines could not "
                              "be written: it is a")


# -- task.md ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "words"), [("fifo", "it is a FIFO (named pipe)"),
                                             ("zero-link", "it is a link")])
def test_a_task_file_that_is_not_a_file_stops_the_launch_naming_it(
        tmp_path: Path, fifos: list[Path], kind: str, words: str) -> None:
    path = tmp_path / "task.md"
    plant(path, kind, fifos)
    with pytest.raises(LaunchError) as info:
        within(lambda: read_task_at(path))
    assert str(info.value) == f"{path}: not read as the task: {words}"


def test_a_task_file_is_text_whatever_it_holds_and_over_its_cap_is_refused(
        tmp_path: Path) -> None:
    path = tmp_path / "task.md"
    for text in (DEEP, b'{"cut": "sho'):  # a task is text: JSON-looking or not, it is read
        path.write_bytes(text)
        assert within(lambda: read_task_at(path)) == text.decode()
    with path.open("wb") as handle:
        handle.truncate(MAX_TASK_BYTES + 1)
    with pytest.raises(LaunchError, match=r"task.md: not read as the task: it is over 4 MiB"):
        within(lambda: read_task_at(path))
    assert read_task_at(tmp_path / "absent.md") is None


# -- appenders ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "words"), [("fifo", "it is a FIFO (named pipe)"),
                                             ("zero-link", "it is a link (not followed)")])
def test_an_appender_refuses_what_is_not_a_file_and_writes_nothing_through_it(
        tmp_path: Path, fifos: list[Path], kind: str, words: str) -> None:
    path = tmp_path / "background.jsonl"
    plant(path, kind, fifos)
    with pytest.raises(NotAFile) as info:
        within(lambda: append_private(path, "line\n"))
    assert info.value.strerror == words and info.value.filename == str(path)
    notes = Background(0, path)  # the background record's writer: the note is dropped, said
    heard: list[ev.Event] = []
    notes.attach(heard.append, None)
    for _ in range(2):
        within(lambda: notes._note({"event": "lost", "work_id": "wrk_a"}))
    assert [(w.code, w.text) for w in heard if isinstance(w, ev.Warning)] == [(
        "W-BACKGROUND", f"{path} cannot be written: {words}; a resume after a crash cannot "
        "report this session's background work")]
    assert path.is_symlink() or path.is_fifo()


def test_an_appender_refuses_a_folder_and_starts_after_a_cut_line_on_a_new_one(
        tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    with pytest.raises(NotAFile) as info:
        open_append(tmp_path / "folder")
    assert info.value.errno == errno.EISDIR and info.value.strerror == "it is a folder"
    path = tmp_path / "record.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":')
    append_private(path, '{"c":3}\n')
    assert path.read_bytes() == b'{"a":1}\n{"b":\n{"c":3}\n'
    append_private(path, '{"d":4}\n')  # a file that ends whole gets no blank line
    assert path.read_bytes().endswith(b'{"c":3}\n{"d":4}\n')
    fresh = tmp_path / "new" / "deeper" / "log.jsonl"
    append_private(fresh, "x\n")
    assert fresh.stat().st_mode & 0o777 == 0o600
    assert fresh.parent.stat().st_mode & 0o777 == 0o700
    assert fresh.parent.parent.stat().st_mode & 0o777 == 0o700


# -- the sessions index (what `--resume` looks a session up in) -----------------------------
@pytest.mark.parametrize("kind", ["fifo", "zero-link"])
def test_a_sessions_index_that_is_not_a_file_holds_no_session(
        tmp_path: Path, fifos: list[Path], kind: str) -> None:
    from tui.core.session_index import entries, index_path

    path = index_path(tmp_path)
    path.parent.mkdir(parents=True)
    plant(path, kind, fifos)
    assert within(lambda: entries(tmp_path)) == []
