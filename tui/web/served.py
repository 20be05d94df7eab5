"""What a fleet process does differently when textual-serve started it for a browser tab
(docs/fleet.md, "In a browser"): which apps it opens in turn, whose token it presents, where
its stderr goes, and when its run is over. On a terminal: the plain fleet."""

from __future__ import annotations

import atexit
import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.app.app import SupervisorApp
    from tui.app.fleet.app import FleetApp


@dataclass(frozen=True)
class Viewer:
    """Who looks at the fleet: a terminal, or a browser tab by the full or read-only link."""

    fleet_app: type[FleetApp]
    supervisor_app: type[SupervisorApp]
    credential: str | None = None  # None: the operator's token
    served: bool = False

    def gone(self) -> bool:
        """The browser tab was closed: no further screen is opened."""
        if not self.served:
            return False
        from tui.web.driver import ended

        return ended()


def viewer(link: str | None, home: Path) -> Viewer:
    """The viewer for `link` (`tui.web.served_link()`). A served process's stderr goes to a
    private log under `$MURMUR_HOME/tui/web/` — its stdout is the browser's screen, and
    textual-serve would print its stderr on the server's terminal — and its end is told to the
    server when the process exits (the tab's page then says the session ended)."""
    if link is None:
        from tui.app.app import SupervisorApp
        from tui.app.fleet.app import FleetApp

        return Viewer(FleetApp, SupervisorApp)
    _stderr_to_log(home)
    from tui.web.driver import finish

    atexit.register(finish)  # however the run ends, the tab is told it ended
    if link == "watch":
        from tui.web.watching import WATCHER, WatchingFleetApp, WatchingSupervisorApp

        return Viewer(WatchingFleetApp, WatchingSupervisorApp, WATCHER, served=True)
    from tui.app.app import SupervisorApp
    from tui.app.fleet.app import FleetApp

    return Viewer(FleetApp, SupervisorApp, served=True)


def _stderr_to_log(home: Path) -> None:
    """fd 2 to a new private log; the log is removed at exit when nothing was written."""
    from tui.core.fs.private_files import create_private

    name = f"fleet-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    log = home / "tui" / "web" / name
    try:
        fd = create_private(log)
    except OSError:
        fd = os.open(os.devnull, os.O_WRONLY)
    else:
        atexit.register(_drop_if_empty, log)
    os.dup2(fd, 2)
    os.close(fd)


def _drop_if_empty(log: Path) -> None:
    with contextlib.suppress(OSError):
        if log.stat().st_size == 0:
            log.unlink()
