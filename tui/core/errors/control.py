"""Control flow: not failures but the way a deep call tells the code that decides what follows
(the person canceled, a question timed out, a guest must trap, a stream must be reconnected).
Their names say what to do, so an `except` reads as a decision."""

from __future__ import annotations

from tui.core.errors.base import MurmurTuiError


# -- control flow: not failures; each tells the code above what to do next -------------------
class ControlFlow(MurmurTuiError):
    """Unwinds to the code that decides what follows; never shown as a failure by itself."""


class StopOnCancel(ControlFlow):
    """The person canceled (seen in a turn, a driver call or a script): the task ends `canceled`."""

    default_code = "E-CANCELED"


class StopOnInputTimeout(ControlFlow):
    """A question got no answer in time: the task fails `input_timeout` (`turn` once known)."""

    default_code = "E-INPUT-TIMEOUT"

    def __init__(self, text: str, turn: int | None = None) -> None:
        super().__init__(text)
        self.turn = turn


class TrapGuest(ControlFlow):
    """Raised by a host import to stop the guest with a message (the guest traps)."""

    default_code = "E-COMPONENT-RUN"


class ReconnectWatch(ControlFlow):
    """A door's stream ended or broke: the watcher reconnects."""

    default_code = "E-DOOR"
