"""A session's name (`launch --name`, `R` in the fleet) as the screens show it: read from the
names the app's Murmur home keeps (tui/core/names.py), else — for a session attached over its
door, which may run on another machine — the name its door's card gives it; "" for a session
with none."""

from __future__ import annotations

from tui.core import names
from tui.core.fs.paths import murmur_home


def session_name(app: object, session_id: str) -> str:
    """The name kept for `session_id` in `app`'s home (its `home`, else `$MURMUR_HOME`), else
    the card's of the session `app` is attached to."""
    home = getattr(app, "home", None)
    kept = names.name_of(home if home is not None else murmur_home(), session_id)
    if kept is not None:
        return kept
    link = getattr(getattr(app, "source", None), "link", None)
    if link is not None and getattr(link, "session_id", None) == session_id:
        return names.valid(getattr(link, "card_name", None)) or ""
    return ""
