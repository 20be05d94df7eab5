"""The tool calls pane: one row per call (a bounded number; the full history is in the trace
and the record), and the highlighted call's input, output and metadata below. A running
call's row turns a spinner and counts its time (4 times a second, by a timer that runs only
while a call runs) and shows its newest output or progress line. A call waiting for the
person's approval (`launch --approve`) says `approval` and counts the wait instead (its run's
clock starts once it is approved); a denied one says `denied`, with no time: it never ran.

A widget a screen places: its own layout stays in `DEFAULT_CSS`, which that screen can
override; screens keep theirs in `.tcss` files beside them."""

from __future__ import annotations

import json
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

from textual.containers import Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import Static

from tui.app.widgets.contracts_file import read_contracts
from tui.app.widgets.row_list import RowList
from tui.core.events import vocabulary as ev
from tui.core.events.stream import monotonic_at
from tui.core.events.wording import duration, short
from tui.core.text.fence import unfenced
from tui.core.text.printable import printable

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TICK_SECONDS = 0.25

MAX_CALL_ROWS = 500
DETAIL_CHARS = 8000
DETAIL_SECONDS = 0.25  # while calls pour in, the detail follows the newest at most this often


def _bytes(count: int) -> str:
    for unit, scale in (("MB", 1_000_000), ("kB", 1_000)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


class ToolCallsPane(Vertical):
    """One row per call: tool, status, duration, bytes in/out, state effect, resource. The
    highlighted row's input, output, metadata and attachments show below."""

    DEFAULT_CSS = """
    ToolCallsPane .list-header { height: 1; color: $text-muted; text-style: bold; }
    /* a few calls leave the room to the detail; many take up to 60% of the pane */
    ToolCallsPane RowList { height: auto; min-height: 3; max-height: 60%; }
    ToolCallsPane #call-detail-scroll { height: 1fr; border-top: solid $panel; }
    ToolCallsPane #call-detail { padding: 0 1; }
    """
    COLUMNS = (("tool", 16), ("status", 8), ("time", 6), ("in", 8), ("out", 8), ("effect", 6),
               ("resource", 24))

    def __init__(self) -> None:
        super().__init__()
        self.rows = RowList(self.COLUMNS, MAX_CALL_ROWS, id="calls")
        self.detail = Static("Select a call to see its input and output.", id="call-detail",
                             markup=False)
        self.calls: dict[str, dict[str, Any]] = {}
        self.total = 0
        self.contracts: dict[str, str] = {}  # tool name -> its contract, as the detail says
        self._dirty_detail = False
        self._shown: str | None = None
        self._detail_text = ""
        self._detail_at = 0.0  # when the detail was last shown (monotonic)
        self._detail_timer: Timer | None = None  # a show put off to keep to DETAIL_SECONDS
        self._live_since: dict[str, float] = {}  # running call key -> when it started (monotonic)
        self._approval: set[str] = set()  # running call keys waiting for approval
        self._ticks = 0
        self.ticker: Timer | None = None  # only while a call runs

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(self.rows.header(), classes="list-header", markup=False)
        yield self.rows
        with VerticalScroll(id="call-detail-scroll"):
            yield self.detail

    def on_mount(self) -> None:
        """A call that started before the pane was on screen (a slow start) ticks from now."""
        if self._live_since and self.ticker is None:
            self.ticker = self.set_interval(TICK_SECONDS, self._tick)

    def started(self, event: ev.ToolCallStarted) -> None:
        key = _call_id(event)
        self.total += 1
        self.calls[key] = {"started": event, "finished": None}
        while len(self.calls) > MAX_CALL_ROWS:
            self.calls.pop(next(iter(self.calls)))
        self.rows.add(key, [event.tool_name, "running", "", "", "", "", ""], "cyan")
        self._dirty_detail = True
        state = getattr(self.app, "state", None)  # an attached session's call: its own start
        self._live_since[key] = monotonic_at(event.ts_ms) \
            if getattr(state, "session_clock", False) else time.monotonic()
        if self.ticker is None and self.is_attached:
            self.ticker = self.set_interval(TICK_SECONDS, self._tick)

    def live(self, call_id: str, text: str) -> None:
        """A running call's newest output or progress line."""
        lines = [line for line in text.splitlines() if line.strip()]
        if not lines:
            return
        for key in self._live_since:
            entry = self.calls.get(key)
            if entry is not None and entry["started"].call_id == call_id:
                entry["latest"] = lines[-1]
                self._dirty_detail = True
                self._draw_running(key, entry)
                return

    def waiting(self, calls: Collection[str]) -> None:
        """The calls (id, or tool name) waiting for approval now: their rows say so and count
        the wait; a row that stops waiting counts its run from then."""
        now = time.monotonic()
        for key in list(self._live_since):
            entry = self.calls.get(key)
            if entry is None:
                continue
            started: ev.ToolCallStarted = entry["started"]
            waits = (started.call_id or started.tool_name) in calls
            if waits != (key in self._approval):
                if waits:
                    self._approval.add(key)
                else:
                    self._approval.discard(key)
                self._live_since[key] = now
                self._draw_running(key, entry)

    def denied(self, event: ev.CallDenied) -> None:
        """The call was denied before it ran: its row and detail say so (its finish follows)."""
        self._mark(event.call_id, "denied", event.reason)

    def moved(self, event: ev.ShellDetached) -> None:
        """The call's command went on in the background: its row says `moved`, not ok."""
        self._mark(event.call_id, "moved", event.work_id)

    def _mark(self, call_id: str | None, what: str, value: str) -> None:
        for key in self._live_since:
            entry = self.calls.get(key)
            if entry is not None and entry["started"].call_id == call_id:
                entry[what] = value
                return

    def _tick(self) -> None:
        if not self._live_since and self.ticker is not None:
            # nothing ran for a tick: the timer goes (kept meanwhile, so a burst of short
            # calls does not make and stop a timer for each)
            self.ticker.stop()
            self.ticker = None
            return
        self._ticks += 1
        for key in list(self._live_since):
            entry = self.calls.get(key)
            if entry is None:
                self._stop(key)
            else:
                self._draw_running(key, entry)

    def _draw_running(self, key: str, entry: dict[str, Any]) -> None:
        started: ev.ToolCallStarted = entry["started"]
        elapsed = int((time.monotonic() - self._live_since[key]) * 1000)
        state = "approval" if key in self._approval else \
            f"{SPINNER[self._ticks % len(SPINNER)]} run"
        self.rows.update(key, [started.tool_name, state, short_duration(elapsed), "", "", "",
                               short(entry.get("latest", ""), 24)],
                         "yellow" if key in self._approval else "cyan")

    def _stop(self, key: str) -> None:
        self._live_since.pop(key, None)
        self._approval.discard(key)

    def finished(self, event: ev.ToolCallFinished) -> None:
        key = _call_id(event)
        entry = self.calls.get(key)
        if entry is None:
            return
        entry["finished"] = event
        self._stop(key)
        if "denied" in entry:  # it never ran: no time, no output of its own
            size = _bytes(event.input_bytes) if event.input_known else "?"
            self.rows.update(key, [event.tool_name, "denied", "", size, "", "", ""], "red")
        else:
            status = "moved" if "moved" in entry else event.status
            self.rows.update(key, [event.tool_name, status,
                                   short_duration(event.duration_ms),
                                   _bytes(event.input_bytes) if event.input_known else "?",
                                   _bytes(event.output_bytes), event.state_effect or "",
                                   event.resource_id or ""], "" if event.status == "ok" else "red")
        self._dirty_detail = True

    def shell_exited(self, event: ev.ShellExecuted) -> None:
        """A shell call's row says its exit code, as the transcript does: a command that
        exited non-zero ran (the model reads its output) but is shown failed."""
        key = f"{event.task_id}:{event.turn}:{event.call_id}:"
        for call_key, entry in reversed(self.calls.items()):  # the call that just ended
            finished = entry["finished"]
            if call_key.startswith(key) and finished is not None:
                entry["exit_code"] = event.exit_code
                entry["full_output_path"] = event.full_output_path
                self.rows.update(call_key, [finished.tool_name, f"exit {event.exit_code}",
                                            short_duration(finished.duration_ms),
                                            _bytes(finished.input_bytes),
                                            _bytes(finished.output_bytes),
                                            finished.state_effect or "",
                                            finished.resource_id or ""],
                                 "" if event.exit_code == 0 else "red")
                self._dirty_detail = True
                return

    def on_row_list_highlighted(self, message: RowList.Highlighted) -> None:
        entry = self.calls.get(message.key)
        if entry is not None:
            self._show(message.key, entry)

    def flush(self) -> None:
        """After a batch: show the highlighted call (once, however many calls came in, and
        at most every DETAIL_SECONDS while calls pour in: each new text lays the screen out
        again). A row the person picks shows at once (`on_row_list_highlighted`)."""
        key = self.rows.highlighted
        if key is None or (key == self._shown and not self._dirty_detail):
            return
        wait = DETAIL_SECONDS - (time.monotonic() - self._detail_at)
        if wait > 0:
            if self._detail_timer is None:
                self._detail_timer = self.set_timer(wait, self._flush_late)
            return
        self._dirty_detail = False
        entry = self.calls.get(key)
        if entry is not None:
            self._show(key, entry)

    def _flush_late(self) -> None:
        self._detail_timer = None
        self.flush()

    @property
    def drawn(self) -> bool:
        """The rows are laid out and the detail shows the highlighted call (nothing waits)."""
        return self.rows.drawn and self._detail_timer is None

    def read_contracts(self, path: Path) -> None:
        """The session's `tools/contracts.json`: each tool's contract and fingerprint, shown
        in a call's detail (docs/tools.md). Missing or unreadable: the detail goes without."""
        entries = read_contracts(path)
        if isinstance(entries, str):
            return
        for entry in entries:
            self.contracts[entry.name] = entry.line()

    def _show(self, key: str, entry: dict[str, Any]) -> None:
        """The call in full: a shell command as written, the output without its fence (its
        start and its end when long, so the closing notes and log path always show)."""
        self._shown = key
        started: ev.ToolCallStarted = entry["started"]
        finished: ev.ToolCallFinished | None = entry["finished"]
        parts = [f"{started.tool_name}  (call {started.call_id}, turn {started.turn + 1}, "
                 f"{started.kind})"]
        contract = self.contracts.get(started.tool_name)
        parts += [f"contract: {contract}", ""] if contract else [""]
        command = started.input.get("command")
        if not started.input_known:
            parts += ["input: not sent by the door (attached to Murmur's door; the session's "
                      "trace.jsonl is not on this machine)"]
        elif started.kind == "shell" and isinstance(command, str) and len(started.input) == 1:
            parts += ["command:", command]
        else:
            parts += ["input:", json.dumps(started.input, ensure_ascii=False, indent=2)]
        if finished is None:
            parts += ["", "running…"] + ([f"latest: {entry['latest']}"] if "latest" in entry
                                          else [])
        else:
            output = unfenced(finished.output)
            if len(output) > DETAIL_CHARS:  # its start and its end, where the notes are
                tail, cut = DETAIL_CHARS // 4, len(output) - DETAIL_CHARS
                output = (f"{output[:DETAIL_CHARS - tail]}\n… {cut:,} of {len(output):,} "
                          f"characters not shown (the record has them all) …\n"
                          f"{output[-tail:]}")
            code = entry.get("exit_code")  # a shell call: its exit code, as its row says
            status = finished.status if code is None else \
                f"exit {code}" if finished.status == "ok" else f"{finished.status} · exit {code}"
            status += f" · {duration(finished.duration_ms)}"
            if "denied" in entry:
                status = f"denied (not run): {entry['denied']}"
            elif "moved" in entry:
                status = (f"moved to the background as {entry['moved']} after "
                          f"{duration(finished.duration_ms)} (the Background pane follows it)")
            parts += ["", f"status: {status}", "", "output:", output]
            meta = [f"{k}: {v}" for k, v in (("state_effect", finished.state_effect),
                                             ("resource_id", finished.resource_id),
                                             ("full_output_path",
                                              entry.get("full_output_path"))) if v]
            if meta:
                parts += ["", "metadata:", *meta]
            if finished.attachments:
                parts += ["", "attachments:"] + [
                    f"{a.get('path')} ({a.get('media_type')}, {a.get('bytes')} bytes)"
                    for a in finished.attachments]
        text = printable("\n".join(parts))  # tool output: nothing a terminal acts on
        self._detail_at = time.monotonic()
        if text != self._detail_text:  # unchanged: no new layout of the pane
            self._detail_text = text
            self.detail.update(text)


def _call_id(event: ev.ToolCallStarted | ev.ToolCallFinished) -> str:
    return f"{event.task_id}:{event.turn}:{event.call_id}:{event.tool_name}"


def short_duration(ms: int) -> str:
    """A duration in six characters at most, for the table's column: `480ms`, `2.1s`, `2m08s`,
    `1h03m` (the detail pane says it in full)."""
    if ms < 1000:
        return f"{ms}ms"
    if ms < 59_950:
        return f"{ms / 1000:.1f}s"
    seconds = round(ms / 1000)
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
