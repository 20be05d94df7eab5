"""The approval dialog: a shell command (its resolved binary and argv) or a tool call (the
tool and its input) waits until the person decides.

`o` once · `p` this command prefix for the session · `a` always for this capsule (the
command's program, or the tool; docs/security.md) · `d` deny, then a reason and Enter (Esc
leaves the reason). Keys pressed in the first half second after
it opens are ignored, so type-ahead meant for the main screen cannot decide by accident. The
dialog cannot be hidden: Esc Esc cancels the running turn (as on the main screen), which
denies the call.
"""

from __future__ import annotations

import json
import shlex
import time

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from tui.app.approver import PendingApproval
from tui.app.screens.fit import fit_question
from tui.core.tools.approvals import ApprovalDecision, ApprovalRequest, Choice

ARMING_SECONDS = 0.5
COMPACT_BELOW = 30  # rows: a shorter terminal gets the dialog's tighter spacing
CALL_ROWS = 20  # of the command or input, at most, on a tall terminal
_CHOICES: dict[str, Choice] = {"o": "once", "p": "prefix", "a": "always"}


class ApproveScreen(ModalScreen[ApprovalDecision | None]):
    CSS_PATH = "approve.tcss"
    AUTO_FOCUS = ""  # the reason field takes keys only once `d` shows it
    BINDINGS = [Binding("escape", "cancel_turn", "Cancel (Esc Esc): deny")]
    arming_seconds = ARMING_SECONDS

    def __init__(self, pending: PendingApproval) -> None:
        super().__init__()
        self.pending = pending
        self.opened: float | None = None  # on screen since (the guard waits for that)
        self.reason = Input(placeholder="why not (the model reads this)", id="reason")

    @property
    def armed(self) -> bool:
        opened = self.opened
        return opened is not None and time.monotonic() - opened >= self.arming_seconds

    def compose(self) -> ComposeResult:
        request = self.pending.request
        with Vertical():
            if request.kind == "shell":
                yield Static(f"Run this command? ({request.tool_name})", id="what",
                             markup=False)
                with VerticalScroll(id="call-scroll"):
                    yield Static(_shell_call(request), id="call", markup=False)
                these = "this prefix" if len(request.prefix) == 1 else "these prefixes"
                scope = f"{these} for the session: {request.prefix_text}"
            else:
                yield Static(f"Call this tool? {request.tool_name}", id="what", markup=False)
                with VerticalScroll(id="call-scroll"):
                    yield Static("input   " + json.dumps(dict(request.input),
                                                         ensure_ascii=False, indent=2),
                                 id="call", markup=False)
                scope = f"{request.tool_name} for the session"
            yield Static(f"o  once\np  {scope}\na  always for this capsule: "
                         f"{request.program_text}\nd  deny, with a reason", id="choices",
                         markup=False)
            yield self.reason
            yield Static("o · p · a · d (then a reason and Enter) · Esc Esc cancels the turn "
                         "(denies)", id="hint", markup=False)

    def on_mount(self) -> None:
        self.opened = time.monotonic()  # the guard runs from when the dialog is on screen

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.height < COMPACT_BELOW, "compact")
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """The call gets the rows the rest leaves (it scrolls beyond): the choices, the
        reason field and the hint always show."""
        fit_question(self, self.query_one("#call-scroll"), CALL_ROWS)

    def _refit(self) -> None:
        """Fit again: the reason field was shown or hidden."""
        self.call_after_refresh(self._fit)

    async def on_key(self, event: events.Key) -> None:
        if not self.armed:
            event.prevent_default()
            event.stop()
            return
        if self.reason.has_focus:
            if event.key == "escape":
                event.stop()
                self.reason.remove_class("shown")
                self.set_focus(None)
                self._refit()
            return
        if event.key in _CHOICES:
            event.prevent_default()
            event.stop()
            self.decide(ApprovalDecision(_CHOICES[event.key]))
        elif event.key == "d":
            event.prevent_default()
            event.stop()
            self.reason.add_class("shown")
            self.call_after_refresh(self.reason.focus)  # this key is not typed into it
            self._refit()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        if self.armed:
            self.decide(ApprovalDecision("deny", message.value.strip()))

    async def action_cancel_turn(self) -> None:
        """The app's Esc Esc: a modal screen hides the app's own bindings."""
        await self.app.run_action("cancel_turn")

    def decide(self, decision: ApprovalDecision) -> None:
        self.dismiss(decision)


def _shell_call(request: ApprovalRequest) -> str:
    """The command as it will run: an interpreter's script as written (not re-quoted for a
    shell), any other binary's arguments as a shell would split them back."""
    argv = request.argv
    if len(argv) == 3 and argv[1] == "-c":
        script = "\n        ".join(argv[2].splitlines())
        return f"binary  {request.target} ({argv[0]} -c)\nscript  {script}"
    return f"binary  {request.target}\nargv    {shlex.join(argv)}"
