"""How a session asks the human: `murmur:task/task.request-input` goes through a responder.

The TUI's responder shows a dialog; the headless responder reads `--answer` values, then
stdin; both wait the same way (`asking.responder.Responder`: one question, one future, one
wait). `ask` blocks the calling (session) thread. A responder that cannot get an answer raises
`NoAnswer`; a wait past `timeout_secs` raises `StopOnInputTimeout`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from tui.core.cancel import CancelToken


@dataclass(frozen=True)
class InputRequest:
    request_id: str
    prompt: str
    tool_name: str
    timeout_secs: float | None = None
    cancel: CancelToken | None = None  # set when the session is canceled meanwhile
    before_restart: bool = False  # asked before the session stopped and not answered then


class InputResponder(Protocol):
    def ask(self, request: InputRequest) -> str: ...
