"""A session's name (`launch --name`, `R` in the fleet) as the screens show it: read from the
names the app's Murmur home keeps (tui/core/names.py); "" for a session with none."""

from __future__ import annotations

from tui.core import names
from tui.core.fs.paths import murmur_home


def session_name(app: object, session_id: str) -> str:
    """The name kept for `session_id` in `app`'s home (its `home`, else `$MURMUR_HOME`)."""
    home = getattr(app, "home", None)
    return names.name_of(home if home is not None else murmur_home(), session_id) or ""
