"""What can go wrong with a component, importable without loading wasmtime: a session that
hosts no component never pays for it."""

from __future__ import annotations

from tui.core.errors import MurmurTuiError


class ComponentLoadError(MurmurTuiError):
    """The file is not a component wasmtime can compile; the message names it."""

    default_code = "E-COMPONENT"


class IncompatibleComponent(MurmurTuiError):
    """The component cannot be run in this role; the message says why and what to do."""

    default_code = "E-COMPONENT-VERSION"


class GuestFailure(MurmurTuiError):
    """The component trapped, ran out of time or memory, or could not start."""

    default_code = "E-COMPONENT-RUN"

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind  # deadline | memory | limit | trap | start | canceled
        self.reason = reason
