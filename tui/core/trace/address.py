"""Murmur's session addresses, resolved in one place for every command that names a session
(Murmur v0.11 CLI, spec §6.1; wording from `crates/murmur-cli/src/commands/trace.rs`).

| form | example | names |
|---|---|---|
| full id | `ses_019f01a940ce7761854e768ecbe3d399` | that session |
| suffix | `d399` | the one session whose id ends so (4+ characters, any case) |
| ordinal | `@1`, `@2` | newest first (ids are UUIDv7: they sort by creation time) |
| path | `workdir/ses_…/trace.jsonl` | the file or folder itself (trace commands only) |

Which form a text is, as Murmur reads it: `@…` an ordinal; a text holding `/` or ending in
`.jsonl` a path; else an id or a suffix. murmur-tui also took `trace WORKDIR` with a bare
folder name before, so a text that no session id ends with, and that names a file or folder
that is there, is that path.

Two sets of candidates: the trace commands take the `ses_*` folders of one workdir (`./workdir`
or `--workdir`, and its `.murmur/` as a `--workdir` run writes it) and refuse with E-TRC-002;
the live commands (`attach`, `cancel`, `stop`) take the running records under
`$MURMUR_HOME/running`, refuse the path form, count `@N` among the records whose process holds
its pid (Murmur's layers 1–2), and refuse with E-RUN-022.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from tui.core.errors import MurmurTuiError, SessionNotFound, TraceNotFound

if TYPE_CHECKING:
    from tui.core.running.records import RunningRecord

MIN_SUFFIX = 4
SHOWN_MATCHES = 10  # an ambiguous suffix lists this many of its sessions
TRACE_FILE = "trace.jsonl"
_SESSION_FOLDER = re.compile(r"ses_[0-9a-fA-F]{32}")
_FULL_ID = re.compile(r"ses_[0-9a-f]{32}")
Form = Literal["id", "suffix", "ordinal", "path"]


@dataclass(frozen=True)
class Address:
    text: str
    form: Form
    number: int = 0  # the N of `@N`


def parse(text: str) -> Address:
    """The form of an address, as Murmur tells them apart (above). An `@` that is not followed
    by a number from 1 up is still an ordinal: `pick` refuses it, saying so."""
    if text.startswith("@"):
        number = text[1:]
        ok = number.isascii() and number.isdigit() and int(number) >= 1
        return Address(text, "ordinal", int(number) if ok else 0)
    if "/" in text or text.endswith(".jsonl"):
        return Address(text, "path")
    return Address(text, "id" if _FULL_ID.fullmatch(text) else "suffix")


def matching(address: Address, ids: Sequence[str]) -> list[str]:
    """The ids (newest first) an id or a suffix names: exactly it, or every one ending so."""
    if address.form == "id":
        return [found for found in ids if found == address.text]
    tail = address.text.lower()
    return [found for found in ids if found.lower().endswith(tail)]


def pick(address: Address, ids: Sequence[str], among: str,
         fail: Callable[[str], MurmurTuiError]) -> str:
    """The one id of `ids` (newest first) `address` names, else `fail(why)` raised; `among`
    says where the ids were found ("./workdir", "the running records")."""
    shown = _shown(address.text)
    if address.form == "ordinal":
        if address.number < 1:
            raise fail(f"{shown} is not an ordinal — expected @1, @2, … (@1 is the newest)")
        if not ids:
            raise fail(f"no sessions in {among}")
        if address.number > len(ids):
            count = f"{len(ids)} session{'s' if len(ids) != 1 else ''}"
            raise fail(f"@{address.number} is out of range — {among} has {count}")
        return ids[address.number - 1]
    if address.text in ids:  # an id as it is, whatever its shape (a record another writer made)
        return address.text
    if address.form == "path":
        raise fail(f"{shown} is a path; a session is named here by its id, the last "
                   f"{MIN_SUFFIX} or more characters of it, or @N")
    if address.form == "suffix" and len(address.text) < MIN_SUFFIX:
        raise fail(f"{shown} is too short: give a session id, at least its last {MIN_SUFFIX} "
                   "characters, or @N")
    found = matching(address, ids)
    if not found:
        if address.form == "id":
            raise fail(f"session {address.text} not found in {among}")
        raise fail(f"no session found matching suffix {shown} in {among}")
    if len(found) > 1:
        listed = "\n".join(f"  {session}" for session in found[:SHOWN_MATCHES])
        more = f"\n  … and {len(found) - SHOWN_MATCHES} more" \
            if len(found) > SHOWN_MATCHES else ""
        raise fail(f"ambiguous: {shown} matches {len(found)} sessions — provide more "
                   f"characters\n{listed}{more}")
    return found[0]


def _shown(text: str) -> str:
    """An address as a message quotes it: printable, at most 80 characters."""
    from tui.core.text.printable import printable

    cut = printable(text[:80], keep_newlines=False)
    return f"'{cut}…'" if len(text) > 80 else f"'{cut}'"


# -- the trace commands: the session folders of one workdir -----------------------------------
def session_folders(workdir: Path) -> dict[str, Path]:
    """Every `ses_*` folder directly in `workdir` and in `workdir/.murmur`, by session id
    (a folder, whatever it holds: Murmur counts a session whose trace is not there yet)."""
    found: dict[str, Path] = {}
    for folder in (workdir / ".murmur", workdir):
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if _SESSION_FOLDER.fullmatch(entry.name) and entry.is_dir():
                found[entry.name] = entry
    return found


def trace_of(text: str | None, workdir: Path | None, cwd: Path, default: str = "@1") -> Path:
    """The trace file an address names for the trace commands: a path as `locate` reads it,
    else a session folder of `workdir` (default `./workdir`). No address means `default`."""
    from tui.core.trace.locate import anything_at, locate

    if text is None and workdir is None and default == "@1":
        return locate(None, cwd)  # `./workdir`'s newest session, said as before when none
    address = parse(text if text is not None else default)
    if address.form == "path":
        return locate(Path(address.text), cwd)
    folder = workdir if workdir is not None else cwd / "workdir"
    folders = session_folders(folder)
    ids = sorted(folders, reverse=True)

    def fail(why: str) -> TraceNotFound:  # the text names the folder, as Murmur's does
        return TraceNotFound(why, code="E-TRC-002")

    if address.form != "ordinal" and not matching(address, ids) and \
            anything_at(cwd / address.text):  # `trace WORKDIR`, as murmur-tui read it before
        return locate(cwd / address.text, cwd)
    return folders[pick(address, ids, str(folder), fail)] / TRACE_FILE


def sessions_in(workdir: Path) -> list[tuple[str, Path]]:
    """(session id, trace file) of every session folder in `workdir`, oldest first."""
    folders = session_folders(workdir)
    return [(session, folders[session] / TRACE_FILE) for session in sorted(folders)]




# -- the live commands: the running records ----------------------------------------------------
def live_record(home: Path, text: str) -> RunningRecord:
    """The running record `text` names; SessionNotFound (E-RUN-022) saying why when none (or
    several) does. `@N` counts only the records whose process holds its pid and started when the
    record says (Murmur's layers 1–2); an id or a suffix names any record, so that a session that
    has stopped is said to have stopped rather than not to exist."""
    from tui.core.running.liveness import process_state
    from tui.core.running.records import read_records, running_dir

    address = parse(text)
    records = sorted((found.record for found in read_records(home) if found.record is not None),
                     key=lambda record: record.session_id, reverse=True)
    if address.form == "ordinal":
        records = [record for record in records if process_state(record) is None]
    by_id = {record.session_id: record for record in records}
    among = f"the running records ({running_dir(home)})"

    def fail(why: str) -> SessionNotFound:
        return SessionNotFound(why, code="E-RUN-022")

    return by_id[pick(address, list(by_id), among, fail)]


def running_record(home: Path, text: str | None) -> RunningRecord:
    """The record `text` (default `@1`) names, its process confirmed (Murmur's layers 1–2):
    SessionNotFound with E-RUN-022 when it has stopped, E-RUN-024 when its start time cannot
    be read — what `cancel`, `stop` and `token` act on."""
    from tui.core.running.liveness import process_state

    record = live_record(home, text if text is not None else "@1")
    state = process_state(record)
    if state is not None and state.state == "gone":
        raise SessionNotFound(f"{record.session_id} has stopped: {state.reason}",
                              code="E-RUN-022")
    if state is not None:
        raise SessionNotFound(f"{record.session_id}: {state.reason}; nothing was sent",
                              code="E-RUN-024")
    return record


# -- a formation id: every running record of its members -------------------------------------
def is_formation(text: str) -> bool:
    """A formation id (`frm_` and 32 lowercase hex digits), which `stop` takes as well as a
    session address (spec §6.4)."""
    from tui.core.running.record_keys import FORMATION_ID

    return FORMATION_ID.fullmatch(text) is not None


def formation_records(home: Path, formation: str) -> list[RunningRecord]:
    """The running records naming `formation`: the entry first, then the other members newest
    first; SessionNotFound (E-RUN-022) naming where it looked when there is none."""
    from tui.core.running.records import read_records, running_dir

    members = sorted((found.record for found in read_records(home)
                      if found.record is not None and found.record.formation_id == formation),
                     key=lambda record: (record.kept.get("formation_entry") is True,
                                         record.session_id), reverse=True)
    if not members:
        raise SessionNotFound(f"formation {formation} not found: no running record in "
                              f"{running_dir(home)} names it", code="E-RUN-022")
    return members
