"""The dialog desk: questions from tools (`request-input`) and approvals (`launch --approve`)
waiting for the person, their dialogs (never two at once), the title while one waits, and the
attention they call for.

A plain object the supervisor app holds. The responder and the approver hand it what arrives
(on the app's thread); it pushes the dialogs on the app it is given, and calls `changed` when
what waits changes, so the app redraws what depends on it (the status bar, the footer's
Answer key). It keeps its own state: nothing else writes it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App

from tui.app.approver import PendingApproval
from tui.app.attention import Attention
from tui.app.screens.approve import ApproveScreen
from tui.app.screens.ask import AskScreen
from tui.core.asking.question import Question
from tui.core.tools.approvals import ApprovalDecision

TITLE = "murmur-tui"


class DialogDesk:
    def __init__(self, app: App[Any], attention: Attention, changed: Callable[[], None]
                 ) -> None:
        self.app = app
        self.attention = attention
        self.changed = changed
        self.questions: list[Question] = []
        self.dialog: AskScreen | None = None
        self.approvals_waiting: list[PendingApproval] = []
        self.approval_dialog: ApproveScreen | None = None
        self.closed = False  # the screen is closing: nothing more is asked

    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any
                         ) -> Any:
        """The responder's and the approver's way onto the app's thread."""
        return self.app.call_from_thread(callback, *args, **kwargs)

    # -- questions ----------------------------------------------------------------------------
    def question_arrived(self, question: Question) -> None:
        if self.closed:
            question.close("murmur-tui closed")
            return
        self.questions.append(question)
        self.attention.notify("question", f"{question.request.tool_name} asks: "
                              f"{question.request.prompt}")
        self.app.title = f"? {question.request.tool_name} asks — {TITLE}"
        if self.dialog is None:
            self._open_dialog()
        else:
            self.dialog.set_waiting(len(self.questions) - 1)
        self.changed()

    def question_withdrawn(self, question: Question) -> None:
        if question in self.questions:
            self.questions.remove(question)
        if self.dialog is not None and self.dialog.question is question:
            self.dialog.dismiss(None)
        self.app.notify(f"{question.request.tool_name}'s question was withdrawn (no answer in "
                        "time, or the turn was canceled).", severity="warning", timeout=8)
        self._settle()

    def answered_elsewhere(self, question: Question) -> None:
        """The door answered a question first: its dialog closes, and a note says so."""
        if question in self.questions:
            self.questions.remove(question)
        if self.dialog is not None and self.dialog.question is question:
            self.dialog.dismiss(None)
        self.app.notify(f"{question.request.tool_name}'s question was answered through the "
                        "door.", timeout=8)
        self._settle()

    def answer(self) -> None:
        """`a`: the oldest waiting question's dialog again."""
        if self.dialog is None and self.questions:
            self._open_dialog()
        elif not self.questions:
            self.app.notify("No question is waiting.", timeout=3)

    def _open_dialog(self) -> None:
        if not self.questions or self.approval_dialog is not None:  # never two dialogs
            return
        question = self.questions[0]
        self.dialog = AskScreen(question, waiting=len(self.questions) - 1)

        def answered(answer: str | None) -> None:
            self.dialog = None
            if answer is None or question.done:
                if question in self.questions and answer is None:
                    self.app.notify("The question is waiting: press a to answer it.",
                                    timeout=6)
                self._settle()
                return
            question.answer(answer)  # the door may have answered it in the meantime
            if question in self.questions:
                self.questions.remove(question)
            self._settle()
            if self.questions:
                self._open_dialog()

        self.app.push_screen(self.dialog, answered)

    def _settle(self) -> None:
        """Something was answered or went away: the title and the attention follow what
        still waits, and a waiting approval opens once no question dialog shows."""
        if not self.questions:
            self.attention.settled("question")
        if not self.approvals_waiting:
            self.attention.settled("approval")
        if not self.questions and not self.approvals_waiting:
            self.app.title = TITLE
        self.changed()
        if self.dialog is None:
            self.open_approval()

    def close(self, why: str) -> None:
        """Every question and approval waiting ends unanswered (the session ended, or the
        person quits)."""
        for question in list(self.questions):
            question.close(why)
        self.questions.clear()
        if self.dialog is not None:
            self.dialog.dismiss(None)
        self._close_approvals(why)
        self._settle()

    def shut(self) -> None:
        """The screen is closing: nothing more is asked, and nothing waits for an answer
        that cannot come."""
        self.closed = True
        for question in self.questions:
            question.close("murmur-tui closed")
        self.questions.clear()
        self._close_approvals("murmur-tui closed")

    # -- approvals ----------------------------------------------------------------------------
    def approval_arrived(self, pending: PendingApproval) -> None:
        if self.closed:
            pending.close("murmur-tui closed")
            return
        self.approvals_waiting.append(pending)
        self.attention.notify("approval", f"{pending.request.tool_name} waits for approval")
        self.app.title = f"? approve {pending.request.tool_name} — {TITLE}"
        self.open_approval()
        self.changed()

    def waiting_calls(self) -> tuple[tuple[str, str], ...]:
        """The calls waiting for approval, oldest first: (call id or tool, tool)."""
        return tuple((p.request.call_id or p.request.tool_name, p.request.tool_name)
                     for p in self.approvals_waiting)

    def approval_withdrawn(self, pending: PendingApproval) -> None:
        if pending in self.approvals_waiting:
            self.approvals_waiting.remove(pending)
        if self.approval_dialog is not None and self.approval_dialog.pending is pending:
            self.approval_dialog.dismiss(None)
        self._settle()

    def open_approval(self) -> None:
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
            if decision is not None:
                pending.answer(decision)
            self._settle()
            if self.questions and self.dialog is None:
                self._open_dialog()

        self.app.push_screen(self.approval_dialog, decided)

    def _close_approvals(self, why: str) -> None:
        for pending in self.approvals_waiting:
            pending.close(why)
        self.approvals_waiting.clear()
        if self.approval_dialog is not None and not self.closed:
            self.approval_dialog.dismiss(None)
