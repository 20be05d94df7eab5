"""The supervisor's dialogs and what draws the person's attention: questions from tools
(`request-input`), approvals (`launch --approve`), never two dialogs at once, the title while
one waits, and notifications when a task ends while the person looks elsewhere."""

from __future__ import annotations

from pathlib import Path

from textual.screen import ModalScreen

from tui.app.approver import PendingApproval, ScreenApprover
from tui.app.attention import Attention, load_settings
from tui.app.responder import ScreenResponder
from tui.app.screens.approve import ApproveScreen
from tui.app.screens.ask import AskScreen
from tui.app.screens.supervisor import SupervisorScreen
from tui.app.state import SessionState
from tui.app.theming import ThemeHost
from tui.core.asking.question import Question
from tui.core.events import vocabulary as ev
from tui.core.tools.approvals import ApprovalDecision

TITLE = "murmur-tui"


class DialogHost(ThemeHost):
    state: SessionState  # the app's, set by SupervisorApp
    supervisor: SupervisorScreen

    def __init__(self, home: Path, theme: str | None = None) -> None:
        super().__init__(home, theme)
        self.responder = ScreenResponder(self)
        self.questions: list[Question] = []
        self.dialog: AskScreen | None = None
        self.approver = ScreenApprover(self)  # `launch --approve`: calls wait for a decision
        self.approvals_waiting: list[PendingApproval] = []
        self.approval_dialog: ApproveScreen | None = None
        self.attention_settings = load_settings(home)
        self.attention = Attention(self, self.attention_settings.mode, present=self.present)
        self._closed = False  # the screen is closing: nothing more is asked

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
            question.answer(answer)  # the door may have answered it in the meantime
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

        def decided(decision: ApprovalDecision | None) -> None:
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
