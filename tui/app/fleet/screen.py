"""The fleet screen: one list of every session, grouped Needs you / Working / Done (in a section
per host when they run on more than one: tui/app/fleet/host_rows.py), under a heading naming its
columns, a line of totals, and an input line for an inline answer, a task or a capsule to
launch. `x` and `S` ask first (tui/app/screens/confirm.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Input, Static

from tui.app.fleet.host_rows import draw
from tui.app.fleet.host_totals import fleet_line, host_totals
from tui.app.fleet.lifeline import detail
from tui.app.fleet.model import FleetSession
from tui.app.fleet.renaming import called
from tui.app.fleet.toasts import place_toasts
from tui.app.fleet.tree import FormationTree, RosterOf, answerable, asking
from tui.app.fleet.tree_rows import Line, first_line
from tui.app.screens.confirm import ConfirmScreen
from tui.app.widgets.fitted_footer import FittedFooter
from tui.app.widgets.row_list import Row, RowList
from tui.app.widgets.steady_text import SteadyText
from tui.core.hosts.status import HostStatus
from tui.core.text.printable import printable

MAX_ROWS = 10_000
Asking = Literal["answer", "task", "launch", "rename"]


class FleetRows(RowList):
    """The fleet's list: → opens the highlighted formation, ← closes it, a click on a
    formation's row opens or closes it."""

    BINDINGS = [Binding("right", "side(1)", "Open", show=False),
                Binding("left", "side(-1)", "Close", show=False)]

    class Side(Message):
        def __init__(self, key: str | None, how: int) -> None:  # 1 open, -1 close, 0 toggle
            super().__init__()
            self.key, self.how = key, how

    def action_side(self, how: int) -> None:
        self.post_message(self.Side(self.highlighted, how))

    def on_click(self, event: events.Click) -> None:
        super().on_click(event)
        key = self.highlighted
        if key is not None and key.startswith("frm:"):
            self.post_message(self.Side(key, 0))


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
        # after S: at 80 columns the footer keeps S and q, and leaves Rename out whole
        Binding("R", "ask('rename')", "Rename", tooltip="Give the session a name"),
        Binding("d", "put_aside", "Put aside", show=False),  # a stall or a death seen to
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

    def __init__(self, sessions: Callable[[], list[FleetSession]],
                 roster: RosterOf | None = None,
                 hosts: Callable[[], list[HostStatus]] | None = None) -> None:
        """`roster`: a formation's member names in roster order, when known; `hosts`: the
        hosts the sessions come from, in the order they are listed (this machine first)."""
        super().__init__()
        self.sessions = sessions
        self.hosts = hosts or (lambda: [])
        self.roster = roster
        self.rows = FleetRows(self.COLUMNS, MAX_ROWS, id="fleet")
        self.totals = SteadyText(id="fleet-totals")  # laid out again only when it must
        self.heading = Static(self.rows.header(), id="fleet-heading", markup=False)
        self.detail = SteadyText(id="fleet-detail")
        self.hint = Static("", id="fleet-hint", markup=False)
        self.input = Input(id="fleet-input")
        self.asking: Asking | None = None
        self.asked: FleetSession | None = None
        self.numbered: list[FleetSession] = []
        self.opened: set[str] = set()  # the formations opened (`frm:<id>`)
        self.lines: dict[str, Line] = {}
        self.formation_of: dict[str, str] = {}  # a member's session id → its formation's key
        self.questions: list[FleetSession] = []  # questions open, in Needs you's order
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
        now = time.monotonic()
        width = self.rows.scrollable_content_region.width
        drawn = draw(self.sessions(), self.hosts(), self.roster, self.opened, now, time.time(),
                     width or None)
        shown, groups = drawn.lines, drawn.groups
        self.lines = {line.key: line for line in shown}
        self.numbered = [line.session for line in shown if line.session is not None]
        self.formation_of = {s.session_id: top.key for _, tops in groups for top in tops
                             if isinstance(top, FormationTree) for s in top.sessions()}
        self.questions = [s for _, tops in groups for top in tops for s in asking(top)]
        keep = self.rows.highlighted
        if keep is not None and keep not in self.lines:
            keep = self.formation_of.get(keep, keep)  # a member of a closed formation
        if drawn.first is not None and (not self.chosen or keep is None or
                                        keep.startswith("group:")):
            # until the person moves it, the highlight is on the top of Needs you (the one
            # waiting longest, on any host), else the first session or formation
            keep = drawn.first
        self.rows.replace([Row(line.key, line.cells, line.style, span=line.span)
                           for line in shown], keep=keep)
        self._show_detail()
        self.totals.update(fleet_line(host_totals(drawn.sessions, now),
                                      self.totals.content_region.width or None))

    def on_resize(self, _: events.Resize) -> None:
        """The headings and the totals are fitted to the width."""
        self.redraw()

    def on_fleet_rows_side(self, event: FleetRows.Side) -> None:
        """→ opens the highlighted formation, ← closes it (from a member's row too: the
        highlight goes back to the formation), a click opens or closes it."""
        key = event.key or ""
        formation = key if key.startswith("frm:") else self.formation_of.get(key)
        if formation is None:
            return
        if event.how > 0 or (event.how == 0 and formation not in self.opened):
            self.opened.add(formation)
        else:
            self.opened.discard(formation)
        self.redraw()
        self.rows.select_key(key if key in self.lines else formation)

    def on_row_list_highlighted(self, _: RowList.Highlighted) -> None:
        self.chosen = True  # a key, a click or a number: redraw never posts this
        self._show_detail()

    def _show_detail(self) -> None:
        """The highlighted session in full: on a narrow screen its row is cut."""
        session = self.selected()
        line = self.lines.get(self.rows.highlighted or "")
        if session is None:
            self.detail.update(formation_detail(line.formation) if line is not None and
                               line.formation is not None else line.detail if line is not None
                               else "")
            return
        head = f"{session.session_id} · {printable(session.capsule)} " \
               f"{printable(session.version)} · {session.url.removeprefix('http://')}"
        if session.name:
            head = f"{printable(session.name)} · {head}"
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
        trouble = detail(session, time.monotonic())  # a stall or a death: why, first
        self.detail.update(f"{head}\n{trouble + chr(10) if trouble else ''}{body}")

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
        key = self.rows.highlighted
        if key is not None and key.startswith("frm:"):  # a formation opens, or closes
            self.post_message(FleetRows.Side(key, 0))
            return
        session = self.selected()
        if session is not None:
            self.post_message(self.Act("open", session))

    def _member(self, say: str = "") -> FleetSession | None:
        """The highlighted session; on a formation's row None, and a note saying to choose
        one of its members (else `say`, when given)."""
        session = self.selected()
        if session is None and (self.rows.highlighted or "").startswith("frm:"):
            say = "That row is a formation: open it (→) and choose one of its members."
        if session is None and say:
            self.notify(say, timeout=5)
        return session

    def action_cancel(self) -> None:
        """`x`: cancel the highlighted session's running task, once the person says yes."""
        session = self._member()
        if session is None:
            return
        task_id = session.task_id
        if task_id is None or not session.in_task or session.group == "done":
            self.notify(f"{session.session_id}: no task is running.", timeout=6)
            return
        task = f": {first_line(session.task, 120)}" if session.task.strip() else ""
        self._confirm(f"Cancel the running task of {session.session_id} "
                      f"({called(session) or 'a session'})?\n\ntask {task_id}{task}"
                      "\n\nThe session goes on.", self.Act("cancel", session, task_id))

    def action_stop(self) -> None:
        """`S`: stop the highlighted session, once the person says yes."""
        session = self._member()
        if session is None:
            return
        if session.connection == "gone" or session.exit_status is not None:
            self.notify(f"{session.session_id} has ended or cannot be reached: there is "
                        "nothing to stop.", timeout=6)
            return
        running = f"Its task {session.task_id} is canceled, the session" \
            if session.in_task and session.task_id else "The session"
        self._confirm(f"Stop {session.session_id} ({called(session) or 'a session'}"
                      f")?\n\n{running} ends and its door closes.", self.Act("stop", session))

    def _confirm(self, question: str, act: FleetScreen.Act) -> None:
        """Ask `question` (Enter or y: yes; Esc or n: no); `act` only on yes."""
        def answered(yes: bool | None) -> None:
            if yes:
                self.post_message(act)

        self.app.push_screen(ConfirmScreen(f"{question}\n\nEnter or y: yes · Esc or n: no",
                                           enter="yes"), answered)

    def action_put_aside(self) -> None:
        """`d`: a stalled? or gone session seen to — it leaves Needs you."""
        if self.input.display:
            return
        session = self._member("Choose a session first.")
        if session is None:
            return
        if not session.put_aside(time.monotonic()):
            self.notify(f"{session.session_id}: only a stalled? or gone session under Needs "
                        "you is put aside.", timeout=5)
            return
        self.redraw()

    def action_resume(self) -> None:
        if self.input.display:
            return
        session = self._member("Choose a session first.")
        if session is None:
            return
        self.post_message(self.Act("resume", session))

    def action_ask(self, what: Asking) -> None:
        session = self.selected()
        if what == "answer":
            if session is None or not answerable(session):  # a dead session's: no more
                line = self.lines.get(self.rows.highlighted or "")  # a formation's, first
                mine = asking(line.formation) if line is not None and line.formation else []
                waiting = [s for s in [*mine, *self.questions] if s.question is not None]
                if not waiting:
                    self.notify("No session is waiting for an answer.", timeout=4)
                    return
                session = waiting[0]
                if session.session_id not in self.lines:  # in a closed formation: open it
                    self.opened.add(self.formation_of.get(session.session_id, ""))
                    self.redraw()
                self.rows.select_key(session.session_id)
            assert session.question is not None
            again = " (asked before the restart)" if session.question.before_restart else ""
            hint = f"{called(session)} ({session.session_id}) asks{again}: " \
                   f"{first_line(session.question.prompt, 300)}"
            placeholder = "your answer, Enter to send, Esc to close"
        elif what == "task":
            session = self._member("Choose a session first.")
            if session is None:
                return
            hint = f"A task for {called(session)} ({session.session_id})"
            placeholder = "the task, Enter to send, Esc to close"
        elif what == "rename":
            session = self._member("Choose a session first.")
            if session is None:
                return
            hint = f"A name for {session.session_id} ({printable(session.capsule)}): up to 64 " \
                   "printable characters"
            placeholder = "the name, Enter to keep it, Esc to leave it as it was"
        else:
            session = None
            hint = "Launch a session: the capsule folder (or its murmur.yaml), then an " \
                   "optional task after two spaces"
            placeholder = "path/to/capsule  the task"
        self.asking, self.asked = what, session
        self.hint.update(hint)
        self.hint.display = True
        self.input.placeholder = placeholder
        self.input.value = session.name if what == "rename" and session is not None else ""
        self.input.display = True
        self.input.focus()
        self.call_after_refresh(place_toasts, self, self.hint)  # toasts step up over it

    def action_close_input(self) -> None:
        self.asking = self.asked = None
        self.input.display = False
        self.hint.display = False
        place_toasts(self, None)
        self.rows.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value
        what, session = self.asking, self.asked
        if what is None or not text.strip():
            return
        self.action_close_input()
        if what == "rename" and session is not None:
            self._rename(session, text)
            return
        self.post_message(self.Act(what, session, text))

    def _rename(self, session: FleetSession, text: str) -> None:
        """`R`'s name, kept in the app's Murmur home and on the row at once (or why not)."""
        from tui.app.fleet.renaming import rename
        from tui.core.fs.paths import murmur_home

        home = getattr(self.app, "home", None)
        said = rename(home if home is not None else murmur_home(), session, text)
        self.notify(printable(said), severity="information" if session.name == text
                    else "error", timeout=8)
        self.redraw()

    def action_quit(self) -> None:
        self.app.exit()


def formation_detail(formation: FormationTree) -> str:
    """A formation's row in full: its whole id, its entry and members, what blocks it."""
    members = ", ".join(printable(node.session.member) or node.key for node in formation.members)
    head = f"{formation.formation_id} · entry {printable(formation.entry.member)} · " \
           f"members: {members}"
    blocker = formation.blocker
    if blocker is None:
        return f"{head}\nnothing blocks it · → opens it, ← closes it"
    doing = f"asks: {first_line(blocker.question.prompt, 300)}" \
        if blocker.question is not None else "the others wait on it"
    return f"{head}\n◆ {printable(blocker.member)} ({blocker.session_id}) blocks it: {doing}"
