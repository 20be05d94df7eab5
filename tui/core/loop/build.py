"""One build of a Session, for every way one is launched: `launch` on the screen, `launch
--headless`, the follow-up the screen starts when a prompt waits after a session ends, and `r` /
`R` in the browser. What differs between them is a frozen `SessionSpec`; nothing else in `tui/`
calls `Session(…)` (tests/unit/test_layers.py). It sits at the top of the loop, below both the
commands and the app that use it, so neither imports the other to build one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui.core import names
from tui.core.loop.launch import LaunchOptions
from tui.core.loop.session import Session
from tui.core.session_index import Resume

if TYPE_CHECKING:
    from tui.core.asking.request import InputResponder
    from tui.core.cancel import CancelToken
    from tui.core.events.stream import EventSink
    from tui.core.manifest.model import Capsule
    from tui.core.session_index import Entry
    from tui.core.tools.approvals import Approvals


@dataclass(frozen=True)
class SessionSpec:
    """What differs between two launches: the capsule and its options, where the events go,
    who answers a question and approves a call, and the cancel the caller holds."""

    capsule: Capsule
    options: LaunchOptions
    sinks: Sequence[EventSink] = ()
    responder: InputResponder | None = None
    cancel: CancelToken | None = None
    approver: Approvals | None = None


def build_session(spec: SessionSpec) -> Session:
    """The session `spec` describes (LaunchError, ContextInUse: it does not start), its name
    kept (`--name`, else the resumed session's: tui/core/names.py)."""
    session = Session(spec.capsule, spec.options, sinks=spec.sinks, responder=spec.responder,
                      cancel=spec.cancel, approver=spec.approver)
    resume = spec.options.resume
    names.settle(session.home, session.session_id, spec.options.name,
                 resume.entry.session_id if resume is not None else None)
    return session


def follow_up(previous: Session, entry: Entry, text: str, sinks: Sequence[EventSink],
              responder: InputResponder, cancel: CancelToken) -> SessionSpec:
    """The next session in `previous`'s conversation (`--resume` of it, full) with `text` as
    its task: the same capsule, home, `--workdir` and approvals."""
    paths = previous.paths  # a --workdir given at launch is the follow-up's too
    workdir = paths.accessible if paths.session != paths.accessible else None
    return SessionSpec(previous.capsule,
                       LaunchOptions(task=text, home=previous.home, workdir=workdir,
                                     resume=Resume(entry, "full")),
                       sinks, responder, cancel, previous.dispatch.approvals)
