"""The shell pane: each command with its exit code, duration and an excerpt of its output, in
a bounded number of lines (the full output is in the trace and the command's log). A running
command shows a "$ cmd  running…" header and its lines as they arrive; when it ends the header
says its exit code and time, and a closing line under its output says it again (the header may
have scrolled away). A command none of whose lines showed live gets the excerpt instead."""

from __future__ import annotations

from tui.app.widgets.row_list import RowList
from tui.core.events import vocabulary as ev
from tui.core.events.wording import duration, mark

MAX_SHELL_LINES = 3000
SHELL_EXCERPT_LINES = 40


class ShellPane(RowList):
    """Each shell command: the command line, exit code, duration, an excerpt of the output, and
    a note when the output was truncated. A bounded list of lines, drawn only where visible
    (even while its tab is hidden nothing piles up)."""

    def __init__(self) -> None:
        super().__init__((("", 400),), MAX_SHELL_LINES, id="shell-log")
        self.count = 0
        self._line = 0
        self._live: dict[str, int] = {}  # running call id -> lines shown so far
        self._headers: dict[str, str] = {}  # running call id -> its header row's key

    def _add(self, text: str, style: str = "") -> str:
        self._line += 1
        key = str(self._line)
        self.add(key, [text], style)
        return key

    def started(self, event: ev.ToolCallStarted) -> None:
        """A shell call began: its header, before any output."""
        if event.kind != "shell" or event.call_id is None or event.call_id in self._live:
            return
        command = event.input.get("command") if isinstance(event.input, dict) else None
        self._live[event.call_id] = 0
        self._headers[event.call_id] = self._add(
            f"$ {command if isinstance(command, str) else event.tool_name}  running…", "bold")

    def output(self, event: ev.ShellOutput) -> None:
        """Lines of a running command, under its header."""
        if event.call_id not in self._live:
            self._live[event.call_id] = 0
            self._headers[event.call_id] = self._add("$ …  running…", "bold")
        label = "" if event.stream == "stdout" else "stderr: "
        if event.skipped_lines:
            self._add(f"  … {event.skipped_lines} lines not shown live", "dim italic")
        for line in event.text.split("\n"):
            self._add(f"  {label}{line}", "dim" if label else "")
        self._live[event.call_id] += 1

    def executed(self, event: ev.ShellExecuted) -> None:
        self.count += 1
        shown = self._live.pop(event.call_id, 0) if event.call_id is not None else 0
        header = self._headers.pop(event.call_id, None) if event.call_id is not None else None
        ended = f"exit {event.exit_code} · {duration(event.duration_ms)}"
        style = "bold" if event.exit_code == 0 else "bold red"
        if header is not None and self.get(header) is not None:
            self.update(header, [f"$ {event.command}   {ended}"], style)
        if shown:  # its lines are above already; the end of them says how it ended
            self._add(f"  {mark(event.exit_code == 0)} {ended}",
                      "green" if event.exit_code == 0 else "red")
            if event.truncated:
                self._add(f"  output truncated at 16 KiB; full output: "
                          f"{event.full_output_path}", "yellow")
            return
        if header is None or self.get(header) is None:
            self._add(f"$ {event.command}   {ended}", style)
        for label, text in (("", event.stdout), ("stderr: ", event.stderr)):
            lines = text.splitlines()
            for line in lines[:SHELL_EXCERPT_LINES]:
                self._add(f"  {label}{line}", "dim" if label else "")
            if len(lines) > SHELL_EXCERPT_LINES:
                self._add(f"  … {len(lines) - SHELL_EXCERPT_LINES} more lines", "dim italic")
        if event.truncated:
            self._add(f"  output truncated at 16 KiB; full output: {event.full_output_path}",
                      "yellow")
