"""`murmur-tui launch`: the Textual app that supervises one session.

The session runs in a thread worker and reports through the bridge; questions from tools come
through the screen responder and open the dialog. The app's return code is the launch's exit
status: 0 when the task ended ok, 1 otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable
from functools import partial
from pathlib import Path

from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import ModalScreen, Screen
from textual.worker import Worker, WorkerState

from tui.app.approver import PendingApproval, ScreenApprover
from tui.app.attention import Attention, load_settings
from tui.app.bridge import CoalescingBridge, EventsArrived, ImmediateBridge
from tui.app.browser.host import BrowserHost
from tui.app.browser.requests import ResumeConversation
from tui.app.gc_policy import GcPolicy
from tui.app.responder import Question, ScreenResponder
from tui.app.screens.approve import ApproveScreen
from tui.app.screens.ask import AskScreen
from tui.app.screens.confirm import ConfirmScreen
from tui.app.screens.help import HelpScreen
from tui.app.screens.supervisor import SupervisorScreen
from tui.app.state import QueuedTask, SessionState, TaskQueue
from tui.app.themes import DEFAULT_THEME, ThemeError, load_all, load_theme, user_theme_dir
from tui.app.widgets.prompt import PromptArea
from tui.app.widgets.task_queue import QueueView
from tui.core import events as ev
from tui.core import session_index
from tui.core.approvals import Decision
from tui.core.cancel import CancelToken
from tui.core.errors import MurmurTuiError
from tui.core.loop.launch import LaunchOptions, SessionResult
from tui.core.loop.session import Session

ESC_WINDOW = 1.5
CTRL_C_WINDOW = 2.0  # a second Ctrl+C within it quits
TITLE = "murmur-tui"


class SupervisorApp(BrowserHost):
    TITLE = TITLE
    BINDINGS = [
        Binding("escape", "cancel_turn", "Cancel (Esc Esc)"),
        Binding("a", "answer", "Answer"),
        Binding("y", "copy_result", "Copy result"),
        Binding("b", "browse", "Browse"),
        Binding("f1", "help", "Help"),
        Binding("q", "quit_app", "Quit"),
        # as in Claude Code and Codex: Ctrl+C cancels what runs, a second one quits
        Binding("ctrl+c", "interrupt", "Cancel / quit", show=False, priority=True),
    ]

    def __init__(self, home: Path, theme: str | None = None,
                 bridge: CoalescingBridge | ImmediateBridge | None = None) -> None:
        super().__init__(home)
        self.requested_theme = theme or DEFAULT_THEME
        self.bridge = bridge if bridge is not None else CoalescingBridge()
        self.cancel = CancelToken()
        self.responder = ScreenResponder(self)
        self.state = SessionState()
        self.questions: list[Question] = []
        self.session: Session | None = None
        self.result: SessionResult | None = None
        self.dialog: AskScreen | None = None
        self.approver = ScreenApprover(self)  # `launch --approve`: calls wait for a decision
        self.approvals_waiting: list[PendingApproval] = []
        self.approval_dialog: ApproveScreen | None = None
        self.queue = TaskQueue()  # prompts waiting to run (the screen shows them)
        self.supervisor = SupervisorScreen(self.state, self.queue)
        self._followup_starting = False  # a follow-up session is being built
        self._queue_held = False  # a canceled session: the queue waits to be started again
        self._refusal_told = False
        self._last_escape = 0.0
        self._last_interrupt = 0.0
        self._quitting = False
        self._closed = False
        self.theme_files: dict[Path, str] = {}
        self._batches: asyncio.Queue[list[ev.Event]] = asyncio.Queue()
        self._applying = False
        self.gc_policy = GcPolicy()
        self.attention_settings = load_settings(home)
        self.attention = Attention(self, self.attention_settings.mode, present=self.present)

    # -- start --------------------------------------------------------------------------------
    def attach(self, session: Session) -> None:
        """The session to run (built by the command line, which reported bad input)."""
        self.session = session
        self.attention.capsule = session.capsule.name

    def on_mount(self) -> None:
        self._register_themes()
        for problem in self.attention_settings.problems:
            self.notify(problem, title="Notification setting", severity="warning", timeout=10)
        self.push_screen(self.supervisor)
        self.call_after_refresh(self.gc_policy.start)
        self.set_interval(1.0, self.gc_policy.tick, name="gc")
        self.bridge.start(self, self._deliver)
        self.run_worker(self._consume(), group="deliver", name="deliver", exit_on_error=False)
        if self.session is not None:
            self.run_worker(self._run_session, thread=True, exit_on_error=False,
                            group="session", name="session")
        self.run_worker(self._watch_themes(), exit_on_error=False, group="themes",
                        name="theme-watcher")

    def _deliver(self, batch: list[ev.Event]) -> None:
        self._batches.put_nowait(batch)

    async def _consume(self) -> None:
        """One long-lived consumer: batches reach the screen in order, one at a time."""
        while True:
            batch = await self._batches.get()
            self._applying = True
            self.gc_policy.activity()
            try:
                await self.supervisor.apply(batch)
                self._attend(batch)
                self._follow_queue(batch)
            finally:
                self._applying = False

    async def on_events_arrived(self, message: EventsArrived) -> None:
        self.gc_policy.activity()
        await self.supervisor.apply(message.events)
        self._attend(message.events)
        self._follow_queue(message.events)

    def on_unmount(self) -> None:
        """The screen is closing, however it closes: a running session is canceled (its files
        stay complete) and no question is left waiting for an answer that cannot come."""
        self.gc_policy.stop()
        self.attention.close()
        self._closed = True
        self._close_inbox()
        if self.running and not self.state.sleeping:
            self.cancel.set()
        for question in self.questions:
            if not question.future.done():
                question.future.set_exception(RuntimeError("murmur-tui closed"))
        self.questions.clear()
        self._close_approvals("murmur-tui closed")

    def _run_session(self) -> SessionResult:
        assert self.session is not None
        return self.session.run()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "session":
            return
        self.refresh_bindings()  # Cancel comes and goes with the session
        if event.state == WorkerState.SUCCESS:
            if event.worker.result is None:  # a follow-up was refused before it started
                return
            self.result = event.worker.result
        elif event.state == WorkerState.ERROR:
            self._followup_starting = False
            self._queue_held = bool(self.queue)
            self.notify(f"The session stopped: {event.worker.error}", severity="error",
                        timeout=30)
            self.attention.notify("failed", f"The session stopped: {event.worker.error}")
        else:
            return
        self.bridge.flush_now()
        self._close_questions("the session ended")
        if self._quitting:
            self.exit(self.return_status, return_code=self.return_status)
            return
        self._session_over()

    @property
    def idle(self) -> bool:
        """No event waits to reach the screen (for tests and the benchmark)."""
        return not self.bridge.pending and self._batches.empty() and not self._applying

    @property
    def running(self) -> bool:
        return self._followup_starting or (self.session is not None and
                                           self.result is None and
                                           self.state.exit_status is None)

    @property
    def return_status(self) -> int:
        status = self.result.exit_status if self.result else self.state.exit_status
        return 0 if status == "ok" else 1

    # -- questions ----------------------------------------------------------------------------
    def question_arrived(self, question: Question) -> None:
        if self._closed:
            question.future.set_exception(RuntimeError("murmur-tui closed"))
            return
        self.questions.append(question)
        self.state.questions = len(self.questions)
        self.refresh_bindings()
        self.attention.notify("question", f"{question.request.tool_name} asks: "
                              f"{question.request.prompt}")
        self.title = f"? {question.request.tool_name} asks — {TITLE}"
        if self.dialog is None:
            self._open_dialog()
        else:
            self.dialog.set_waiting(len(self.questions) - 1)
        self.supervisor.refresh_status()

    def question_withdrawn(self, question: Question) -> None:
        if question in self.questions:
            self.questions.remove(question)
        self.state.questions = len(self.questions)
        if self.dialog is not None and self.dialog.question is question:
            self.dialog.dismiss(None)
        self.notify(f"{question.request.tool_name}'s question was withdrawn (no answer in "
                    "time, or the turn was canceled).", severity="warning", timeout=8)
        self._after_question()

    def _open_dialog(self) -> None:
        if not self.questions or self.approval_dialog is not None:  # never two dialogs
            return
        question = self.questions[0]
        self.dialog = AskScreen(question, waiting=len(self.questions) - 1)

        def answered(answer: str | None) -> None:
            self.dialog = None
            if answer is None or question.future.done():
                if question in self.questions and answer is None:
                    self.notify("The question is waiting: press a to answer it.", timeout=6)
                self._after_question()
                return
            question.future.set_result(answer)
            if question in self.questions:
                self.questions.remove(question)
            self._after_question()
            if self.questions:
                self._open_dialog()

        self.push_screen(self.dialog, answered)

    def _after_question(self) -> None:
        self.state.questions = len(self.questions)
        self.refresh_bindings()
        if not self.questions:
            self.attention.settled("question")
        if not self.approvals_waiting:
            self.attention.settled("approval")
        if not self.questions and not self.approvals_waiting:
            self.title = TITLE
        self.supervisor.refresh_status()
        if self.dialog is None:
            self._open_approval()

    def _close_questions(self, why: str) -> None:
        for question in list(self.questions):
            if not question.future.done():
                question.future.set_exception(RuntimeError(why))
        self.questions.clear()
        if self.dialog is not None:
            self.dialog.dismiss(None)
        self._close_approvals(why)
        self._after_question()

    def action_answer(self) -> None:
        if self.dialog is None and self.questions:
            self._open_dialog()
        elif not self.questions:
            self.notify("No question is waiting.", timeout=3)

    # -- approvals ----------------------------------------------------------------------------
    def approval_arrived(self, pending: PendingApproval) -> None:
        if self._closed:
            pending.future.set_exception(RuntimeError("murmur-tui closed"))
            return
        self.approvals_waiting.append(pending)
        self.attention.notify("approval", f"{pending.request.tool_name} waits for approval")
        self.title = f"? approve {pending.request.tool_name} — {TITLE}"
        self._open_approval()

    def approval_withdrawn(self, pending: PendingApproval) -> None:
        if pending in self.approvals_waiting:
            self.approvals_waiting.remove(pending)
        if self.approval_dialog is not None and self.approval_dialog.pending is pending:
            self.approval_dialog.dismiss(None)
        self._after_question()

    def _open_approval(self) -> None:
        """The oldest waiting approval, unless a dialog (either kind) is already showing."""
        if not self.approvals_waiting or self.approval_dialog is not None or \
                self.dialog is not None:
            return
        pending = self.approvals_waiting[0]
        self.approval_dialog = ApproveScreen(pending)

        def decided(decision: Decision | None) -> None:
            self.approval_dialog = None
            if pending in self.approvals_waiting:
                self.approvals_waiting.remove(pending)
            if decision is not None and not pending.future.done():
                pending.future.set_result(decision)
            self._after_question()
            if self.questions and self.dialog is None:
                self._open_dialog()

        self.push_screen(self.approval_dialog, decided)

    def _close_approvals(self, why: str) -> None:
        for pending in self.approvals_waiting:
            if not pending.future.done():
                pending.future.set_exception(RuntimeError(why))
        self.approvals_waiting.clear()
        if self.approval_dialog is not None and not self._closed:
            self.approval_dialog.dismiss(None)

    # -- attention ----------------------------------------------------------------------------
    def _attend(self, batch: list[ev.Event]) -> None:
        """A task that ended while the user looks elsewhere is worth a notification."""
        for event in batch:
            match event:
                case ev.SessionStarted():
                    self.attention.capsule = event.capsule_name
                case ev.TaskEnded():
                    if event.exit_status == "ok":
                        self.attention.notify("done", event.result)
                    else:
                        self.attention.notify("failed", f"the task ended {event.exit_status}")

    def present(self) -> bool:
        """The terminal has focus and the supervisor shows (a dialog over it counts)."""
        if not self.app_focus:
            return False
        for screen in reversed(self.screen_stack):
            if screen is self.supervisor:
                return True
            if not isinstance(screen, ModalScreen):
                return False
        return False

    def write_terminal(self, data: str) -> None:
        """Raw sequences for the terminal, through the driver (the app's own output)."""
        if self._driver is not None:
            self._driver.write(data)

    def bell(self) -> None:
        self.write_terminal("\a")

    def watch_app_focus(self, focus: bool) -> None:
        """The terminal reported focus back (or a key or a click came from it)."""
        if focus:
            self.attention.returned()

    def on_supervisor_screen_shown(self, _: SupervisorScreen.Shown) -> None:
        self.attention.returned()

    # -- the prompt, the queue and follow-up sessions ------------------------------------------
    def on_prompt_area_sent(self, message: PromptArea.Sent) -> None:
        """Enter in the prompt: the text joins the queue and runs as soon as it may. Enter on
        an empty prompt starts a queue that a canceled session left waiting."""
        if message.text.strip():
            self.queue.add(message.text)
        elif not (self._queue_held and self.queue):
            return
        self._queue_held = False
        self._feed()
        self.supervisor.show_queue()

    def on_queue_view_edit(self, message: QueueView.Edit) -> None:
        item = self.queue.remove(message.index)
        if item is None:
            self.notify("The session already holds this task; it starts next as it is.",
                        timeout=5)
            return
        prompt = self.supervisor.prompt
        if prompt.text.strip():  # what you were typing is not lost: it goes back in the queue
            self.queue.items.insert(message.index, QueuedTask(prompt.text))
        prompt.take_back(item.text)
        self.supervisor.show_queue(message.index)

    def on_queue_view_remove(self, message: QueueView.Remove) -> None:
        if self.queue.remove(message.index) is None:
            self.notify("The session already holds this task; it starts next as it is.",
                        timeout=5)
            return
        self.supervisor.show_queue(message.index)
        if not self.queue:
            self.supervisor.prompt.focus()

    def on_queue_view_move(self, message: QueueView.Move) -> None:
        self.supervisor.show_queue(self.queue.move(message.index, message.by))

    def _follow_queue(self, batch: list[ev.Event]) -> None:
        """A queued prompt that started leaves the queue; the next one may go to the session."""
        changed = False
        for event in batch:
            match event:
                case ev.SessionStarted():
                    self._followup_starting = False
                    self._refusal_told = False
                case ev.TaskStarted() if event.source == "a2a":
                    changed = self.queue.started(event.text) or changed
                case ev.TaskEnded():
                    changed = True
        if changed:
            self._feed()
            self.supervisor.show_queue()

    def _feed(self) -> None:
        """Give the next queued prompt to the running session when it takes tasks and holds
        none yet, or start a follow-up session with it when the session has ended."""
        if self._closed or self._quitting or self._followup_starting or self._queue_held:
            return
        session = self.session
        item = self.queue.next_held()
        if session is None or item is None:
            return
        if not self.running:
            self._start_followup()
            return
        if self.queue.sent or session.inbox.pending():
            return  # one at a time: what waits in the session cannot be edited any more
        refused = session.submit(item.text)
        if refused is None:
            item.sent = True
        elif not self._refusal_told:
            self._refusal_told = True
            self.notify(f"Queued: {refused}, so it runs in a follow-up session in the same "
                        "conversation when this one ends.", timeout=8)

    def _session_over(self) -> None:
        """The session ended: what it was given but did not run goes back to waiting, and
        the queue goes on in a follow-up session — unless the session was canceled or broke,
        when the queue waits for Enter."""
        self.queue.unsend()
        status = self.result.exit_status if self.result is not None else None
        if self.queue and status in (None, "canceled"):
            self._queue_held = True
            many = len(self.queue) > 1
            self.notify(f"{len(self.queue)} queued prompt{'s wait' if many else ' waits'}: "
                        f"press Enter in the prompt to run {'them' if many else 'it'}.",
                        timeout=10)
        self.supervisor.show_queue()
        self._feed()

    def _start_followup(self) -> None:
        """The next session in the same conversation, with the queue's head as its task
        (`--resume` of the session that ended, full)."""
        previous = self.session
        assert previous is not None
        entry = next((e for e in session_index.entries(previous.home)
                      if e.session_id == previous.session_id), None)
        if entry is None:
            self._queue_held = True
            self.notify(f"Cannot go on: session {previous.session_id} is not in "
                        f"{session_index.index_path(previous.home)}.", severity="error",
                        timeout=10)
            return
        item = self.queue.pop_head()
        assert item is not None
        self._followup_starting = True
        self.cancel = CancelToken()
        self.run_worker(partial(self._run_followup, previous, entry, item, self.cancel),
                        thread=True, exit_on_error=False, group="session", name="session")
        self.supervisor.show_queue()

    def _run_followup(self, previous: Session, entry: session_index.Entry, item: QueuedTask,
                      cancel: CancelToken) -> SessionResult | None:
        """On the session's thread: build the follow-up (which loads its components), then
        run it; None when it was refused (the prompt goes back to the queue's head)."""
        paths = previous.paths  # a --workdir given at launch is the follow-up's too
        workdir = paths.accessible if paths.session != paths.accessible else None
        try:
            session = Session(
                previous.capsule,
                LaunchOptions(task=item.text, home=previous.home, workdir=workdir,
                              resume=session_index.Resume(entry, "full")),
                sinks=[self.bridge], responder=self.responder, cancel=cancel,
                approver=previous.dispatch.approvals)
        except MurmurTuiError as exc:
            self.call_from_thread(self._followup_refused, item, str(exc))
            return None
        self.call_from_thread(self._followup_attached, session)
        return session.run()

    def _followup_attached(self, session: Session) -> None:
        self.session = session
        self.result = None

    def _followup_refused(self, item: QueuedTask, why: str) -> None:
        self._followup_starting = False
        self._queue_held = True
        self.queue.put_back(item)
        self.supervisor.show_queue()
        self.notify(f"The follow-up session did not start: {why}", severity="error",
                    timeout=15)

    def _close_inbox(self) -> None:
        """Quitting: a session waiting for its next task ends as it is (nothing more comes)."""
        if self.session is not None:
            self.session.inbox.close()

    # -- control ------------------------------------------------------------------------------
    def action_cancel_turn(self) -> None:
        if not self.running:
            return
        now = time.monotonic()
        if now - self._last_escape <= ESC_WINDOW:
            self.cancel.set()
            self.notify("Canceling the turn…", timeout=4)
        else:
            self._last_escape = now
            self.notify("Press Esc again to cancel the running turn.", timeout=ESC_WINDOW)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The footer and the palette offer only what applies now: no Cancel when nothing
        runs, no Answer without a question (False hides the key, and it does nothing)."""
        if action == "cancel_turn":
            return self.running and not self.state.sleeping
        if action == "answer":
            return bool(self.questions)
        return True

    def action_interrupt(self) -> None:
        """Ctrl+C: with text selected, copies it; else the running task is canceled (its files
        stay complete), and a second Ctrl+C within CTRL_C_WINDOW seconds quits, without
        asking."""
        if self.screen.get_selected_text():
            if isinstance(self.screen, SupervisorScreen):
                self.screen.action_copy_text()
            else:
                self.copy_to_clipboard(self.screen.get_selected_text() or "")
            return
        now = time.monotonic()
        if now - self._last_interrupt <= CTRL_C_WINDOW:
            self._quitting = True
            self._close_questions("murmur-tui is quitting")
            if self.running:
                self.cancel.set()
                self._close_inbox()
                self.notify("Canceling the session, then quitting…", timeout=10)
            else:
                self.exit(self.return_status, return_code=self.return_status)
            return
        self._last_interrupt = now
        if self.running and not self.state.sleeping:
            self.cancel.set()
            self.notify("Canceling the task… (Ctrl+C again quits)", timeout=CTRL_C_WINDOW)
        else:
            self.notify("Press Ctrl+C again to quit.", timeout=CTRL_C_WINDOW)

    def action_quit_app(self) -> None:
        if not self.running:
            self.exit(self.return_status, return_code=self.return_status)
            return
        if self.state.sleeping and not self._followup_starting:
            self._quitting = True  # nothing runs: the session ends as it is, then the app
            self._close_inbox()
            return

        def decided(yes: bool | None) -> None:
            if yes:
                self._quitting = True
                self.cancel.set()
                self._close_questions("murmur-tui is quitting")
                self.notify("Canceling the session, then quitting…", timeout=10)

        self.push_screen(ConfirmScreen("A session is running. Cancel it and quit? Its files "
                                       "stay complete."), decided)

    def action_copy_result(self) -> None:
        text = self.state.result
        if not text:
            self.notify("There is no result yet; nothing was copied.", timeout=4)
            return
        self.copy_to_clipboard(text)
        self.notify(f"Copied the result ({len(text)} characters).", timeout=3)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_browse(self) -> None:
        """The conversation browser, over this screen (Esc comes back)."""
        self.open_browser()

    def on_resume_conversation(self, wanted: ResumeConversation) -> None:
        """`r` / `R` in the browser over this screen: the session still running ends (canceled,
        its files complete), then a follow-up session resumed from the chosen one takes a
        fresh supervisor screen. If it cannot start, a toast says why."""
        from tui.app.browser.resume import follow_up
        from tui.core.errors import MurmurTuiError

        async def resume() -> None:
            while len(self.screen_stack) > 2 and self.screen is not self.supervisor:
                self.pop_screen()
            if self.running:
                self.notify("Ending the running session (canceled), then resuming…", timeout=6)
                self.cancel.set()
                self._close_questions("the session was ended to resume another")
                for worker in [w for w in self.workers if w.name == "session"]:
                    with contextlib.suppress(Exception):
                        await worker.wait()
            self.bridge.flush_now()
            for _ in range(500):  # the ended session's last events reach its own screen
                if self.idle:
                    break
                await asyncio.sleep(0.02)
            previous = self.session.dispatch.approvals if self.session is not None else None
            cancel = CancelToken()

            def build() -> Session:
                capsule, options, approvals = follow_up(
                    wanted, self.home, previous.mode if previous is not None else None)
                return Session(capsule, options, sinks=[self.bridge], responder=self.responder,
                               cancel=cancel, approver=approvals.gate(self.approver)
                               if approvals is not None else None)

            try:  # loading the capsule's components can take a while: off the screen's loop
                session = await asyncio.to_thread(build)
            except MurmurTuiError as exc:
                self.notify(exc.text, title="Cannot resume", severity="error", timeout=15)
                return
            self.cancel, self.result, self.state = cancel, None, SessionState()
            self.supervisor = SupervisorScreen(self.state)
            await self.switch_screen(self.supervisor)
            self.attach(session)
            self.run_worker(self._run_session, thread=True, exit_on_error=False,
                            group="session", name="session")

        self.run_worker(resume(), group="resume", exclusive=True, exit_on_error=False)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Cancel the running turn", "End the session as canceled",
                            self._cancel_now)
        yield SystemCommand("Answer the waiting question", "Reopen the question dialog",
                            self.action_answer)
        yield SystemCommand("Copy the result", "Copy the task's result to the clipboard",
                            self.action_copy_result)
        yield SystemCommand("Jump to latest", "Follow the newest output",
                            self.supervisor.action_jump)
        yield SystemCommand("Help", "Keys and what they do", self.action_help)
        yield SystemCommand("Browse conversations", "Every conversation record, newest first",
                            self.action_browse)
        for name in sorted(self.available_themes):
            if name.startswith("murmur-") or name in self.theme_files.values():
                yield SystemCommand(f"Theme: {name}", "Switch to this theme",
                                    lambda name=name: setattr(self, "theme", name))

    def _cancel_now(self) -> None:
        if self.running:
            self.cancel.set()
            self.notify("Canceling the turn…", timeout=4)

    # -- themes -------------------------------------------------------------------------------
    def _register_themes(self) -> None:
        user_theme_dir(self.home).mkdir(parents=True, exist_ok=True)
        found, problems = load_all(self.home)
        for item in found:
            self.register_theme(item.theme)
            self.theme_files[item.path] = item.theme.name
        for problem in problems:
            self.notify(problem, title="Theme not loaded", severity="error", timeout=10)
        if self.requested_theme in self.available_themes:
            self.theme = self.requested_theme
        else:
            if self.requested_theme != DEFAULT_THEME:
                self.notify(f"There is no theme {self.requested_theme!r}; using "
                            f"{DEFAULT_THEME}.", severity="warning", timeout=8)
            if DEFAULT_THEME in self.available_themes:
                self.theme = DEFAULT_THEME

    async def _watch_themes(self) -> None:
        from watchfiles import Change, awatch

        folders = [str(path.parent) for path in self.theme_files] + \
            [str(user_theme_dir(self.home))]
        async for changes in awatch(*dict.fromkeys(folders), debounce=200, step=50):
            for change, changed in changes:
                if changed.endswith(".yaml") and change != Change.deleted:
                    self.reload_theme(Path(changed))

    def reload_theme(self, path: Path) -> None:
        """A theme file changed: use it, or say why not and keep the current theme."""
        try:
            theme = load_theme(path)
        except ThemeError as exc:
            self.notify(f"{exc}. Keeping the theme {self.theme}.", title="Theme not loaded",
                        severity="error", timeout=10)
            return
        self.register_theme(theme)
        self.theme_files[path] = theme.name
        if theme.name == self.theme:
            self.refresh_css()
            self.notify(f"Theme {theme.name} reloaded.", timeout=3)
