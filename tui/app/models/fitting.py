"""One line of parts fitted to a width: the header and the status bar (no Textual here).

A line that does not fit first draws its parts closer together; then it leaves out whole parts,
the least important first; what is left is never cut inside a word — a part too long even on
its own ends at a word with `…`. The rules, per line, are in docs/screen.md ("Small
terminals")."""

from __future__ import annotations

from collections.abc import Sequence

WIDE, NARROW = "  ·  ", " · "
MIN_SUFFIX = 4  # Murmur takes a session by the last 4 or more characters of its id
SHORT_SUFFIX = 9  # what the short form keeps (as the fleet shows an id)


def cut_at_word(text: str, width: int) -> str:
    """`text` in `width` columns: whole, or its first words and `…` (a single word longer
    than the width is the one thing cut inside, as nothing else would show)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:max(0, width)]
    words = text.split(" ")
    kept = ""
    for word in words:
        candidate = f"{kept} {word}" if kept else word
        if len(candidate) + 1 > width:
            break
        kept = candidate
    return (kept.rstrip(" ·,:;") or text[:width - 1]) + "…"


def fit_parts(parts: Sequence[str], width: int | None, keep: int = 1) -> str:
    """`parts` in order, in `width` columns: apart, closer, then the rightmost parts left out
    one by one (the first `keep` always stay); None: no limit."""
    if not parts:
        return ""
    wide = WIDE.join(parts)
    if width is None or len(wide) <= width:
        return wide
    for count in range(len(parts), max(1, keep) - 1, -1):
        line = NARROW.join(parts[:count])
        if len(line) <= width:
            return line
    return cut_at_word(NARROW.join(parts[:max(1, keep)]), width)


def short_id(session_id: str) -> str:
    """`ses_…4d28f58b`: the id's end, which `attach`, `ps` and `trace` take as it is."""
    if len(session_id) <= 4 + 1 + SHORT_SUFFIX:
        return session_id
    return f"{session_id[:4]}…{session_id[-SHORT_SUFFIX:]}"


def fit_header(name: str, version: str, model: str, session_id: str,
               width: int | None, served: str = "", session_name: str = "") -> str:
    """The session's header: its capsule, model and id, and the door's address while the
    session is served (`serving http://…`). The id is what a person needs to come back to the
    session (`attach`, `trace`, `--resume`) and the address is how others reach it: both stay
    — the id shortened to its end when the line is tight — and the model, then the capsule's
    version, go first. A session with a name (`launch --name`) is headed by it, the id
    shortened after it, the capsule and model after those (docs/fleet.md, "Names")."""
    if session_name:
        return _named_header(session_name, name, version, model, session_id, width, served)
    capsule = f"{name} {version}".strip()
    model_part = f"model {model}" if model else ""
    short = short_id(session_id)
    candidates = [
        [capsule, model_part, session_id],
        [capsule, model_part, short],
        [capsule, short],
        [name, short],
        [short],
    ]
    for candidate in candidates:
        parts = [part for part in (*candidate, served) if part]
        for separator in (WIDE, NARROW):
            line = separator.join(parts)
            if width is None or len(line) <= width:
                return line
    last = NARROW.join(part for part in (short, served) if part)
    return cut_at_word(last, width) if width is not None else last


def _named_header(session_name: str, name: str, version: str, model: str, session_id: str,
                  width: int | None, served: str) -> str:
    """The name, the shortened id, then the capsule, its model and the door while they fit;
    a name too long for the line ends at a word, the id still after it."""
    short = short_id(session_id)
    capsule = f"{name} {version}".strip()
    model_part = f"model {model}" if model else ""
    candidates = [
        [session_name, short, capsule, model_part],
        [session_name, short, capsule],
        [session_name, short, name],
        [session_name, short],
    ]
    for candidate in candidates:
        parts = [part for part in (*candidate, served) if part]
        for separator in (WIDE, NARROW):
            line = separator.join(parts)
            if width is None or len(line) <= width:
                return line
    tail = NARROW.join(part for part in (short, served) if part)
    if width is None:  # pragma: no cover - a line with no width always fits above
        return NARROW.join((session_name, tail))
    room = width - len(NARROW) - len(tail)
    if room < 2:
        return cut_at_word(tail, width)
    return f"{cut_at_word(session_name, room)}{NARROW}{tail}"
