"""A session's name (`launch --name`, `R` in the fleet) as the screens show it: read from the
names the app's Murmur home keeps (tui/core/names.py), else — for a session attached over its
door, which may run on another machine — the name its door's card gives it; "" for a session
with none."""

from __future__ import annotations

from tui.core import names
from tui.core.fs.paths import murmur_home


def kept_name(app: object, session_id: str) -> names.KeptName:
    """The session's name as `app`'s home keeps it (its `home`, else `$MURMUR_HOME`), read
    again after a rename; the card's of the session `app` is attached to stands in while the
    home keeps none."""
    home = getattr(app, "home", None)
    card_name = None
    link = getattr(getattr(app, "source", None), "link", None)
    if link is not None and getattr(link, "session_id", None) == session_id:
        card_name = getattr(link, "card_name", None)
    return names.KeptName(home if home is not None else murmur_home(), session_id, card_name)


def session_name(app: object, session_id: str) -> str:
    """The session's name now (`kept_name`), "" for none."""
    return kept_name(app, session_id).current() or ""
