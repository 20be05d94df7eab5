"""The keys of a running record's JSON object, read as hostile input: which are required, their
types, and the keys of later Murmur releases that are read and kept but not acted on
(docs/files.md, "Running records"; docs/fleet.md, "The running record").

Which Murmur release each key follows:
- the nine keys every release writes (`session_id`, `url`, `pid`, `process_start`,
  `capsule_name`, `capsule_version`, `workdir`, `outlives_launcher`, `started_at`) — v0.2.0;
- `url: null` for a session with no door — v0.9.0 (a script capsule's record);
- `records_dir` — v0.7.0 onward (docs.rs `capsule_runtime::running::RecordScan`: a record
  without it is an older writer's), one of v0.11.0's ten required keys; a record without it
  is read all the same (`RECORDS_DIR`);
- `door_token` and `credentials` — first seen ≈v0.5.0;
- `formation_id`, `formation_lifeline`, `formation_launcher`, `spawned_by` — first seen ≈v0.5.0;
  `formation_member`, `formation_entry`, `unconfined` — v0.11.0. Murmur makes a record with a
  malformed `formation_id` or `formation_launcher` unreadable, and so does this module; the
  three v0.11.0 keys whose meaning Murmur's published pages do not give are kept only when
  they have the type those pages show, and dropped otherwise (KEPT_KEYS is the one place to
  change that reading).

No Textual, no Rich, no httpx.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui.core import ids
from tui.core.errors import RecordError, Where
from tui.core.running.address import door_host_port, shown_url

REQUIRED_TEXT = ("session_id", "process_start", "capsule_name", "capsule_version", "workdir",
                 "started_at")
RECORDS_DIR = "records_dir"  # required from v0.7.0, optional when read
MAX_CREDENTIALS = 64
FORMATION_ID = ids.FORMATION_ID
# Read, kept in `RunningRecord.kept`, written back as read, never acted on: the key and the
# JSON type it holds (bool, str, or "launcher" for `{pid, process_start}`).
KEPT_KEYS: dict[str, str] = {
    "formation_id": "formation id", "formation_member": "str", "formation_entry": "bool",
    "formation_lifeline": "bool", "formation_launcher": "launcher", "spawned_by": "str",
    "unconfined": "bool", "name": "str",  # `name`: murmur-tui's (tui/core/names.py)
}
STRICT_KEYS = frozenset({"formation_id", "formation_launcher"})  # malformed: unreadable
_SAFE_ID = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def safe_session_id(session_id: str) -> bool:
    return 0 < len(session_id) <= 128 and set(session_id) <= _SAFE_ID


def record_fields(value: object, where: Where | None = None) -> dict[str, Any]:
    """The keyword arguments of a RunningRecord read from a parsed file; RecordError naming
    the key when one is missing or of the wrong type. Keys no release writes are ignored, as
    serde ignores them."""
    if not isinstance(value, dict):
        raise RecordError(f"is {kind_of(value)}, not a JSON object", where=where)
    text = {key: typed(value, key, str, "a string", where) for key in REQUIRED_TEXT}
    pid = typed(value, "pid", int, "a whole number", where)
    if not 0 < pid < 2 ** 32:
        raise RecordError(f"`pid` is {pid!r}, not a process id", where=at(where, "pid"))
    outlives = typed(value, "outlives_launcher", bool, "true or false", where)
    if not safe_session_id(text["session_id"]):
        raise RecordError("`session_id` is not a session id (letters, digits, _ and -)",
                          where=at(where, "session_id"))
    return {
        **text, "workdir": Path(text["workdir"]), "pid": pid, "outlives_launcher": outlives,
        "url": _url(value, where), "door_token": _optional_text(value, "door_token", where),
        "credentials": _credentials(value.get("credentials"), where),
        "records_dir": _records_dir(value, where), "kept": _kept(value, where),
    }


def _url(value: dict[str, Any], where: Where | None) -> str | None:
    """`host:port`, or null for a session with no door (v0.9.0 onward)."""
    if "url" not in value:
        raise RecordError("has no `url`", where=at(where, "url"))
    url = value["url"]
    if url is None:
        return None
    if not isinstance(url, str):
        raise RecordError(f"`url` is {kind_of(url)}, expected a string (host:port) or null",
                          where=at(where, "url"))
    try:
        door_host_port(url)
    except ValueError as exc:
        raise RecordError(f"`url` {shown_url(url)} is not a door address: {exc}",
                          where=at(where, "url")) from None
    return url


def _optional_text(value: dict[str, Any], key: str, where: Where | None) -> str | None:
    item = value.get(key)
    if item is not None and not isinstance(item, str):
        raise RecordError(f"`{key}` is {kind_of(item)}, expected a string", where=at(where, key))
    return item


def _records_dir(value: dict[str, Any], where: Where | None) -> Path | None:
    folder = _optional_text(value, RECORDS_DIR, where)
    if folder is not None and (not folder or "\x00" in folder):
        raise RecordError("`records_dir` is not a folder", where=at(where, RECORDS_DIR))
    return Path(folder) if folder is not None else None


def _credentials(value: object, where: Where | None) -> dict[str, str]:
    """A record's `credentials`: an object of credential name to token (absent: none)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RecordError(f"`credentials` is {kind_of(value)}, expected an object of credential "
                          "names to tokens", where=at(where, "credentials"))
    if len(value) > MAX_CREDENTIALS:
        raise RecordError(f"`credentials` names {len(value)} credentials; a record holds at "
                          f"most {MAX_CREDENTIALS}", where=at(where, "credentials"))
    for name, token in value.items():
        if not isinstance(token, str):
            raise RecordError(f"`credentials` maps a name to {kind_of(token)}, expected a "
                              "token (a string)", where=at(where, "credentials"))
        if not name.isprintable():
            raise RecordError("`credentials` holds a name with a control character",
                              where=at(where, "credentials"))
    return dict(value)


