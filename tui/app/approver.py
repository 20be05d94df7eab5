"""The screen's Approver: a call waiting for approval becomes a dialog.

`decide` runs on the session's thread: it hands the request to the app (which rings the bell
and opens the dialog once no question dialog is showing) and waits once on its future, as a
question does (tui/core/asking/question.py) — until the person decides, the session is canceled
(a deny, through the cancel token's callback), or the app closes (a deny).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Protocol

from tui.core.asking.question import Asked, Unanswered
from tui.core.tools.approvals import ApprovalDecision, ApprovalRequest


class PendingApproval(Asked[ApprovalDecision]):
    """A call waiting for approval: the request, and the one decision that settles it."""

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request


class ApprovalDesk(Protocol):
    """The app side: called on the app's thread."""

    def approval_arrived(self, pending: PendingApproval) -> None: ...

    def approval_withdrawn(self, pending: PendingApproval) -> None: ...

    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any
                         ) -> Any: ...


class ScreenApprover:
    def __init__(self, desk: ApprovalDesk) -> None:
        self.desk = desk

    def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        pending = PendingApproval(request)
        try:
            self.desk.call_from_thread(self.desk.approval_arrived, pending)
        except RuntimeError:
            return ApprovalDecision("deny", "the screen is not running")
        outcome = pending.wait(cancel=request.cancel)
        if not isinstance(outcome, Unanswered):
            return outcome
        if outcome.why == "canceled":
            with contextlib.suppress(RuntimeError):  # the app has already gone
                self.desk.call_from_thread(self.desk.approval_withdrawn, pending)
            return ApprovalDecision("deny", "canceled by the user")
        return ApprovalDecision("deny", "murmur-tui closed before the call was approved")
