"""`murmur-tui launch`: the Textual app that supervises one session.

The session runs in a thread worker and reports through the bridge; questions from tools come
through the screen responder and open the dialog. The app's return code is the launch's exit
status: 0 when the task ended ok, 1 otherwise.

The app is built in layers, each a module: `theming` (themes), `dialogs` (questions,
approvals, attention), `followups` (the prompt, the queue, follow-up sessions); this module
adds the session's run, the delivery of its events to the screen, and the keys.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from tui.app.bridge import CoalescingBridge, EventsArrived, ImmediateBridge
from tui.app.browser.requests import ResumeConversation
from tui.app.dialogs import TITLE
from tui.app.followups import QueueHost
from tui.app.gc_policy import GcPolicy
from tui.app.screens.confirm import ConfirmScreen
from tui.app.screens.help import HelpScreen
from tui.app.screens.supervisor import SupervisorScreen
from tui.app.state import SessionState
from tui.core.cancel import CancelToken
from tui.core.events import vocabulary as ev
from tui.core.loop.launch import SessionResult
from tui.core.loop.session import Session

if TYPE_CHECKING:
    from tui.core.asking.question import Question
    from tui.core.asking.questions import QuestionBoard
    from tui.core.door.serving import Serving

ESC_WINDOW = 1.5
CTRL_C_WINDOW = 2.0  # a second Ctrl+C within it quits


def second_press(last: float | None, now: float, window: float) -> bool:
    """Whether a press at `now` is the second of a pair: the first was within `window`."""
    return last is not None and 0.0 <= now - last <= window


class SupervisorApp(QueueHost):
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
        super().__init__(home, theme, bridge)
        self.state = SessionState()
        self.supervisor = SupervisorScreen(self.state, self.queue)
        # The key windows (Esc Esc, Ctrl+C twice) are timed on this clock: a test gives the
        # app a clock of its own, so that a slow machine never stretches a window it checks.
        self.clock: Callable[[], float] = time.monotonic
        self._last_escape: float | None = None
        self._last_interrupt: float | None = None
        self._batches: asyncio.Queue[list[ev.Event]] = asyncio.Queue()
        self._applying = False
        self.gc_policy = GcPolicy(self.call_after_refresh)
        self.serving: Serving | None = None  # `launch --serve`: the session's door

    # -- start --------------------------------------------------------------------------------
    def attach(self, session: Session) -> None:
        """The session to run (built by the command line, which reported bad input)."""
        self.session = session
        self.attention.capsule = session.capsule.name

    def serve(self, serving: Serving, board: QuestionBoard) -> None:
        """`launch --serve`: the session is served on its door (started by the command line).
        Questions are open on the screen and through the door at once — the first answer
        wins — and tasks sent through the door join the session as the prompt's do."""
        self.serving = serving
        self.responder.serve(board, self.question_answered_elsewhere)
        self.sub_title = f"serving {serving.url}"

    def question_answered_elsewhere(self, question: Question) -> None:
        """The door answered a question first: its dialog closes, and a note says so."""
        if question in self.questions:
            self.questions.remove(question)
        if self.dialog is not None and self.dialog.question is question:
            self.dialog.dismiss(None)
        self.notify(f"{question.request.tool_name}'s question was answered through the door.",
                    timeout=8)
        self._after_question()

    def end_serving(self) -> None:
        if self.serving is not None:
            self.serving.end()

    def on_mount(self) -> None:
        self._register_themes()
        if self.serving is not None:
            self.notify(f"Serving {self.serving.url}", title="The door", timeout=8)
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
        if not self.running:
            self.end_serving()
        for question in self.questions:
            if not question.future.done():
                question.future.set_exception(RuntimeError("murmur-tui closed"))
        self.questions.clear()
        self._close_approvals("murmur-tui closed")

    def _run_session(self) -> SessionResult | None:
        assert self.session is not None
        serving = self.serving
        ours = serving is not None and serving.session is self.session
        if ours and serving is not None and serving.waits and \
                not serving.first_task(self.cancel):  # stopped before any task came
            self.end_serving()
            return None
        try:
            return self.session.run()
        finally:
            if ours:
                self.end_serving()  # the served session has ended: its door closes

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
        screen = self.supervisor
        return not self.bridge.pending and self._batches.empty() and not self._applying and \
            screen.transcript.drawn and screen.tools.drawn and screen.shell.drawn and \
            screen.faults.rows.drawn

    @property
    def return_status(self) -> int:
        status = self.result.exit_status if self.result else self.state.exit_status
        return 0 if status == "ok" else 1

    # -- control ------------------------------------------------------------------------------
    def action_cancel_turn(self) -> None:
        if not self.running:
            return
        now = self.clock()
        if second_press(self._last_escape, now, ESC_WINDOW):
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
        now = self.clock()
        if second_press(self._last_interrupt, now, CTRL_C_WINDOW):
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
        from tui.core.loop.build import SessionSpec, build_session

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
                return build_session(SessionSpec(
                    capsule, options, (self.bridge,), self.responder, cancel,
                    approvals.gate(self.approver) if approvals is not None else None))

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