def _kept(value: dict[str, Any], where: Where | None) -> dict[str, Any]:
    """The formation keys, `spawned_by` and `unconfined`, as read (KEPT_KEYS)."""
    kept: dict[str, Any] = {}
    for key, shape in KEPT_KEYS.items():
        if key not in value or value[key] is None:
            continue
        item = value[key]
        if _fits(item, shape):
            kept[key] = item
        elif key in STRICT_KEYS:
            expected = ("frm_ and 32 lowercase hex digits" if shape == "formation id" else
                        "an object {pid, process_start}")
            raise RecordError(f"`{key}` is not {expected}", where=at(where, key))
    return kept


def _fits(item: object, shape: str) -> bool:
    if shape == "bool":
        return isinstance(item, bool)
    if shape == "str":
        return isinstance(item, str) and len(item) <= 256 and item.isprintable()
    if shape == "formation id":
        return isinstance(item, str) and FORMATION_ID.fullmatch(item) is not None
    return (isinstance(item, dict) and set(item) == {"pid", "process_start"}
            and isinstance(item["pid"], int) and not isinstance(item["pid"], bool)
            and 0 < item["pid"] < 2 ** 32 and isinstance(item["process_start"], str)
            and len(item["process_start"]) <= 64)


def typed(value: dict[str, Any], key: str, kind: type, named: str, where: Where | None) -> Any:
    if key not in value:
        raise RecordError(f"has no `{key}`", where=at(where, key))
    item = value[key]
    if not isinstance(item, kind) or (kind is int and isinstance(item, bool)):
        raise RecordError(f"`{key}` is {kind_of(item)}, expected {named}", where=at(where, key))
    return item


def at(where: Where | None, key: str) -> Where | None:
    return Where(where.file, where.line, key) if where is not None else None


def kind_of(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, dict) else type(value).__name__
