"""The side panes: tool calls, shell commands, hook faults. Each keeps a bounded number of rows
or lines (the full history is in the trace and the record)."""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from typing import Any

from rich.text import Text
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, RichLog, Static

from tui.core import events as ev

MAX_CALL_ROWS = 500
MAX_SHELL_LINES = 3000
SHELL_EXCERPT_LINES = 40
MAX_FAULT_ROWS = 500
DETAIL_CHARS = 8000


def _bytes(count: int) -> str:
    for unit, scale in (("MB", 1_000_000), ("kB", 1_000)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


class ToolCallsPane(Vertical):
    """One row per call: tool, status, duration, bytes in/out, state effect, resource. The
    highlighted row's input, output, metadata and attachments show below."""

    DEFAULT_CSS = """
    ToolCallsPane DataTable { height: 1fr; }
    ToolCallsPane #call-detail-scroll { height: 1fr; border-top: solid $panel; }
    ToolCallsPane #call-detail { padding: 0 1; }
    """
    COLUMNS = ("tool", "status", "ms", "in", "out", "effect", "resource")

    def __init__(self) -> None:
        super().__init__()
        self.table: DataTable[str | Text] = DataTable(id="calls", cursor_type="row",
                                                      zebra_stripes=True)
        self.detail = Static("Select a call to see its input and output.", id="call-detail",
                             markup=False)
        self.calls: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.total = 0

    def compose(self):  # type: ignore[no-untyped-def]
        yield self.table
        with VerticalScroll(id="call-detail-scroll"):
            yield self.detail

    def on_mount(self) -> None:
        for name in self.COLUMNS:
            self.table.add_column(name, key=name)

    def started(self, event: ev.ToolCallStarted) -> None:
        key = f"{event.seq}"
        self.total += 1
        self.calls[_call_id(event)] = {"row": key, "started": event, "finished": None}
        self.table.add_row(event.tool_name, "running…", "", "", "", "", "", key=key)
        while len(self.calls) > MAX_CALL_ROWS:
            _, old = self.calls.popitem(last=False)
            self.table.remove_row(old["row"])
        if self.table.cursor_row == self.table.row_count - 2 or self.table.row_count == 1:
            self.table.move_cursor(row=self.table.row_count - 1)

    def finished(self, event: ev.ToolCallFinished) -> None:
        entry = self.calls.get(_call_id(event))
        if entry is None:
            return
        entry["finished"] = event
        row = entry["row"]
        status = Text("ok", style="green") if event.status == "ok" else Text("error", "red")
        for column, value in (("status", status), ("ms", str(event.duration_ms)),
                              ("in", _bytes(event.input_bytes)),
                              ("out", _bytes(event.output_bytes)),
                              ("effect", event.state_effect or ""),
                              ("resource", event.resource_id or "")):
            self.table.update_cell(row, column, value)
        if self.table.row_count and self._highlighted_row() == row:
            self._show(entry)

    def _highlighted_row(self) -> str | None:
        try:
            return str(self.table.coordinate_to_cell_key(self.table.cursor_coordinate).row_key
                       .value)
        except Exception:
            return None

    def on_data_table_row_highlighted(self, message: DataTable.RowHighlighted) -> None:
        key = message.row_key.value
        entry = next((e for e in self.calls.values() if e["row"] == key), None)
        if entry is not None:
            self._show(entry)

    def _show(self, entry: dict[str, Any]) -> None:
        started: ev.ToolCallStarted = entry["started"]
        finished: ev.ToolCallFinished | None = entry["finished"]
        parts = [f"{started.tool_name}  (call {started.call_id}, turn {started.turn + 1}, "
                 f"{started.kind})", "", "input:",
                 json.dumps(started.input, ensure_ascii=False, indent=2)]
        if finished is None:
            parts += ["", "running…"]
        else:
            output = finished.output
            if len(output) > DETAIL_CHARS:
                output = output[:DETAIL_CHARS] + f"\n… ({len(finished.output)} characters)"
            parts += ["", f"status: {finished.status} · {finished.duration_ms} ms", "",
                      "output:", output]
            meta = [f"{k}: {v}" for k, v in (("state_effect", finished.state_effect),
                                             ("resource_id", finished.resource_id)) if v]
            if meta:
                parts += ["", "metadata:", *meta]
            if finished.attachments:
                parts += ["", "attachments:"] + [
                    f"{a.get('path')} ({a.get('media_type')}, {a.get('bytes')} bytes)"
                    for a in finished.attachments]
        self.detail.update("\n".join(parts))


def _call_id(event: ev.ToolCallStarted | ev.ToolCallFinished) -> str:
    return f"{event.task_id}:{event.turn}:{event.call_id}:{event.tool_name}"


class ShellPane(RichLog):
    """Each shell command: the command line, exit code, duration, an excerpt of the output, and
    a note when the output was truncated."""

    DEFAULT_CSS = "ShellPane { padding: 0 1; }"

    def __init__(self) -> None:
        super().__init__(max_lines=MAX_SHELL_LINES, wrap=False, markup=False, highlight=False,
                         id="shell-log")
        self.count = 0

    def executed(self, event: ev.ShellExecuted) -> None:
        self.count += 1
        style = "green" if event.exit_code == 0 else "red"
        head = Text.assemble(("$ ", "bold"), (event.command, "bold"),
                             (f"   exit {event.exit_code}", style),
                             (f" · {event.duration_ms} ms", "dim"))
        self.write(head)
        for label, text in (("", event.stdout), ("stderr: ", event.stderr)):
            lines = text.splitlines()
            for line in lines[:SHELL_EXCERPT_LINES]:
                self.write(Text(f"  {label}{line}", style="dim" if label else ""))
            if len(lines) > SHELL_EXCERPT_LINES:
                self.write(Text(f"  … {len(lines) - SHELL_EXCERPT_LINES} more lines",
                                style="dim italic"))
        if event.truncated:
            self.write(Text(f"  output truncated at 16 KiB; full output: "
                            f"{event.full_output_path}", style="yellow"))


class HookFaultsPane(DataTable[str]):
    """hook, handler, arm or error, time."""

    def __init__(self) -> None:
        super().__init__(id="faults", cursor_type="row", zebra_stripes=True)
        self.count = 0

    def on_mount(self) -> None:
        for name in ("time", "hook", "handler", "arm / error"):
            self.add_column(name, key=name)

    def fault(self, event: ev.HookFault) -> None:
        self.count += 1
        what = event.arm or event.error or ""
        if event.arm and event.error:
            what = f"{event.arm}: {event.error}"
        stamp = time.strftime("%H:%M:%S", time.localtime(event.ts_ms / 1000))
        self.add_row(stamp, event.hook, event.handler, what, key=str(event.seq))
        while self.row_count > MAX_FAULT_ROWS:
            first = next(iter(self.rows))
            self.remove_row(first)
