"""The screen's Approver: a call waiting for approval becomes a dialog.

`decide` runs on the session's thread: it hands the request to the app (which rings the bell
and opens the dialog once no question dialog is showing) and waits on a Future — until the
person decides, the session is canceled (a deny), or the app closes (a deny).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, Protocol

from tui.core.tools.approvals import ApprovalDecision, ApprovalRequest


@dataclass(eq=False)
class PendingApproval:
    request: ApprovalRequest
    future: Future[ApprovalDecision] = field(default_factory=Future)


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
        while True:
            try:
                return pending.future.result(timeout=0.1)
            except FutureTimeout:
                pass
            except Exception:  # the app closed the dialog (it is quitting)
                return ApprovalDecision("deny", "murmur-tui closed before the call was approved")
            if request.cancel is not None and request.cancel.is_set():
                with contextlib.suppress(RuntimeError):  # the app has already gone
                    self.desk.call_from_thread(self.desk.approval_withdrawn, pending)
                return ApprovalDecision("deny", "canceled by the user")
