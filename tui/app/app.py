"""`murmur-tui launch` and `attach`: the Textual app that supervises one session.

One class on `AppBase`, composed of plain parts that each keep their own state: the session
source (`sources`: built here, or elsewhere behind its door — `attach`), the dialog desk
(`desk`), the prompt queue (`prompt_queue`), `attention`, the event `delivery`, the key
pairs (`keys`). The app hands events to the parts and keys to the source. Its return code
is the launch's exit status: 0 when the task ended ok, 1 otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events
from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import ModalScreen, Screen
from textual.worker import Worker, WorkerState

from tui.app import palette
from tui.app.approver import ScreenApprover
from tui.app.attention import Attention, load_settings
from tui.app.bridge import CoalescingBridge, EventsArrived, ImmediateBridge
from tui.app.browser.host import AppBase
from tui.app.browser.requests import ResumeConversation
from tui.app.callee_screen import held_ctrl_c
from tui.app.delivery import Delivery
from tui.app.desk import TITLE, DialogDesk
from tui.app.gc_policy import GcPolicy
from tui.app.keys import CTRL_C_WINDOW, ESC_WINDOW, KeyPairs
from tui.app.models.status import SessionState
from tui.app.prompt_queue import PromptQueue
from tui.app.responder import ScreenResponder
from tui.app.screens.confirm import ConfirmScreen
from tui.app.screens.help import HelpScreen
from tui.app.screens.supervisor import SupervisorScreen
from tui.app.sources import LocalSource, SessionSource
from tui.core.cancel import CancelToken
from tui.core.events import vocabulary as ev
from tui.core.loop.launch import SessionResult
from tui.core.loop.session import Session

if TYPE_CHECKING:
    from tui.core.asking.questions import QuestionBoard
    from tui.core.door.serving import Serving


class SupervisorApp(AppBase[int]):
    TITLE = TITLE
    BINDINGS = [
        Binding("escape", "cancel_turn", "Cancel (Esc Esc)"),
        Binding("a", "answer", "Answer"),
        Binding("y", "copy_result", "Copy result"),
        Binding("b", "browse", "Browse"),
        Binding("f1", "help", "Help", key_display="F1"),
        Binding("q", "quit", "Quit"),  # out of the prompt; Ctrl+Q everywhere
        Binding("ctrl+q", "quit", "Quit", priority=True),
        # as in Claude Code and Codex: Ctrl+C cancels what runs, a second one quits
        Binding("ctrl+c", "interrupt", "Cancel / quit", show=False, priority=True),
        Binding("F", "fleet", "Fleet"),  # a session attached from the fleet screen
    ]

    def __init__(self, home: Path, theme: str | None = None,
                 bridge: CoalescingBridge | ImmediateBridge | None = None,
                 source: SessionSource | None = None) -> None:
        super().__init__(home, theme)
        self.bridge = bridge if bridge is not None else CoalescingBridge()
        self.source: SessionSource = source if source is not None else LocalSource()
        self.state = SessionState()
        self.attention_settings = load_settings(home)
        self.attention = Attention(self, self.attention_settings, present=self.present)
        self.desk = DialogDesk(self, self.attention, self._desk_changed)
        self.responder = ScreenResponder(self.desk)  # `request-input` questions: dialogs
        self.approver = ScreenApprover(self.desk)  # `launch --approve`: calls wait for a decision
        self.prompts = PromptQueue(self.source, self.notify,
                                   lambda index: self.supervisor.show_queue(index))
        self.supervisor = SupervisorScreen(self.state, self.prompts)
        self.keys = KeyPairs()
        self.delivery = Delivery(self._take)
        self._quitting = False
        self.gc_policy = GcPolicy(self.call_after_refresh)

    # -- the session, through its source --------------------------------------------------------
    @property
    def local(self) -> LocalSource | None:
        return self.source if isinstance(self.source, LocalSource) else None

    @property
    def session(self) -> Session | None:
        return self.local.session if self.local is not None else None

    @property
    def result(self) -> SessionResult | None:
        return self.local.result if self.local is not None else None

    @property
    def cancel(self) -> CancelToken:
        """The local session's cancel token (give it to the Session the app runs)."""
        assert self.local is not None, "a session running elsewhere is canceled by its door"
        return self.local.token

    @property
    def running(self) -> bool:
        return self.source.running

    def attach(self, session: Session) -> None:
        """The session to run (built by the command line, which reported bad input)."""
        assert self.local is not None
        self.local.attach(session)
        self.attention.attached(session.session_id, session.capsule.name)

    def serve(self, serving: Serving, board: QuestionBoard) -> None:
        """`launch --serve`: the session is served on its door (started by the command line).
        Questions are open on the screen and through the door at once — the first answer
        wins — and tasks sent through the door join the session as the prompt's do."""
        assert self.local is not None
        self.local.serving = serving
        self.responder.serve(board, self.desk.answered_elsewhere)
        self.sub_title = f"serving {serving.url}"
        session = serving.session  # headed by its name and id before its first task
        self.supervisor.heading.waiting(session.capsule.name, session.capsule.version,
                                        session.session_id)

    def end_serving(self) -> None:
        if self.local is not None:
            self.local.end_serving()

    # -- start --------------------------------------------------------------------------------
    def on_mount(self) -> None:
        self.themes.register()
        serving = self.local.serving if self.local is not None else None
        if serving is not None:
            self.notify(f"Serving {serving.url}", title="The door", timeout=8)
        for problem in self.attention_settings.problems:
            self.notify(problem, title="Notification setting", severity="warning", timeout=10)
        self.push_screen(self.supervisor)
        self.call_after_refresh(self.gc_policy.start)
        self.set_interval(1.0, self.gc_policy.tick, name="gc")
        self.bridge.start(self, self.delivery.deliver)
        self.run_worker(self.delivery.consume(), group="deliver", name="deliver",
                        exit_on_error=False)
        self.source.start(self)
        self.run_worker(self.themes.watch(), exit_on_error=False, group="themes",
                        name="theme-watcher")

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and self.screen is self.supervisor:
            self.supervisor.keys_to_prompt(event)  # before the key goes to the focus
        await super().on_event(event)

    async def on_events_arrived(self, message: EventsArrived) -> None:
        await self._take(message.events)

    async def _take(self, batch: list[ev.Event]) -> None:
        self.gc_policy.activity()
        await self.supervisor.apply(batch)
        self.attention.follow(batch)
        self.source.follow(batch)
        self.prompts.follow(batch)

    def on_unmount(self) -> None:
        """The screen is closing, however it closes: a running local session is canceled (its
        files stay complete), a remote one is let go, and no question is left waiting for an
        answer that cannot come."""
        self.source.leave()
        self.gc_policy.stop()
        self.attention.close()
        self.prompts.stopped = True
        if self.running and not self.state.sleeping:
            self.source.cancel()
        if not self.running:
            self.end_serving()
        self.desk.shut()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        local = self.local
        if event.worker.name != "session" or local is None:
            return
        self.refresh_bindings()  # Cancel comes and goes with the session
        if event.state == WorkerState.SUCCESS:
            if event.worker.result is None:  # a follow-up was refused before it started
                return
            local.ended(event.worker.result, None)
        elif event.state == WorkerState.ERROR:
            local.ended(None, event.worker.error)
            self.prompts.hold()
            self.notify(f"The session stopped: {event.worker.error}", severity="error",
                        timeout=30)
            self.attention.notify("failed", f"The session stopped: {event.worker.error}")
        else:
            return
        self.bridge.flush_now()
        self.desk.close("the session ended")
        if self._quitting:
            self.exit(self.return_status, return_code=self.return_status)
            return
        self.prompts.session_over(self.result.exit_status if self.result else None)

    @property
    def idle(self) -> bool:
        """No event waits to reach the screen (for tests and the benchmark)."""
        screen = self.supervisor
        return not self.bridge.pending and not self.delivery.waiting and \
            screen.transcript.drawn and screen.tools.drawn and screen.shell.drawn and \
            screen.faults.rows.drawn

    @property
    def return_status(self) -> int:
        status = self.result.exit_status if self.result else self.state.exit_status
        return 0 if status == "ok" else 1

    # -- what the parts ask of the screen -------------------------------------------------------
    def _desk_changed(self) -> None:
        self.state.questions = len(self.desk.questions)
        self.state.waiting_for_approval(self.desk.waiting_calls())
        self.refresh_bindings()
        self.supervisor.refresh_status()

    def run_session(self, work: Callable[[], SessionResult | None]) -> None:
        self.run_worker(work, thread=True, exit_on_error=False, group="session",
                        name="session")

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

    # -- control ------------------------------------------------------------------------------
    def action_cancel_turn(self) -> None:
        if not self.running:
            return
        if self.keys.second("escape", ESC_WINDOW):
            self.source.cancel()
            self.notify("Canceling the turn…", timeout=4)
        else:
            self.notify("Press Esc again to cancel the running turn.", timeout=ESC_WINDOW)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The footer and the palette offer only what applies now: no Cancel when nothing
        runs, no Answer without a question (False hides the key, and it does nothing)."""
        if action == "cancel_turn":
            return self.running and not self.state.sleeping
        if action == "answer":
            return bool(self.desk.questions)
        if action == "fleet":
            return self.source.elsewhere
        return True

    def action_answer(self) -> None:
        self.desk.answer()

    def action_interrupt(self) -> None:
        """Ctrl+C: with text selected, copies it; else the running task is canceled (its files
        stay complete), and a second Ctrl+C within CTRL_C_WINDOW seconds quits, without
        asking."""
        if held_ctrl_c(self, self.keys):  # over a callee's screen: its note, not a cancel
            return
        if self.screen.get_selected_text():
            if isinstance(self.screen, SupervisorScreen):
                self.screen.action_copy_text()
            else:
                self.copy_to_clipboard(self.screen.get_selected_text() or "")
            return
        if self.keys.second("ctrl+c", CTRL_C_WINDOW):
            self._quit_soon()
            self.desk.close("murmur-tui is quitting")
            if self.running:
                self.source.cancel()
                self.source.close_inbox()
                self.notify("Canceling the session, then quitting…", timeout=10)
            else:
                self.exit(self.return_status, return_code=self.return_status)
            return
        if self.running and not self.state.sleeping:
            self.source.cancel()
            self.notify("Canceling the task… (Ctrl+C again quits)", timeout=CTRL_C_WINDOW)
        else:
            self.notify("Press Ctrl+C again to quit.", timeout=CTRL_C_WINDOW)

    def _quit_soon(self) -> None:  # the app ends once the session has: nothing more goes to it
        self._quitting = True
        self.prompts.stopped = True

    async def action_quit(self) -> None:  # `q`, Ctrl+Q and the palette's Quit alike
        if self.source.elsewhere:  # leaving detaches: the session goes on, its door open
            self.exit(0, return_code=0)
            return
        if not self.running:
            self.exit(self.return_status, return_code=self.return_status)
            return
        if self.state.sleeping and not self.source.starting:
            self._quit_soon()  # nothing runs: the session ends as it is, then the app
            self.source.close_inbox()
            return

        def decided(yes: bool | None) -> None:
            if yes:
                self._quit_soon()
                self.source.cancel()
                self.desk.close("murmur-tui is quitting")
                self.notify("Canceling the session, then quitting…", timeout=10)

        self.push_screen(ConfirmScreen("A session is running. Cancel it and quit? Its files "
                                       "stay complete."), decided)

    def action_fleet(self) -> None:
        """To the fleet screen: this session goes on, and is one of its rows."""
        if self.source.leave_for_fleet():
            self.exit(0, return_code=0)

    def action_copy_result(self) -> None:
        text = self.state.result
        if text:
            self.copy_to_clipboard(text)
        self.notify(f"Copied the result ({len(text)} characters)." if text else
                    "There is no result yet; nothing was copied.", timeout=3 if text else 4)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_browse(self) -> None:
        """The conversation browser, over this screen (Esc comes back)."""
        self.open_browser()

    def on_resume_conversation(self, wanted: ResumeConversation) -> None:
        """`r` / `R` in the browser over this screen: the session still running ends (canceled,
        its files complete), then a follow-up session resumed from the chosen one takes a
        fresh supervisor screen. If it cannot start, a toast says why."""
        local = self.local
        if local is None:
            self.notify("Resuming from the browser works on sessions launched here; this "
                        "screen is attached to a session running elsewhere.", timeout=8)
            return
        from tui.core.errors import MurmurTuiError

        async def resume() -> None:
            while len(self.screen_stack) > 2 and self.screen is not self.supervisor:
                self.pop_screen()
            if self.running:
                self.notify("Ending the running session (canceled), then resuming…", timeout=6)
                local.cancel()
                self.desk.close("the session was ended to resume another")
                for worker in [w for w in self.workers if w.name == "session"]:
                    with contextlib.suppress(Exception):
                        await worker.wait()
            self.bridge.flush_now()
            for _ in range(500):  # the ended session's last events reach its own screen
                if self.idle:
                    break
                await asyncio.sleep(0.02)
            cancel = CancelToken()
            try:  # loading the capsule's components can take a while: off the screen's loop
                session = await asyncio.to_thread(local.resumed, wanted, self, cancel)
            except MurmurTuiError as exc:
                self.notify(exc.text, title="Cannot resume", severity="error", timeout=15)
                return
            self.state = SessionState()
            self.supervisor = SupervisorScreen(self.state, self.prompts)
            await self.switch_screen(self.supervisor)
            local.attach(session, cancel)
            self.attention.attached(session.session_id, session.capsule.name)
            local.run_worker()

        self.run_worker(resume(), group="resume", exclusive=True, exit_on_error=False)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        return palette.commands(self, super().get_system_commands(screen),
                                self.supervisor.action_jump, self.themes.names())

    def cancel_now(self) -> None:
        if self.running:
            self.source.cancel()
            self.notify("Canceling the turn…", timeout=4)
