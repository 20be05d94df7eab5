"""Names in the fleet (docs/fleet.md, "Names"): each row takes its session's name from the
names this machine keeps (a rename wins), else its door's card (read when the fleet links to
the door: a session on another machine has no name here), else its running record, on every
read of the records; `R` gives the highlighted session a new one, kept at once — on this
machine: a session's name on another machine stays as it is there."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tui.app.fleet.model import FleetSession
from tui.core import names
from tui.core.errors import NameRefused
from tui.core.running.records import RunningRecord
from tui.core.text.printable import printable


def called(session: FleetSession) -> str:
    """What a note or a hint calls the session beside its id: its name, else its capsule."""
    return printable(session.name) or printable(session.capsule)


def take_names(home: Path, sessions: Mapping[str, FleetSession],
               records: list[RunningRecord], links: Mapping[str, object] = {}) -> bool:
    """Each listed session's name as the kept names, the cards its `links` read and the
    records say now; True when a row's name changed (the list is drawn again)."""
    kept = dict(names.read(home))
    for session_id, link in links.items():
        card_name = names.valid(getattr(link, "card_name", None))
        if card_name is not None and session_id not in kept:
            kept[session_id] = card_name
    changed = False
    for record in records:
        session = sessions.get(record.session_id)
        if session is None:
            continue
        name = names.name_of(home, record.session_id, record.kept, kept) or ""
        if name != session.name:
            session.name, changed = name, True
    return changed


def rename(home: Path, session: FleetSession, text: str) -> str:
    """Keep `text` as the session's name and show it at once: what to say — the new name,
    or why it was refused (nothing changes then)."""
    try:
        names.give(home, session.session_id, text)
    except NameRefused as exc:
        return f"Not renamed: {exc.text}."
    except OSError as exc:
        return f"Not renamed: {names.names_path(home)} could not be written " \
               f"({exc.strerror or exc})."
    session.name = text
    return f"{session.session_id} is now named {text}."
