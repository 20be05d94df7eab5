"""`murmur-tui fleet`: the app around the fleet screen.

Sessions come from two places: the running records under `$MURMUR_HOME/running/` (every
session serving a door on this machine, Murmur's and murmur-tui's, verified as Murmur verifies
them), rescanned every few seconds, and the sessions launched from this screen — child
processes `murmur-tui launch --headless --serve` that outlive it. Each is watched over its
door (one light thread each); their events reach the screen in batches, at most every
DRAIN_SECONDS, and only what the list shows is kept.

`r` on a session whose process died without writing its end starts a served session that
resumes it (`launch CAPSULE --resume SESSION --headless --serve`), followed as a new row.

Enter on a session ends this app with `open_request` set: the command line attaches the
supervisor screen to it, and comes back here when that screen is left (docs/fleet.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import TYPE_CHECKING

from textual import work

from tui.app.browser.host import AppBase
from tui.app.fleet.launching import AttachTarget, Launched, resumable, tail
from tui.app.fleet.links import Link, LinkState
from tui.app.fleet.model import FleetSession, RemoteQuestion, no_door, records_gone
from tui.app.fleet.notices import FleetNotices
from tui.app.fleet.renaming import take_names
from tui.app.fleet.screen import FleetScreen
from tui.app.fleet.tree import record_membership
from tui.app.gc_policy import GcPolicy
from tui.core.a2a.task import rejection, taken_as
from tui.core.errors import MurmurTuiError
from tui.core.events import vocabulary as ev
from tui.core.formation.roster_order import RosterOrders
from tui.core.fs.private_files import create_private
from tui.core.hosts.status import HostStatus
from tui.core.text.printable import printable

if TYPE_CHECKING:
    from tui.core.running.liveness import Verdict
    from tui.core.running.records import RunningRecord

DRAIN_SECONDS = 0.05  # events reach the list at most this late (a question: at once)
REDRAW_SECONDS = 0.25  # counts and ages are redrawn this often while nothing else changes
DISCOVER_SECONDS = 2.0  # the running records are read again this often
SWITCH_SECONDS = 0.001  # how long a thread may hold the GIL while others wait for it
DISCOVER_TIMEOUT = 2.0  # a door that does not answer its card within it is unreachable


class FleetApp(AppBase[int]):
    TITLE = "murmur-tui fleet"

    def __init__(self, home: Path, theme: str | None = None, *,
                 kept: dict[str, FleetSession] | None = None,
                 launched: list[Launched] | None = None, notice: str | None = None,
                 told: set[tuple[str, str, str, int]] | None = None) -> None:
        """`kept`: the sessions an earlier fleet screen saw end (they stay under Done);
        `launched`: the child processes it started; `notice`: why it was left last time;
        `told`: the questions it told of (`RemoteQuestion.key`), never told again."""
        super().__init__(home, theme)
        self.sessions: dict[str, FleetSession] = dict(kept or {})
        self.links: dict[str, Link] = {}
        self.inbox: SimpleQueue[tuple[str, list[ev.Event] | LinkState]] = SimpleQueue()
        self.launched: list[Launched] = list(launched or [])
        self.notice = notice
        self.open_request: AttachTarget | None = None
        self.hosts: dict[str, HostStatus] = {}  # by name, in the order listed; "" this machine
        self.fleet = FleetScreen(lambda: list(self.sessions.values()), RosterOrders(home),
                                 lambda: list(self.hosts.values()))
        self._dirty = False
        self._last_draw = 0.0
        self.gc_policy = GcPolicy(self.call_after_refresh)  # no full collection mid-frame
        self._told: set[str] = set()
        self.told_questions: set[tuple[str, str, str, int]] = set(told or ())
        self.notices = FleetNotices(home, lambda data: self._driver and self._driver.write(data),
                                    self.warn_from_thread)

    def on_mount(self) -> None:
        # Fifty watcher threads wake for every frame; the screen's loop waits for the GIL
        # behind them. A shorter switch interval hands it back sooner (Python's is 5 ms).
        sys.setswitchinterval(SWITCH_SECONDS)
        self.themes.register()
        self.push_screen(self.fleet)
        for notice in filter(None, [self.notice, *self.notices.problems]):
            self.notify(notice, severity="error", timeout=15)
        self.call_after_refresh(self.gc_policy.start)
        self.set_interval(1.0, self.gc_policy.tick, name="gc")
        self.set_interval(DRAIN_SECONDS, self._drain, name="drain")
        self.set_interval(DISCOVER_SECONDS, self._discover, name="discover")
        self._discover()

    # -- finding sessions ---------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="discover", exit_on_error=False)
    def _discover(self) -> None:
        """Every record, checked: a session whose stream is live needs only its process
        checked (its door answers already); the others, all three layers."""
        from tui.core.running.liveness import Verdict, process_state
        from tui.core.running.probe import verify_all
        from tui.core.running.records import read_records
        from tui.core.running.tokens import read_token

        found = read_records(self.home)
        records = [item.record for item in found if item.record is not None]
        problems = [f"{item.path}: {item.problem}" for item in found if item.problem]
        live = {key for key, session in list(self.sessions.items())
                if session.connection == "live"}
        verdicts: dict[str, Verdict] = {}
        probe = []
        for record in records:
            if record.session_id in live:
                verdicts[record.session_id] = process_state(record) or Verdict("live")
            else:
                probe.append(record)
        for record, verdict in zip(probe, verify_all(
                probe, DISCOVER_TIMEOUT, tokens=[read_token(self.home, r) for r in probe]),
                strict=True):
            verdicts[record.session_id] = verdict
        self.call_from_thread(self._discovered,
                              [(record, verdicts[record.session_id]) for record in records],
                              problems)

    def _discovered(self, found: list[tuple[RunningRecord, Verdict]],
                    problems: Sequence[str] = ()) -> None:
        from tui.core.running.probe import door_address, door_url
        from tui.core.running.tokens import read_token

        for problem in problems:  # each broken record file is said once, never followed
            if problem not in self._told:
                self._told.add(problem)
                self.notify(f"Not a running record: {printable(problem)}",
                            severity="warning", timeout=10)

        for record, verdict in found:
            known = self.sessions.get(record.session_id)
            if verdict.state != "live":
                why = verdict.reason or verdict.state
                if known is None:  # a stale record shows as gone, with why (ps --prune)
                    known = self._row(record, door_address(record.url))
                # a live stream outlives a slow card; a dead process does not (for good)
                if known.connection != "live" or verdict.state == "gone":
                    known.connect("gone", why, dead=verdict.state == "gone")
                    self._dirty = True
                continue
            if known is not None and record.session_id in self.links:
                continue
            known = known or self._row(record, door_address(record.url))
            if record.url is None:  # no door: listed, its process checked, nothing to link to
                self._dirty |= no_door(known)
                continue
            # the token goes only to the address found to be the session's own socket (a
            # public door needs none)
            token = read_token(self.home, record) if verdict.address else None
            link = Link(self.home, record.session_id, door_url(record, verdict), record,
                        self._arrived, token=token, text=False)
            self.links[record.session_id] = link
            link.start()
        self._dirty |= take_names(self.home, self.sessions, [r for r, _ in found], self.links)
        self._dirty |= records_gone(self.sessions, {record.session_id for record, _ in found})
        self._check_launched()

    def _row(self, record: RunningRecord, url: str) -> FleetSession:
        origin = "launched" if any(item.process.pid == record.pid for item in self.launched) \
            else "found"
        resumes = next((item.resumes for item in self.launched
                        if item.process.pid == record.pid), "")
        session = FleetSession(record.session_id, url, origin=origin, resumes=resumes,
                               capsule=record.capsule_name, version=record.capsule_version,
                               **record_membership(record))
        self.sessions[record.session_id] = session
        self._dirty = True
        return session

    def _arrived(self, session_id: str, item: list[ev.Event] | LinkState) -> None:
        """On a watcher's thread: hand over; the screen takes it on its next drain."""
        self.inbox.put((session_id, item))

    # -- events to rows -----------------------------------------------------------------------
    def _drain(self) -> None:
        now = time.monotonic()
        asked: list[FleetSession] = []
        while True:
            try:
                session_id, item = self.inbox.get_nowait()
            except Empty:
                break
            session = self.sessions.get(session_id)
            if session is None:
                continue
            self.gc_policy.activity()
            if isinstance(item, LinkState):
                self._linked(session, item, now)
                continue
            for event in item:
                if session.apply(event, now) or not isinstance(event, ev.TextDelta):
                    self._dirty = True
                if isinstance(event, ev.InputRequested) and session not in asked:
                    asked.append(session)
        for session in asked:  # once per question, and only while it is still open
            question = session.question
            if question is None or session.group != "needs" or \
                    question.key(session.session_id) in self.told_questions:
                continue
            self.told_questions.add(question.key(session.session_id))
            self._tell(session, question)
        if self._dirty or now - self._last_draw >= REDRAW_SECONDS:
            self._dirty = False
            self._last_draw = now
            self.fleet.redraw()
            self.notices.waiting(list(self.sessions.values()))

    @work(thread=True, group="tell", exit_on_error=False)
    def _tell(self, session: FleetSession, question: RemoteQuestion) -> None:
        """A question is told once its door says the task still waits on it: a stream read
        from its start (a screen opened later) brings questions answered long ago, and its
        answer may come in the next batch. A door that cannot say: told all the same."""
        link = self.links.get(session.session_id)
        if link is not None and question.task_id is not None:
            try:
                task = link.task(question.task_id)
            except MurmurTuiError:
                task = None
            if task is not None and task.state != "input-required":
                return
        self.call_from_thread(self._ring, session, question)

    def _ring(self, session: FleetSession, question: RemoteQuestion) -> None:
        if session.question is not question or session.group != "needs":
            return  # answered, or asked again, meanwhile: the newer question is told
        self.notices.asked(session, question, list(self.sessions.values()))
        again = " (asked before the restart)" if question.before_restart else ""
        who = printable(session.name) or session.capsule or "a session"  # its name first
        self.notify(f"{who} ({session.session_id}) asks{again}: "
                    f"{question.prompt[:300]}", title="Needs you", timeout=10)

    def _linked(self, session: FleetSession, state: LinkState, now: float) -> None:
        """The watcher's word on its door. A stream that dropped has the session's process
        checked at once (pid and start time, local and cheap): a process that is gone leaves
        Needs you and Working now, for good, and its watcher stops retrying."""
        from tui.core.running.liveness import process_state

        dead = None
        link = self.links.get(session.session_id)
        if state.state == "reconnecting" and link is not None and link.record is not None:
            verdict = process_state(link.record)
            dead = verdict.reason if verdict is not None and verdict.state == "gone" else None
        if dead is not None:
            session.connect("gone", dead, dead=True, now=now)
            assert link is not None
            threading.Thread(target=link.close, name="close link", daemon=True).start()
        else:
            session.connect(state.state, state.why, now=now)
        self._dirty = True

    # -- keys -----------------------------------------------------------------------------------
    def on_fleet_screen_act(self, act: FleetScreen.Act) -> None:
        session = act.session
        if act.action == "launch":
            self._launch(act.text)
            return
        if session is None:
            return
        if act.action == "resume":
            self._resume(session)
            return
        link = self.links.get(session.session_id)
        if act.action == "open":
            self.open_request = AttachTarget(session.session_id, session.url)
            self._close_links()
            self.exit(0)
            return
        if link is None or session.connection == "gone":
            self.notify(f"{session.session_id} cannot be reached any more.", timeout=6)
            return
        self._act(link, session, act.action, act.text)

    @work(thread=True, group="act", exit_on_error=False)
    def _act(self, link: Link, session: FleetSession, action: str, text: str) -> None:
        try:
            if action == "answer":
                question = session.question
                if question is None:
                    raise MurmurTuiError("the question was already answered")
                link.answer(question.task_id, text)
                said = "Answer sent"
            elif action == "task":  # what the door answered, never just "sent"
                task = link.send_task(text)
                why, how = rejection(task), taken_as(task, session.in_task)
                self.call_from_thread(session.sent, task.id, why, how == "queued")
                if why is not None:  # it will never run: an error, not a note
                    raise MurmurTuiError(f"task {task.id} rejected: {why}. It will not run.")
                self.call_from_thread(self.notify, f"{session.session_id}: task {task.id} "
                                      f"{how}.", timeout=4)
                return
            elif action == "cancel":  # the task the person confirmed, and no later one
                if session.task_id is None or not session.in_task:
                    raise MurmurTuiError("no task is running")
                if text and text != session.task_id:
                    raise MurmurTuiError(f"task {text} is not running any more: nothing "
                                         "was canceled")
                link.cancel(session.task_id)
                said = "Cancel sent"
            elif action == "stop":
                link.stop()
                said = "Stop sent"
            else:
                return
        except MurmurTuiError as exc:
            self.call_from_thread(self.notify, f"{session.session_id}: {exc.text}",
                                  severity="error", timeout=10)
            return
        self.call_from_thread(self.notify, f"{said} to {session.session_id}.", timeout=4)

    # -- launching ------------------------------------------------------------------------------
    def _launch(self, text: str) -> None:
        path, _, task = text.strip().partition("  ")
        capsule = Path(path.strip()).expanduser()
        if not capsule.exists():
            self.notify(f"There is no capsule at {capsule}.", severity="error", timeout=8)
            return
        self._spawn(capsule, ["--task", task.strip()] if task.strip() else [])

    def _resume(self, session: FleetSession) -> None:
        """`r`: a session whose process died without writing its end goes on in a new served
        session; any other row says why nothing is resumed."""
        entry = resumable(self.home, session, self.sessions.values(), self.launched)
        if isinstance(entry, str):
            self.notify(entry, severity="warning", timeout=10)
            return
        from tui.app.browser.resume import capsule
        from tui.core.errors import CannotResume

        try:
            loaded = capsule(entry, "full")
        except CannotResume as exc:
            self.notify(exc.text, severity="error", timeout=15)
            return
        self._spawn(loaded.manifest_path, ["--resume", entry.session_id],
                    resumes=entry.session_id)

    def _spawn(self, capsule: Path, extra: list[str], resumes: str = "") -> None:
        """`murmur-tui launch CAPSULE --headless --serve EXTRA…` as a child that outlives this
        screen, its output in a log under `$MURMUR_HOME/tui/fleet`; found by its record."""
        logs = self.home / "tui" / "fleet"
        try:
            log = logs / f"launch-{time.strftime('%Y%m%d-%H%M%S')}-{len(self.launched)}.log"
            command = [sys.executable, "-m", "tui", "launch", str(capsule.resolve()),
                       "--headless", "--serve", *extra]
            with os.fdopen(create_private(log), "wb") as out:  # 0600 in a 0700 folder
                process = subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    start_new_session=True, env={**os.environ, "MURMUR_HOME": str(self.home)})
        except OSError as exc:
            self.notify(f"Cannot launch {capsule}: {exc}", severity="error", timeout=10)
            return
        self.launched.append(Launched(process, str(capsule), log, time.monotonic(), resumes))
        what = f"Resuming {resumes} with" if resumes else "Launching"
        self.notify(f"{what} {capsule} (pid {process.pid})…", timeout=5)
        self._discover()

    def _check_launched(self) -> None:
        for item in list(self.launched):
            code = item.process.poll()
            if code is None:
                continue
            self.launched.remove(item)
            if code != 0:
                self.notify(f"{item.capsule} ended with exit status {code}: {tail(item.log)}",
                            severity="error", timeout=15)

    # -- leaving ----------------------------------------------------------------------------------
    def _close_links(self) -> None:
        for link in self.links.values():
            link.close()

    def on_unmount(self) -> None:
        self.gc_policy.stop()
        self.notices.close()
        self._close_links()

    def ended(self) -> dict[str, FleetSession]:
        """The sessions that ended or went away: a fleet screen opened again keeps them."""
        return {key: session for key, session in self.sessions.items()
                if session.exit_status is not None or session.connection in ("gone", "closed")}

