"""What the fleet's parts (this machine's records: discovery.py; the other hosts: hosts.py)
need of the app that holds the rows — `FleetApp`, named here by shape so that they need not
import it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tui.app.fleet.launching import Launched
    from tui.app.fleet.links import Link, LinkState
    from tui.app.fleet.model import FleetSession
    from tui.core.events import vocabulary as ev
    from tui.core.hosts.status import HostStatus


class FleetOwner(Protocol):
    home: Path
    sessions: dict[str, FleetSession]
    links: dict[str, Link]
    hosts: dict[str, HostStatus]
    launched: list[Launched]
    told_problems: set[str]
    heartbeat: float  # the doors' heartbeat period (fleet.yaml `heartbeat_secs`)
    credential: str  # whose token each door is shown ("watcher" on the read-only link)

    def arrived(self, session_id: str, item: list[ev.Event] | LinkState) -> None: ...

    def changed(self) -> None: ...

    def notify(self, message: str, *, title: str = "", severity: Any = "information",
               timeout: float | None = None, markup: bool = True) -> None: ...
