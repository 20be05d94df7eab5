"""The supervisor screen's top line, apart from how it is drawn: the capsule, the model, the
session id and, while the session is served (`launch --serve`), the door's address — fitted
to the terminal's width so that the address and the session id show at 80 columns too.

What gives way when the line is too wide, in order: the wide separators, the model, then the
session id's middle (`…` and its last 12 characters stay: `--resume` takes its end)."""

from __future__ import annotations

from tui.core.events import vocabulary as ev

WIDE, TIGHT = "  ·  ", " · "
ID_END = 12  # characters of the session id kept when it is shortened


def header_line(started: ev.SessionStarted | None, served: str, width: int | None) -> str:
    """The line for a session that has `started` (None: not yet) and is `served` at an address
    (`serving http://…`, or "" when it is not served), in `width` columns (None: any)."""
    if started is None:
        name, model, session = "murmur-tui", "", ""
    else:
        name = f"{started.capsule_name} {started.capsule_version}"
        model, session = f"model {started.model}", started.session_id
    short_id = f"…{session[-ID_END:]}" if len(session) > ID_END + 1 else session
    tries = [(WIDE, model, session), (TIGHT, model, session), (TIGHT, "", session),
             (TIGHT, "", short_id)]
    line = ""
    for separator, with_model, with_id in tries:
        line = separator.join(part for part in (name, with_model, with_id, served) if part)
        if width is None or len(line) <= width:
            break
    return line
