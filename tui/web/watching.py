"""The read-only link's screens (`murmur-tui fleet --web`, docs/fleet.md "In a browser").

The fleet opened by the read-only link presents each session's `watcher` credential to its
door, so the door itself refuses what that credential does not reach — an answer, a task, a
cancel, a stop: `403 insufficient_scope`, said on the screen. A public door (no
`network.authentication`) would take them from anyone: the link does not send them there, and
does not open such a session (it has no watcher credential to attach with). What the fleet
does on this machine without asking any door — launching a capsule (`n`), resuming a dead
session (`r`), renaming one (`R`), and the conversation browser with its own resume — no door
can refuse, so this link does not offer it.
"""

from __future__ import annotations

from pathlib import Path

from tui.app.app import SupervisorApp
from tui.app.fleet import screen
from tui.app.fleet.app import FleetApp
from tui.app.fleet.screen import FleetScreen

WATCHER = "watcher"  # the credential the read-only link presents (docs/fleet.md, "Tokens")
LOCAL_ONLY = {"ask": ("launch", "rename"), "resume": ()}  # screen actions no door refuses
WRITES = ("answer", "task", "cancel", "stop")  # what a door with no token would take from anyone
PUBLIC = "its door is public (its capsule declares no network.authentication), so no " \
         "credential holds it to reading: the read-only link does not write to it."
NO_FILES = "This is the read-only link: it writes no file on the machine that serves it " \
           "(your browser can take a screenshot of the page)."
SAID = "This is the read-only link: it watches with the sessions' watcher credential and " \
       "does not launch, resume or rename sessions."


class WatchingFleetScreen(FleetScreen):
    CSS_PATH = str(Path(screen.__file__).with_name("fleet.tcss"))  # beside FleetScreen's module

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`n`, `r` and `R` are not offered (False: not in the footer, and they do nothing)."""
        local = LOCAL_ONLY.get(action)
        if local is not None and (not local or (parameters and parameters[0] in local)):
            return False
        return super().check_action(action, parameters)


class WatchingFleetApp(FleetApp):
    """The fleet with the sessions' `watcher` credential, and nothing local."""

    credential = WATCHER
    SUB_TITLE = "read-only"

    def __init__(self, *args: object, **options: object) -> None:
        super().__init__(*args, **options)  # type: ignore[arg-type]
        self.fleet = WatchingFleetScreen(self.fleet.sessions, self.fleet.roster,
                                         self.fleet.hosts)

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        """The palette's Screenshot would write a file on the serving machine."""
        self.notify(NO_FILES, severity="warning", timeout=8)

    def on_fleet_screen_act(self, act: FleetScreen.Act) -> None:
        """Runs before FleetApp's own handler (Textual calls each class's along the MRO):
        what this link refuses stops there (`prevent_default`)."""
        link = self.links.get(act.session.session_id) if act.session is not None else None
        if act.action in ("launch", "resume", "rename"):
            act.prevent_default()
            self.notify(SAID, severity="warning", timeout=8)
        elif act.action in WRITES and link is not None and link.token is None:
            act.prevent_default()
            self.notify(f"{link.session_id}: {PUBLIC}", severity="warning", timeout=10)


class WatchingSupervisorApp(SupervisorApp):
    """The supervisor screen of the read-only link: no conversation browser (its `r` would
    resume a session on this machine)."""

    SUB_TITLE = "read-only"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return False if action == "browse" else super().check_action(action, parameters)

    def action_browse(self) -> None:  # the palette calls it directly
        self.notify(SAID, severity="warning", timeout=8)

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        self.notify(NO_FILES, severity="warning", timeout=8)
