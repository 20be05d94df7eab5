"""What a resumed session takes over from the one it resumes (docs/tools.md, "Durable
questions"): the turn and call that session died in, searched down the chain of sessions it
resumed in turn, unless the record holds that turn whole or a later resume took it over.

A search of the session index and of journals on disk, run once as a session is built; the
session keeps only its answer (`Found`) and the notes it says at start (`W-RESUME`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tui.core import session_index
from tui.core.loop import rebuild
from tui.core.loop.journal import OpenTurn
from tui.core.loop.journal_read import Found, holds_turn, read_journal
from tui.core.record.reader import RecordReader

CHAIN_LIMIT = 16  # sessions searched down a resume chain (a loop in the index stops sooner)


@dataclass
class Inherited:
    """What the search found, and what the session says of it at start (`W-RESUME`)."""

    found: Found = field(default_factory=Found)
    notes: list[str] = field(default_factory=list)


def journaled(resume: session_index.Resume | None, home: Path, reader: RecordReader,
              record_path: Path | None) -> Inherited:
    """The turn and call the resumed session died in (it wrote no end), from its journal;
    when it journaled nothing (it died as it started), the one of the session it resumed
    in turn. Nothing when the record holds that turn whole, or when a later resume took it
    over (`W-RESUME` at start says which session has it), or the journal cannot be read."""
    from tui.core.shell.background import session_folder

    result = Inherited()
    entry = resume.entry if resume is not None else None
    known = session_index.entries(home) if entry is not None else []
    by_id = {e.session_id: e for e in known}
    seen: set[str] = set()
    while entry is not None and entry.ended_ms is None and entry.session_id not in seen \
            and len(seen) < CHAIN_LIMIT:
        seen.add(entry.session_id)
        found = read_journal(session_folder(Path(entry.workdir), entry.session_id),
                             entry.session_id, home)
        if found.problem is not None:
            result.notes.append(f"the turn session {entry.session_id} stopped in is not "
                                f"rebuilt: {found.problem}")
            return result
        if found.warning is not None:  # what was skipped; the rest is used
            result.notes.append(found.warning)
        if not found.empty:
            result.found = _not_taken(found, entry.session_id, known, home, reader,
                                      record_path, result.notes)
            return result
        entry = by_id.get(entry.resumed_from) if entry.resumed_from else None
    return result


def _not_taken(found: Found, session_id: str, known: list[session_index.Entry], home: Path,
               reader: RecordReader, record_path: Path | None, notes: list[str]) -> Found:
    """`found`, unless the record holds its turn whole or a later session took it over."""
    turn = found.turn
    if turn is None:
        return found
    if record_path is not None and rebuild.whole_in(turn, reader.messages(record_path)):
        return Found()  # it ended whole: nothing was running
    taken = _taken_over(turn, session_id, known, home)
    if taken is None:
        return found
    taker, doubt = taken
    took = "took over" if not doubt else f"may have taken over ({doubt})"
    notes.append(f"session {session_id} was resumed before, and {taker} {took} the turn it "
                 f"stopped in: that turn is not rebuilt again (resume {taker} to go on from it)")
    return Found()


def _taken_over(turn: OpenTurn, session_id: str, known: list[session_index.Entry], home: Path
                ) -> tuple[str, str] | None:
    """The later session that resumed `session_id`, or one resumed from those in turn, and
    journaled its open turn, if one did — or whose journal cannot show it did not (then: why)."""
    from tui.core.shell.background import session_folder

    message_id = str(turn.message["id"])
    roots, later = {session_id}, True
    while later:  # every session resumed from session_id, however far down
        found = {e.session_id for e in known if e.resumed_from in roots} - roots
        later = bool(found)
        roots |= found
    for entry in known:
        if entry.session_id == session_id or entry.session_id not in roots:
            continue
        held = holds_turn(session_folder(Path(entry.workdir), entry.session_id),
                          entry.session_id, home, message_id)
        if held is not None:
            return entry.session_id, held
    return None
