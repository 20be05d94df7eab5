"""A shell command's output while it runs: lines as they arrive, redacted, at a bounded rate
(docs/shell.md). The commands are real; a command that waits for a file the test writes only
once it has seen a line proves the line arrived while the command still ran."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.fakes import Collect
from tests.waits import block_until
from tui.core.cancel import CancelToken
from tui.core.events import vocabulary as ev
from tui.core.events.stream import EventStream
from tui.core.fs.workdir import SessionPaths
from tui.core.loop.dispatch import Dispatcher
from tui.core.loop.hook_points import HookPoints
from tui.core.loop.report import LIVE_LINES, PROGRESS_BYTES, CallFeed, Report
from tui.core.loop.state import TaskState
from tui.core.shell.handler import ShellHandler
from tui.core.shell.live import LINE_CHARS, PARTIAL_SECONDS, LiveLines
from tui.core.shell.tool import ShellTool
from tui.core.text.secrets import remember
from tui.core.tools.table import ToolTable

# Waits for ./go (at most ~30 s, so a broken stream fails instead of hanging), then says so.
KEY = "sk-live-Zq8/+w==x7Yb3Kd9Pq2Lm5"
remember(KEY)  # a key the session knows, as a credential it read would be
WAIT_FOR_GO = ("for i in $(seq 300); do [ -f go ] && break; sleep 0.1; done; "
               "[ -f go ] && echo saw-go")


def shell(tmp_path: Path) -> ShellTool:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return ShellTool(("bash",), work, tmp_path / "logs")


def run_watching(tool: ShellTool, command: str, trigger: str
                 ) -> tuple[list[tuple[str, str]], str]:
    """Run `command`; once a line equal to `trigger` arrives, write ./go."""
    seen: list[tuple[str, str]] = []

    def lines(stream: str, batch: list[str]) -> None:
        for line in batch:
            seen.append((stream, line))
            if line == trigger:
                (tool.workdir / "go").write_text("")

    result = tool.run("bash", json.dumps({"command": command}), None, lines)
    return seen, result.stdout


def test_a_line_arrives_while_the_command_still_runs(tmp_path: Path) -> None:
    seen, stdout = run_watching(shell(tmp_path), f"echo first; {WAIT_FOR_GO}", "first")
    assert "saw-go" in stdout  # the command saw the file the first line made the test write
    assert seen == [("stdout", "first"), ("stdout", "saw-go")]


def test_a_line_without_its_end_is_shown_after_a_short_wait(tmp_path: Path) -> None:
    seen, stdout = run_watching(shell(tmp_path), f"printf 'name? '; {WAIT_FOR_GO}", "name? ")
    assert "saw-go" in stdout
    assert seen[0] == ("stdout", "name? ")


def test_stderr_comes_as_its_own_stream_and_a_key_never_arrives(tmp_path: Path) -> None:
    seen, _ = run_watching(shell(tmp_path), f"echo 'token {KEY}' >&2; echo done", "")
    assert ("stdout", "done") in seen
    (err,) = [line for stream, line in seen if stream == "stderr"]
    assert KEY not in err and "[redacted]" in err


def test_lines_split_across_reads_and_characters_split_across_reads_join() -> None:
    got: list[str] = []
    live = LiveLines(lambda _stream, lines: got.extend(lines), clock=lambda: 0.0)
    data = "héllo wörld\nsecond\n".encode()
    for index in range(len(data)):  # one byte at a time
        live.feed(0, data[index:index + 1])
    live.close()
    assert got == ["héllo wörld", "second"]


def test_a_waiting_partial_line_is_due_then_shown_and_a_long_line_is_cut() -> None:
    now = [0.0]
    got: list[str] = []
    live = LiveLines(lambda _stream, lines: got.extend(lines), clock=lambda: now[0])
    live.feed(1, b"50%")
    assert live.due_in() == PARTIAL_SECONDS and got == []
    now[0] = PARTIAL_SECONDS
    live.tick()
    assert got == ["50%"] and live.due_in() is None
    live.feed(1, b"x" * (LINE_CHARS + 10) + b"\r\n")
    assert got[1] == "x" * LINE_CHARS + "…"


def feed_of(tmp_path: Path, interval: float = 0.1) -> tuple[CallFeed, Collect]:
    sink = Collect()
    report = Report(EventStream("ses_t", [sink]), tmp_path / "bootstrap.log")
    return CallFeed(report, "tsk_1", 2, "c1", interval), sink


def test_a_flood_of_lines_becomes_a_few_batches_that_keep_the_newest(tmp_path: Path) -> None:
    feed, sink = feed_of(tmp_path)
    started = time.monotonic()
    for number in range(10_000):
        feed.output("stdout", [f"line {number}"])
    elapsed = time.monotonic() - started
    feed.close()
    batches = sink.of(ev.ShellOutput)
    # one batch at once, then at most one per interval while lines kept coming, then the last
    assert 2 <= len(batches) <= elapsed / 0.1 + 3
    assert batches[-1].text.splitlines()[-1] == "line 9999"
    assert all(len(b.text.splitlines()) <= LIVE_LINES for b in batches)
    shown = sum(len(b.text.splitlines()) + b.skipped_lines for b in batches)
    assert shown == 10_000  # every line is shown or counted as left out


def test_a_quiet_call_sends_what_waits_without_more_output(tmp_path: Path) -> None:
    feed, sink = feed_of(tmp_path, interval=0.2)
    feed.output("stdout", ["one"])
    feed.output("stdout", ["two"])  # within the interval: waits for the timer
    block_until(lambda: len(sink.of(ev.ShellOutput)) >= 2, step=0.02)
    assert [b.text for b in sink.of(ev.ShellOutput)] == ["one", "two"]
    feed.close()
    feed.output("stdout", ["late"])
    assert len(sink.of(ev.ShellOutput)) == 2  # nothing after the call returned


def test_progress_is_a_redacted_stream_sent_in_capped_batches(tmp_path: Path) -> None:
    feed, sink = feed_of(tmp_path, interval=60)
    feed.progress("step 1 ")
    feed.progress(f"token {KEY[:10]}")  # a key split across two chunks
    feed.progress(f"{KEY[10:]} done\n")
    feed.close()
    first, last = sink.of(ev.ToolProgress)
    assert first.text == "step 1 "  # the first goes at once; the rest waits for the interval
    assert last.text == "token [redacted] done\n"
    feed, sink = feed_of(tmp_path, interval=60)
    feed.progress("b" + "é" * 5000)
    feed.close()
    cut = sink.of(ev.ToolProgress)[-1]
    assert len(cut.text.encode()) <= PROGRESS_BYTES and cut.text.startswith("…é")


def test_dispatch_sends_live_lines_between_started_and_finished(tmp_path: Path) -> None:
    sink = Collect()
    report = Report(EventStream("ses_t", [sink]), tmp_path / "bootstrap.log")
    table = ToolTable()
    table.shell["bash"] = ShellHandler("bash", shell(tmp_path))
    paths = SessionPaths(accessible=tmp_path / "work", session=tmp_path / "ses")
    hooks = HookPoints([], None, None, paths, report)  # type: ignore[arg-type]
    dispatch = Dispatcher(table, report, hooks, CancelToken(), report.current_turn_stream())
    dispatch.call_block(TaskState("tsk_1", 0.0), 1, {
        "id": "c9", "name": "bash", "input": {"command": "echo a; echo b >&2; echo c"}})
    kinds = [e.event_type for e in sink.events]
    assert kinds[0] == "ToolCallStarted" and kinds[-2:] == ["ToolCallFinished", "ShellExecuted"]
    live = sink.of(ev.ShellOutput)
    assert {(o.call_id, o.turn, o.task_id) for o in live} == {("c9", 1, "tsk_1")}
    assert [line for o in live if o.stream == "stdout" for line in o.text.splitlines()] == \
        ["a", "c"]
    assert [o.text for o in live if o.stream == "stderr"] == ["b"]
    (executed,) = sink.of(ev.ShellExecuted)
    assert executed.stdout == "a\nc\n"  # the result is as before


def test_a_key_split_across_a_pause_is_never_shown_in_part(tmp_path: Path) -> None:
    # the first half waits longer than a partial line does: what is shown of it stops where
    # the key could begin, and the key, once whole, is redacted
    command = (f"printf 'key {KEY[:12]}'; sleep 0.4; printf '{KEY[12:]} end\\n'; "
               "sleep 0.2; echo done")
    seen, stdout = run_watching(shell(tmp_path), command, "")
    shown = [line for _, line in seen]
    assert shown[-1] == "done" and "[redacted] end" in "".join(shown)
    assert not any(KEY[:8] in line for line in shown)
    assert KEY not in stdout and "[redacted]" in stdout
