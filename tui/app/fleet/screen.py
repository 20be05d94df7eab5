"""The fleet screen: one list of every session, grouped Needs you / Working / Done, under a
heading naming its columns, a line of totals, and an input line for an inline answer, a task or
a capsule to launch. `x` and `S` ask first (tui/app/screens/confirm.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Input, Static

from tui.app.fleet.model import GROUPS, FleetSession, age, ordered, spent, totals
from tui.app.screens.confirm import ConfirmScreen
from tui.app.widgets.fitted_footer import FittedFooter
from tui.app.widgets.row_list import Row, RowList
from tui.core.text.printable import printable

MAX_ROWS = 10_000
Asking = Literal["answer", "task", "launch"]
GROUP_TITLES = dict(GROUPS)


def first_line(text: str, limit: int = 200) -> str:
    line = printable(text.strip().splitlines()[0] if text.strip() else "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def short_id(session_id: str) -> str:
    """`ses_…4d28f58b`: the end of an id is what `attach` and `ps` take (4+ characters)."""
    return session_id if len(session_id) <= 14 else f"{session_id[:4]}…{session_id[-9:]}"


class FleetScreen(Screen[None]):
    CSS_PATH = "fleet.tcss"
    BINDINGS = [
        Binding("enter", "open", "Open"),
        Binding("a", "ask('answer')", "Answer"),
        Binding("t", "ask('task')", "Task", tooltip="Send the session a task"),
        Binding("n", "ask('launch')", "Launch"),
        Binding("r", "resume", "Resume"),
        Binding("x", "cancel", "Cancel…", tooltip="Cancel the running task (asks first)"),
        Binding("S", "stop", "Stop…", tooltip="Stop the session (asks first)"),
        Binding("escape", "close_input", "Close", show=False),
        Binding("q", "quit", "Quit"),
        *[Binding(str(n), f"jump({n})", f"Session {n}", show=False) for n in range(1, 10)],
    ]
    COLUMNS = (("#", 2), ("session", 14), ("capsule", 14), ("status", 18), ("waited", 6),
               ("tokens", 8), ("task / question", 200))

    class Act(Message):
        """A key on a session: open, answer, task, cancel, stop, resume — or launch a
        capsule."""

        def __init__(self, action: str, session: FleetSession | None, text: str = "") -> None:
            super().__init__()
            self.action, self.session, self.text = action, session, text

    def __init__(self, sessions: Callable[[], list[FleetSession]]) -> None:
        super().__init__()
        self.sessions = sessions
        self.rows = RowList(self.COLUMNS, MAX_ROWS, id="fleet")
        self.totals = Static("", id="fleet-totals", markup=False)
        self.heading = Static(self.rows.header(), id="fleet-heading", markup=False)
        self.detail = Static("", id="fleet-detail", markup=False)
        self.hint = Static("", id="fleet-hint", markup=False)
        self.input = Input(id="fleet-input")
        self.asking: Asking | None = None
        self.asked: FleetSession | None = None
        self.numbered: list[FleetSession] = []
        self.chosen = False  # the person moved the highlight: it stays where they put it

    def compose(self) -> ComposeResult:
        yield self.totals
        yield self.heading
        yield self.rows
        yield self.detail
        yield self.hint
        yield self.input
        # every key, S and q too, on an 80-column line; narrower, the keys that fit, whole
        yield FittedFooter(compact=True)

    def on_mount(self) -> None:
        self.input.display = False
        self.hint.display = False
        self.rows.focus()
        self.watch(self.rows, "scroll_x", self._scrolled)
        self.redraw()

    def _scrolled(self, scroll_x: float) -> None:
        """The heading moves with the rows, so each name stays over its column."""
        self.heading.update(self.rows.header()[int(scroll_x):])

    # -- drawing ------------------------------------------------------------------------------
    def redraw(self) -> None:
        sessions = self.sessions()
        now = time.monotonic()
        rows: list[Row] = []
        self.numbered = []
        for group, members in ordered(sessions):
            rows.append(Row(f"group:{group}", [
                "", f"{GROUP_TITLES[group]} ({len(members)})", "", "", "", "", ""],
                "bold"))
            for session in members:
                self.numbered.append(session)
                rows.append(self._row(len(self.numbered), session, now))
        keep = self.rows.highlighted
        if self.numbered and (not self.chosen or keep is None or keep.startswith("group:")):
            # until the person moves it, the highlight is on the first row: the top of Needs
            # you (the one waiting longest), else the first session
            keep = self.numbered[0].session_id
        self.rows.replace(rows, keep=keep)
        self._show_detail()
        t, cost = totals(sessions), spent(sessions)
        self.totals.update(
            f"{t.sessions} session{'s' if t.sessions != 1 else ''} · {t.needs} need you · "
            f"{t.working} working · tokens {t.tokens_in:,} in / {t.tokens_out:,} out · "
            f"{cost + ' · ' if cost else ''}{t.tool_calls:,} tool calls")

    def _row(self, number: int, session: FleetSession, now: float) -> Row:
        if session.question is not None:
            again = "(asked before the restart) " if session.question.before_restart else ""
            what = f"? {again}{first_line(session.question.prompt)}"
            style = "red" if session.connection == "gone" else "yellow"
        else:
            what = first_line(session.task)
            style = "cyan" if session.group == "working" else (
                "red" if session.connection == "gone" or session.exit_status not in
                (None, "ok") else "")
        if session.sending:
            what = f"[{session.sending}]  {what}"
        if session.delegations:
            what += f"  → asked {', '.join(session.delegations[-2:])}"
        return Row(session.session_id, [
            str(number) if number < 10 else "", short_id(session.session_id),
            printable(session.capsule) + (" ·new" if session.origin == "launched" else ""),
            session.status, age(now - session.since),
            f"{session.tokens_in + session.tokens_out:,}", what], style)

    def on_row_list_highlighted(self, _: RowList.Highlighted) -> None:
        self.chosen = True  # a key, a click or a number: redraw never posts this
        self._show_detail()

    def _show_detail(self) -> None:
        """The highlighted session in full: on a narrow screen its row is cut."""
        session = self.selected()
        if session is None:
            self.detail.update("")
            return
        head = f"{session.session_id} · {printable(session.capsule)} " \
               f"{printable(session.version)} · {session.url.removeprefix('http://')}"
        if session.resumes:
            head += f" · resumes {session.resumes}"
        if session.question is not None:
            again = " (asked before the restart)" if session.question.before_restart else ""
            body = f"asks{again}: {first_line(session.question.prompt, 400)}"
        else:
            body = f"task: {first_line(session.task, 400)}" if session.task else "no task yet"
        if session.rejected:  # each by id: they never ran, and `GetTask` tells them so
            shown = session.rejected[-3:]
            more = f" (+{len(session.rejected) - 3} more)" if len(session.rejected) > 3 else ""
            body += "\nrejected (never ran): " + ", ".join(
                f"{task_id} ({why})" for task_id, why in shown) + more
        if session.queued:
            body += "\nqueued: " + ", ".join(session.queued)
        self.detail.update(f"{head}\n{body}")

    # -- keys ---------------------------------------------------------------------------------
    def selected(self) -> FleetSession | None:
        key = self.rows.highlighted
        return next((s for s in self.numbered if s.session_id == key), None)

    def action_jump(self, number: int) -> None:
        if number <= len(self.numbered):
            self.rows.select_key(self.numbered[number - 1].session_id)

    def action_open(self) -> None:
        if self.input.display:
            return
        session = self.selected()
        if session is not None:
            self.post_message(self.Act("open", session))

    def action_cancel(self) -> None:
        """`x`: cancel the highlighted session's running task, once the person says yes."""
        session = self.selected()
        if session is None:
            return
        task_id = session.task_id
        if task_id is None or not session.in_task or session.group == "done":
            self.notify(f"{session.session_id}: no task is running.", timeout=6)
            return
        task = f": {first_line(session.task, 120)}" if session.task.strip() else ""
        self._confirm(f"Cancel the running task of {session.session_id} "
                      f"({printable(session.capsule) or 'a session'})?\n\ntask {task_id}{task}"
                      "\n\nThe session goes on.", self.Act("cancel", session, task_id))

    def action_stop(self) -> None:
        """`S`: stop the highlighted session, once the person says yes."""
        session = self.selected()
        if session is None:
            return
        if session.connection == "gone" or session.exit_status is not None:
            self.notify(f"{session.session_id} has ended or cannot be reached: there is "
                        "nothing to stop.", timeout=6)
            return
        running = f"Its task {session.task_id} is canceled, the session" \
            if session.in_task and session.task_id else "The session"
        self._confirm(f"Stop {session.session_id} ({printable(session.capsule) or 'a session'}"
                      f")?\n\n{running} ends and its door closes.", self.Act("stop", session))

    def _confirm(self, question: str, act: FleetScreen.Act) -> None:
        """Ask `question` (Enter or y: yes; Esc or n: no); `act` only on yes."""
        def answered(yes: bool | None) -> None:
            if yes:
                self.post_message(act)

        self.app.push_screen(ConfirmScreen(f"{question}\n\nEnter or y: yes · Esc or n: no",
                                           enter="yes"), answered)

    def action_resume(self) -> None:
        if self.input.display:
            return
        session = self.selected()
        if session is None:
            self.notify("Choose a session first.", timeout=4)
            return
        self.post_message(self.Act("resume", session))

    def action_ask(self, what: Asking) -> None:
        session = self.selected()
        if what == "answer":
            if session is None or session.question is None or session.group != "needs":
                waiting = [s for s in self.numbered if s.group == "needs"]
                if not waiting:
                    self.notify("No session is waiting for an answer.", timeout=4)
                    return
                session = waiting[0]
                self.rows.select_key(session.session_id)
            assert session.question is not None
            again = " (asked before the restart)" if session.question.before_restart else ""
            hint = f"{session.capsule} ({session.session_id}) asks{again}: " \
                   f"{first_line(session.question.prompt, 300)}"
            placeholder = "your answer, Enter to send, Esc to close"
        elif what == "task":
            if session is None:
                self.notify("Choose a session first.", timeout=4)
                return
            hint = f"A task for {session.capsule} ({session.session_id})"
            placeholder = "the task, Enter to send, Esc to close"
        else:
            session = None
            hint = "Launch a session: the capsule folder (or its murmur.yaml), then an " \
                   "optional task after two spaces"
            placeholder = "path/to/capsule  the task"
        self.asking, self.asked = what, session
        self.hint.update(hint)
        self.hint.display = True
        self.input.placeholder = placeholder
        self.input.value = ""
        self.input.display = True
        self.input.focus()

    def action_close_input(self) -> None:
        self.asking = self.asked = None
        self.input.display = False
        self.hint.display = False
        self.rows.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value
        what, session = self.asking, self.asked
        if what is None or not text.strip():
            return
        self.action_close_input()
        self.post_message(self.Act(what, session, text))

    def action_quit(self) -> None:
        self.app.exit()
