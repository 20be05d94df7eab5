"""Session names (`launch --name`, `R` in the fleet): a person's word for a session, shown
wherever its id is (docs/fleet.md, "Names").

A name is kept in `$MURMUR_HOME/tui/names.json` (0600), one object `{session_id: name}`, so it
outlives the session's process: `ps`, the fleet and the browser read it for a session that
runs, ended or was renamed since, and a resumed session takes the name of the one it goes on
from. The running record also carries it (`name`), for a reader on another machine (`ps
--json` there). The file is read as hostile input (bounded, no link followed, strict JSON);
a name in it that would not be accepted from the command line is not shown.

No Textual, no Rich.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Mapping
from pathlib import Path

from tui.core.errors import FileRefused, NameRefused, NotJson
from tui.core.fs.private_files import FILE_MODE, make_private_dirs
from tui.core.fs.safe_read import read_bounded
from tui.core.running.record_keys import safe_session_id
from tui.core.text.strict_json import loads_line

NAMES = Path("tui") / "names.json"
MAX_NAME = 64  # characters
MAX_NAMES = 10_000  # the oldest sessions' names go first past this
MAX_FILE = 4 << 20
RECORD_KEY = "name"


def checked(name: str) -> str:
    """`name` as a session's name — printable characters only (no control character, no
    escape sequence, no line break, no bidirectional override), 1 to 64 of them, not
    starting or ending with a space — or NameRefused saying what is wrong."""
    if not name.strip():
        raise NameRefused("a session's name cannot be empty")
    if len(name) > MAX_NAME:
        raise NameRefused(f"a session's name is at most {MAX_NAME} characters; this one "
                          f"has {len(name)}")
    bad = next((char for char in name if not char.isprintable()), None)
    if bad is not None:
        raise NameRefused(f"a session's name holds only printable characters; this one holds "
                          f"U+{ord(bad):04X}")
    if name != name.strip():
        raise NameRefused("a session's name cannot start or end with a space")
    return name


def valid(name: object) -> str | None:
    """`name` when it is a name `checked` accepts, else None (for what is read from files)."""
    if not isinstance(name, str):
        return None
    try:
        return checked(name)
    except NameRefused:
        return None


def names_path(home: Path) -> Path:
    return home / NAMES


def read(home: Path) -> dict[str, str]:
    """Every kept name by session id; a missing, unreadable or malformed file is none."""
    try:
        data = read_bounded(names_path(home), MAX_FILE).data
    except (FileRefused, OSError):
        return {}
    if not data.strip():
        return {}
    try:
        value = loads_line(data)
    except NotJson:
        return {}
    if not isinstance(value, dict):
        return {}
    kept: dict[str, str] = {}
    for session_id, name in value.items():
        shown = valid(name)
        if shown is not None and isinstance(session_id, str) and safe_session_id(session_id):
            kept[session_id] = shown
    return kept


def name_of(home: Path, session_id: str, record_kept: Mapping[str, object] | None = None,
            known: Mapping[str, str] | None = None) -> str | None:
    """The session's name: the kept one (a rename wins), else its running record's."""
    names = read(home) if known is None else known
    if session_id in names:
        return names[session_id]
    return valid((record_kept or {}).get(RECORD_KEY))


def give(home: Path, session_id: str, name: str) -> None:
    """Keep `name` (checked: NameRefused) for `session_id`, under a lock so two writers never
    lose each other's names; written beside itself and renamed into place (OSError: it was
    not written)."""
    name = checked(name)
    path = names_path(home)
    make_private_dirs(path.parent)
    lock_fd = os.open(path.with_name("names.lock"),
                      os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, FILE_MODE)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        names = read(home)
        names[session_id] = name
        if len(names) > MAX_NAMES:  # ids are time-ordered: the oldest sort first
            names = dict(sorted(names.items())[-MAX_NAMES:])
        staging = path.with_name(f"names.json.writing-{os.getpid()}")
        fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                     | os.O_CLOEXEC, FILE_MODE)
        try:
            os.fchmod(fd, FILE_MODE)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(names, handle, ensure_ascii=False, indent=1, sort_keys=True)
                handle.write("\n")
            os.replace(staging, path)
        except BaseException:
            with contextlib.suppress(OSError):
                staging.unlink()
            raise
    finally:
        os.close(lock_fd)


def settle(home: Path, session_id: str, given: str | None, resumed_from: str | None
           ) -> str | None:
    """A starting session's name: `given` (`--name`), else the name of the session it
    resumes; kept for it now. A name that cannot be kept is still the session's (shown)."""
    name = given if given is not None else (
        name_of(home, resumed_from) if resumed_from is not None else None)
    if name is not None:
        with contextlib.suppress(OSError):
            give(home, session_id, name)
    return name


def record_keys(home: Path, session_id: str) -> dict[str, str]:
    """The running record's `name` key for a session that has a name (none otherwise)."""
    name = name_of(home, session_id)
    return {RECORD_KEY: name} if name is not None else {}


class KeptName:
    """One session's name as `names.json` says it now, read again only when the file changed
    (its inode, size or modification time): cheap enough to ask on every card the door
    serves or every tick of a screen, so a rename anywhere reaches them. `given` stands in
    while the file has no name for the session (a name that could not be written)."""

    def __init__(self, home: Path, session_id: str, given: str | None = None) -> None:
        self.home, self.session_id, self.given = home, session_id, valid(given)
        self._seen: tuple[int, int, int] | bool | None = False  # False: never read
        self._name: str | None = None

    def current(self) -> str | None:
        try:
            stat = os.stat(names_path(self.home))
            seen: tuple[int, int, int] | None = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        except OSError:
            seen = None
        if seen != self._seen:
            self._seen = seen
            self._name = read(self.home).get(self.session_id) if seen is not None else None
        return self._name if self._name is not None else self.given
