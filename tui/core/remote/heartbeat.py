"""`heartbeat_secs` in `$MURMUR_HOME/tui/fleet.yaml`: the heartbeat period of the doors the
fleet watches (Murmur's and murmur-tui's doors write `:heartbeat` every 15 s).

    heartbeat_secs: 15   # the default

It sets both clocks that follow from it: a watcher drops a stream silent for two periods and
reconnects (tui/core/remote/watch.py), and a working session silent for three is *stalled?*
(tui/app/fleet/model.py). One number, not two, because a stall limit shorter than the doors'
real period would call every idle stretch between two heartbeats a stall. Only this key is read
here: the file's other keys belong to their readers (`notify:`, the hosts). A missing file or
key is the default; a bad value is named and the default kept — never a traceback.
"""

from __future__ import annotations

from pathlib import Path

from tui.core.remote.watch import HEARTBEAT_SECONDS

KEY = "heartbeat_secs"
LOWEST, HIGHEST = 0.05, 3600.0


def load_heartbeat(home: Path) -> tuple[float, tuple[str, ...]]:
    """The period in seconds, and what was wrong with the file (each said once, when the
    fleet opens)."""
    from tui.core.errors import YamlError
    from tui.core.manifest.located_yaml import read_private
    from tui.core.notify.settings import fleet_file

    file = fleet_file(home)
    try:
        data = read_private(file)  # it may hold tokens: a problem never quotes the file
    except FileNotFoundError:
        return HEARTBEAT_SECONDS, ()
    except (YamlError, OSError):  # the notifications' reader names what is wrong with it
        return HEARTBEAT_SECONDS, ()
    value = data.get(KEY) if isinstance(data, dict) else None
    if value is None:
        return HEARTBEAT_SECONDS, ()
    if isinstance(value, bool) or not isinstance(value, int | float) or \
            not LOWEST <= value <= HIGHEST:
        return HEARTBEAT_SECONDS, (f"{file}: {KEY}: expected a number of seconds from "
                                   f"{LOWEST:g} to {HIGHEST:g}; using {HEARTBEAT_SECONDS:g}",)
    return float(value), ()
