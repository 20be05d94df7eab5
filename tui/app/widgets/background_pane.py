"""The Background pane: the session's background work (shell commands demoted after
`lifecycle.shell_grace_secs`, docs/tools.md) — running, done, abandoned, lost — and under the
list the last lines of the selected work's log, followed while it runs. `x` stops the selected
running work (recorded `shell_abandoned` with `reason: stopped`). While work runs, the newest
line of its log goes out as `BackgroundPane.Newest` (the transcript shows it on the call's
line).

A widget a screen places: its own layout stays in `DEFAULT_CSS`, which that screen can
override; screens keep theirs in `.tcss` files beside them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Static

from tui.app.widgets.row_list import RowList
from tui.core.events import vocabulary as ev
from tui.core.text.printable import printable

MAX_WORK_ROWS = 500
TAIL_BYTES = 16 * 1024  # how much of the end of a log the tail reads
TAIL_LINES = 40
TAIL_SECONDS = 0.5  # how often the selected log is read again while its work runs
NEWEST_BYTES = 4096  # how much of the end of a running work's log its newest line is read from
_STYLES = {"running": "cyan", "done": "green", "abandoned": "yellow", "lost": "red"}


@dataclass
class _Row:
    work_id: str
    command: str
    state: str
    output_path: str | None
    exit_code: int | None = None
    reason: str | None = None


class BackgroundPane(Vertical):
    """work id, state, exit code, command; the selected work's log tail underneath."""

    DEFAULT_CSS = """
    BackgroundPane .list-header { height: 1; color: $text-muted; text-style: bold; }
    BackgroundPane RowList { height: 1fr; }
    BackgroundPane #work-tail-scroll { height: 2fr; border-top: solid $panel; }
    BackgroundPane #work-tail { padding: 0 1; }
    """
    BINDINGS = [Binding("x", "stop_work", "Stop work")]

    class Newest(Message):
        """Running work's log has a new last line."""

        def __init__(self, work_id: str, line: str) -> None:
            super().__init__()
            self.work_id = work_id
            self.line = line
    COLUMNS = (("work", 14), ("state", 10), ("exit", 7), ("command", 60))

    def __init__(self) -> None:
        super().__init__()
        self.rows = RowList(self.COLUMNS, MAX_WORK_ROWS, id="work")
        self.tail = Static("No command has moved to the background.", id="work-tail",
                           markup=False)
        self.work: dict[str, _Row] = {}
        self.workdir: Path | None = None
        self._shown: tuple[str, int] | None = None  # (work id, log size) last drawn
        self._sizes: dict[str, int] = {}  # running work's id -> its log's size last read

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(self.rows.header(), classes="list-header", markup=False)
        yield self.rows
        with VerticalScroll(id="work-tail-scroll"):
            yield self.tail

    def on_mount(self) -> None:
        self.set_interval(TAIL_SECONDS, self._follow)

    def _follow(self) -> None:
        self.refresh_tail()
        self.read_newest()

    def read_newest(self) -> None:
        """Each running work whose log grew: its newest non-blank line, as a `Newest`."""
        for row in self.work.values():
            path = self._log(row) if row.state == "running" else None
            if path is None:
                self._sizes.pop(row.work_id, None)
                continue
            size = _size(path)
            if size <= 0 or self._sizes.get(row.work_id) == size:
                continue
            self._sizes[row.work_id] = size
            try:
                lines = [line for line in _read_end(path, NEWEST_BYTES).splitlines()
                         if line.strip()]
            except OSError:  # the pane's tail says why, when it is selected
                continue
            if lines:
                self.post_message(self.Newest(row.work_id, printable(lines[-1])))

    @property
    def running(self) -> int:
        return sum(1 for row in self.work.values() if row.state == "running")

    # -- events -------------------------------------------------------------------------------
    def session(self, event: ev.SessionStarted) -> None:
        self.workdir = Path(event.workdir)

    def detached(self, event: ev.ShellDetached) -> None:
        self._put(_Row(event.work_id, event.command, "running", event.output_path))

    def completed(self, event: ev.ShellCompleted) -> None:
        self._put(_Row(event.work_id, event.command, "done", event.output_path,
                       event.exit_code))

    def abandoned(self, event: ev.ShellAbandoned) -> None:
        known = self.work.get(event.work_id)
        self._put(_Row(event.work_id, event.command, "abandoned",
                       event.output_path or (known.output_path if known else None),
                       event.exit_code, event.reason))

    def lost(self, event: ev.ShellLost) -> None:
        self._put(_Row(event.work_id, event.command, "lost", None))

    def _put(self, row: _Row) -> None:
        state = row.state if row.reason is None else f"{row.state} ({row.reason})"
        cells = [row.work_id.removeprefix("wrk_")[-12:], state, _ended_by(row),
                 printable(row.command.replace("\n", " "))]
        if row.work_id in self.work:
            self.rows.update(row.work_id, cells, _STYLES[row.state])
        else:
            self.rows.add(row.work_id, cells, _STYLES[row.state])
        self.work[row.work_id] = row
        self._shown = None  # the state line changed: draw again

    # -- the tail -----------------------------------------------------------------------------
    def on_row_list_highlighted(self, message: RowList.Highlighted) -> None:
        self._shown = None
        self.refresh_tail()

    def flush(self) -> None:
        self.refresh_tail()

    def refresh_tail(self) -> None:
        """Draw the selected work's log tail, when the log grew or the selection changed."""
        key = self.rows.highlighted
        row = self.work.get(key) if key is not None else None
        if row is None:
            return
        path = self._log(row)
        size = _size(path) if path is not None else -1
        if self._shown == (row.work_id, size):
            return
        self._shown = (row.work_id, size)
        head = f"{row.work_id} · {row.state}"
        if row.exit_code is not None:
            head += f" · exit {row.exit_code}"
        if row.reason:
            head += f" · {row.reason}"
        elif row.state == "abandoned" and row.exit_code is None:
            head += f" · {KILLED}: the session ended while it ran"
        head += f"\n$ {row.command}\n"
        if row.state == "running":
            head += "x stops it\n"
        if path is None:
            body = ("No output survives: the session that ran it was killed."
                    if row.state == "lost" else "No log.")
        else:
            head += f"{row.output_path}\n"
            body = _tail(path)
        self.tail.update(printable(head + "\n" + body))

    def _log(self, row: _Row) -> Path | None:
        if row.output_path is None or self.workdir is None:
            return None
        return self.workdir / row.output_path

    # -- stopping -----------------------------------------------------------------------------
    def action_stop_work(self) -> None:
        key = self.rows.highlighted
        row = self.work.get(key) if key is not None else None
        if row is None or row.state != "running":
            self.app.notify("Select running background work to stop it.", timeout=4)
            return
        from tui.core.shell.background import stop

        if stop(row.work_id):
            self.app.notify(f"Stopping {row.work_id}.", timeout=4)
        else:
            self.app.notify(f"{row.work_id} is not running.", timeout=4)


