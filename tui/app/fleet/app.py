"""`murmur-tui fleet`: the app around the fleet screen.

Sessions come from three places: the running records under `$MURMUR_HOME/running/` (every
session serving a door on this machine, Murmur's and murmur-tui's, verified as Murmur verifies
them: tui/app/fleet/discovery.py), rescanned every few seconds; the sessions launched from this
screen — child processes `murmur-tui launch --headless --serve` that outlive it; and the hosts
beyond this machine (`fleet.yaml`'s `hosts:`, `--host`: tui/app/fleet/hosts.py). Each is
watched over its door (one light thread each); their events reach the screen in batches, at
most every DRAIN_SECONDS, and only what the list shows is kept. Each drain also reads what
every link last heard of its door, for the stall rule (tui/app/fleet/lifeline.py): no event
per heartbeat.

`r` on a session whose process died without writing its end starts a served session that
resumes it (`launch CAPSULE --resume SESSION --headless --serve`), followed as a new row.

Enter on a session ends this app with `open_request` set: the command line attaches the
supervisor screen to it, and comes back here when that screen is left (docs/fleet.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import TYPE_CHECKING

from textual import work

from tui.app.browser.host import AppBase
from tui.app.fleet.discovery import list_records, read_records, take_records
from tui.app.fleet.hosts import FleetHosts
from tui.app.fleet.launching import AttachTarget, Launched, resumable, tail
from tui.app.fleet.lifeline import alarms, linked, listen, why
from tui.app.fleet.links import Link, LinkState
from tui.app.fleet.model import FleetSession, RemoteQuestion
from tui.app.fleet.notices import FleetNotices
from tui.app.fleet.screen import FleetScreen
from tui.app.gc_policy import GcPolicy
from tui.core.a2a.task import rejection, taken_as
from tui.core.errors import MurmurTuiError
from tui.core.events import vocabulary as ev
from tui.core.formation.roster_order import RosterOrders
from tui.core.fs.private_files import create_private
from tui.core.hosts.status import HostStatus
from tui.core.remote.heartbeat import load_heartbeat
from tui.core.text.printable import printable

if TYPE_CHECKING:
    from tui.core.hosts.config import HostConfig
    from tui.core.running.liveness import Verdict
    from tui.core.running.records import RunningRecord

DRAIN_SECONDS = 0.05  # events reach the list at most this late (a question: at once)
REDRAW_SECONDS = 0.25  # counts and ages are redrawn this often while nothing else changes
DISCOVER_SECONDS = 2.0  # the running records are read again this often
TAKE_SECONDS = 0.1  # a host's report reaches the list at most this late (tui/app/fleet/hosts.py)
SWITCH_SECONDS = 0.001  # how long a thread may hold the GIL while others wait for it
SETTLE_LINKS = 20  # this many sessions linked at once are frozen (GcPolicy.settle)


class FleetApp(AppBase[int]):
    TITLE = "murmur-tui fleet"
    credential = "operator"  # whose token each door is shown (the read-only link: watcher)

    def __init__(self, home: Path, theme: str | None = None, *,
                 kept: dict[str, FleetSession] | None = None,
                 launched: list[Launched] | None = None, notice: str | None = None,
                 told: set[tuple[str, str, str, int]] | None = None,
                 given_hosts: Sequence[HostConfig] = ()) -> None:
        """`kept`: the sessions an earlier fleet screen saw end (they stay under Done);
        `launched`: the child processes it started; `notice`: why it was left last time;
        `told`: the questions it told of (`RemoteQuestion.key`), never told again;
        `given_hosts`: `--host` ones, after fleet.yaml's `hosts:` (tui/app/fleet/hosts.py)."""
        super().__init__(home, theme)
        self.sessions: dict[str, FleetSession] = dict(kept or {})
        self.links: dict[str, Link] = {}
        self.inbox: SimpleQueue[tuple[str, list[ev.Event] | LinkState]] = SimpleQueue()
        self.launched: list[Launched] = list(launched or [])
        self.notice = notice
        self.open_request: AttachTarget | None = None
        self.hosts: dict[str, HostStatus] = {}  # by name, in the order listed; "" this machine
        self.remote = FleetHosts(self, given_hosts)
        self.fleet = FleetScreen(lambda: list(self.sessions.values()), RosterOrders(home),
                                 lambda: list(self.hosts.values()))
        self._dirty = False
        self._last_draw = 0.0
        self.gc_policy = GcPolicy(self.call_after_refresh)  # no full collection mid-frame
        self.told_problems: set[str] = set()  # broken record files, said once
        self.told_questions: set[tuple[str, str, str, int]] = set(told or ())
        self.notices = FleetNotices(home, lambda data: self._driver and self._driver.write(data),
                                    self.warn_from_thread)
        self.heartbeat, wrong = load_heartbeat(home)  # the doors' period: stalls are 3 of it
        self.notices.problems.extend(wrong)

    def on_mount(self) -> None:
        # Fifty watcher threads wake for every frame; the screen's loop waits for the GIL
        # behind them. A shorter switch interval hands it back sooner (Python's is 5 ms).
        sys.setswitchinterval(SWITCH_SECONDS)
        self.themes.register()
        self.push_screen(self.fleet)
        for notice in filter(None, [self.notice, *self.notices.problems,
                                    *self.remote.problems]):
            self.notify(notice, severity="error", timeout=15)
        self.call_after_refresh(self.gc_policy.start)
        self.set_interval(1.0, self.gc_policy.tick, name="gc")
        self.set_interval(DRAIN_SECONDS, self._drain, name="drain")
        self.set_interval(DISCOVER_SECONDS, self._discover, name="discover")
        self._discover()
        self.remote.start()
        if self.remote.configs:
            self.set_interval(TAKE_SECONDS, self._take_reports, name="hosts")

    # -- finding sessions ---------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="discover", exit_on_error=False)
    def _discover(self) -> None:
        """This machine's running records, checked (tui/app/fleet/discovery.py)."""
        found, problems = read_records(
            self, listed=lambda records: self.call_from_thread(list_records, self, records))
        self.call_from_thread(self._discovered, found, problems)

    def _discovered(self, found: list[tuple[RunningRecord, Verdict]],
                    problems: Sequence[str] = ()) -> None:
        before = len(self.links)
        take_records(self, found, problems)
        self._settle(len(self.links) - before)
        self._check_launched()

    def _take_reports(self) -> None:
        before = len(self.links)
        self.remote.take_reports()
        if self.remote.starting:  # new rows: on the screen first, connecting…
            self._drain()
            self.call_after_refresh(self.remote.start_links)
        self._settle(len(self.links) - before)

    def _settle(self, linked: int) -> None:
        """Many sessions linked at once: what they built is kept out of full collections."""
        if linked >= SETTLE_LINKS:
            self.gc_policy.settle()

    def changed(self) -> None:
        """A row changed: the list is drawn again at the next drain."""
        self._dirty = True

    def arrived(self, session_id: str, item: list[ev.Event] | LinkState) -> None:
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
                linked(session, item, self.links.get(session_id), now)
                self._dirty = True
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
        self._dirty |= listen(self.sessions, self.links, now, self.heartbeat)
        for session, alarm in alarms(self.sessions.values()):  # a stall, a death: once each
            self.notify(self.notices.alarm(session, alarm, why(session, alarm, now),
                        self.sessions.values()), title="Needs you", severity="warning",
                        timeout=10)
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
            self.open_request = AttachTarget(  # another host's: with the token it gave
                session.session_id, session.url, session.host,
                link.token if link is not None and session.host else None)
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
                session.stopping = True  # its end is no death
                said = "Stop sent"
            else:
                return
        except MurmurTuiError as exc:
            self.call_from_thread(self.notify, f"{session.session_id}: {exc.text}",
                                  severity="error", timeout=10)
            return
        who = f"{printable(session.name)} ({session.session_id})" if session.name \
            else session.session_id
        self.call_from_thread(self.notify, f"{said} to {who}.", timeout=4)

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
        if resumes in self.sessions:  # the death is seen to: its row leaves Needs you
            self.sessions[resumes].put_aside()
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
        self.remote.close()
        self._close_links()

    def ended(self) -> dict[str, FleetSession]:
        """The sessions that ended or went away: a fleet screen opened again keeps them."""
        return {key: session for key, session in self.sessions.items()
                if session.exit_status is not None or session.connection in ("gone", "closed")}

