"""The supervisor screen's header line (docs/screen.md, "Header"): what it names — the capsule,
its version, the model, the session id and the session's name — fitted to its width, with the
door's address while the session is served.

The name is read again whenever `names.json` changes (one `stat` a second: `tick`), so a rename
in the fleet or elsewhere shows on an open screen, and the terminal's title follows it. A
served session waiting for its first task is headed by what its door already knows — its
name, id and capsule — rather than by `murmur-tui` alone."""

from __future__ import annotations

from textual.app import App
from textual.screen import Screen
from textual.widgets import Static

from tui.app.models.fitting import fit_header
from tui.app.naming import kept_name
from tui.core.events import vocabulary as ev
from tui.core.names import KeptName

Facts = tuple[str, str, str, str]  # capsule, version, model, session id


class Heading:
    def __init__(self, screen: Screen[None], header: Static) -> None:
        self.screen = screen  # its app, once it runs
        self.header = header
        self.facts: Facts | None = None
        self.name = ""  # the session's name (docs/fleet.md, "Names")
        self.door_closed = False  # a served session ended: its door closed with it
        self._kept: KeptName | None = None

    @property
    def app(self) -> App[object]:
        return self.screen.app

    def started(self, event: ev.SessionStarted) -> None:
        self.facts = (event.capsule_name, event.capsule_version, event.model, event.session_id)
        self._kept = None  # a follow-up is a session of its own
        self.fit()

    def waiting(self, capsule: str, version: str, session_id: str) -> None:
        """A served session before its first task (`launch --serve` with no task): its
        SessionStarted comes with that task, but its door already names it. Shown once the
        screen is (it may not run yet)."""
        if self.facts is None:
            self.facts = (capsule, version, "", session_id)

    def _current(self) -> str:
        if self.facts is None:
            return ""
        if self._kept is None:
            self._kept = kept_name(self.app, self.facts[3])
        return self._kept.current() or ""

    def tick(self) -> None:
        """A rename since the last look (names.json changed): the header and the title."""
        if self.facts is not None and self._current() != self.name:
            self.fit()

    def fit(self) -> None:
        """The header in the width it has: the session id always, and the door's address while
        the session is served (docs/screen.md)."""
        served = "" if self.door_closed else self.app.sub_title
        width = self.header.size.width or self.app.size.width - 2
        if self.facts is None:
            self.header.update(fit_header("murmur-tui", "", "", "", width, served))
            return
        name = self._current()
        if name != self.name:
            self.name = name
            attention = getattr(self.app, "attention", None)
            if attention is not None:
                attention.renamed(name)
        self.header.update(fit_header(*self.facts, width, served, session_name=name))