KILLED = "killed"  # work the session's end killed: it has no exit code of its own


def _ended_by(row: _Row) -> str:
    """The exit column: the exit code, or what ended work that has none — never blank for
    work that ended (a blank read as "not known yet")."""
    if row.exit_code is not None:
        return str(row.exit_code)
    if row.state == "abandoned":
        return "stopped" if row.reason == "stopped" else KILLED
    if row.state == "lost":
        return "unknown"  # the session that ran it was killed outright: nothing survives
    return ""


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


def _read_end(path: Path, most: int) -> str:
    """The last `most` bytes of the log as text, its first line left out when cut, never
    followed through a symbolic link. Raises OSError."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        size = os.fstat(fd).st_size
        os.lseek(fd, max(size - most, 0), os.SEEK_SET)
        data = os.read(fd, most)
    finally:
        os.close(fd)
    text = data.decode("utf-8", errors="replace")
    return text.split("\n", 1)[-1] if size > most else text


def _tail(path: Path) -> str:
    """The last TAIL_LINES lines of the log (its last TAIL_BYTES at most)."""
    try:
        lines = _read_end(path, TAIL_BYTES).splitlines()
    except OSError as exc:
        return f"The log cannot be read: {exc.strerror or exc}"
    return "\n".join(lines[-TAIL_LINES:]) or "(nothing written yet)"
