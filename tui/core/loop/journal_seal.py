"""Proof that murmur-tui wrote a journal line (docs/security.md, "The journal is evidence").

The journal lives in the session folder, which the session's own tools can write, so a resume
must not take a line's word for what happened. Each line murmur-tui writes carries its place
in the journal — `seq` (1, 2, …) and `prev`, the MAC of the line before it (empty for the
first) — and ends with `mac`: HMAC-SHA256 over the session id and the line's own bytes, keyed
by 32 random bytes minted for the session before its first line and kept 0600 in
`$MURMUR_HOME/tui/journal-keys/<session id>.key` (folder 0700), outside every workdir. Beside
the key, `<session id>.lines` holds how many lines murmur-tui wrote to that journal, so a
journal whose end was cut away, or whose middle lost lines, is seen to be (the MAC alone
cannot show that a line is missing).

A reader trusts a line only when its MAC verifies with that session's key and it follows the
last trusted line (the next `seq`, that line's MAC as `prev`). A line that does not verify (a
forged line, another session's, a line cut by a crash) is skipped; a verified line out of its
place (repeated or moved) breaks the chain: it and every line after it are skipped. The
journal is *whole* when the trusted lines reach the count murmur-tui wrote.

The count is written after the line is synced, without a sync of its own (a power cut may
leave it one short, never ahead: a short count only makes a cut harder to see, it never
makes a whole journal look cut)."""

from __future__ import annotations

import base64
import hmac
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.core.errors import FileRefused, JournalUnreadable, NotJson
from tui.core.fs.private_files import make_private_dirs
from tui.core.fs.safe_read import read_bounded
from tui.core.text.secrets import remember
from tui.core.text.strict_json import loads_line

KEY_BYTES = 32
_DOMAIN = b"murmur-tui journal 1\x00"  # what the MAC is of: never confused with another use
_MAC_HEX = 64
_SUFFIX = b',"mac":"'  # a sealed line ends with ,"mac":"<64 hex>"}
_TAIL = len(_SUFFIX) + _MAC_HEX + 2
_HEAD = re.compile(rb'\{"seq":([1-9][0-9]{0,15}),"prev":"([0-9a-f]{64}|)"[,}]')
_SESSION = re.compile(r"[A-Za-z0-9_-]{1,128}")
_RESERVED = ("seq", "prev", "mac")


def key_folder(home: Path) -> Path:
    return home / "tui" / "journal-keys"


class Seal:
    """One session's journal key and where its chain stands: the next line's `seq` and
    `prev`. A new session's key is minted with its first line (`line`)."""

    def __init__(self, home: Path, session_id: str, key: bytes | None = None,
                 written: int = 0) -> None:
        if _SESSION.fullmatch(session_id) is None:
            raise ValueError(f"{session_id!r} is not a session id")
        self.session_id = session_id
        self.folder = key_folder(home)
        self._key = key
        self.seq = 0  # the last line's (verify moves it along a journal that has lines)
        self.prev = ""  # the last line's MAC
        self.written = written  # what `<session>.lines` says (never lowered)
        self._domain = _DOMAIN + session_id.encode() + b"\x00"
        self._keyed: hmac.HMAC | None = None  # the key and the domain, fed once: each MAC
        if key is not None:                    # copies it (a third faster than one-shot)
            self._use(key)

    def _use(self, key: bytes) -> None:
        self._key = key
        self._keyed = hmac.new(key, self._domain, "sha256")
        _hide(key)

    @property
    def key_path(self) -> Path:
        return self.folder / f"{self.session_id}.key"

    @property
    def count_path(self) -> Path:
        return self.folder / f"{self.session_id}.lines"

    def mac(self, body: bytes) -> str:
        assert self._keyed is not None
        keyed = self._keyed.copy()
        keyed.update(body)
        return keyed.hexdigest()

    def line(self, value: dict[str, Any]) -> tuple[bytes, str]:
        """`value` as the next line (without its newline) and its MAC; `wrote` moves the
        chain on once the line is on disk. Raises OSError when the key cannot be made."""
        if self._key is None:
            self._use(self._mint())
        body = json.dumps({"seq": self.seq + 1, "prev": self.prev,
                           **{k: v for k, v in value.items() if k not in _RESERVED}},
                          ensure_ascii=False, separators=(",", ":")
                          ).encode("utf-8", "replace")
        mac = self.mac(body)
        return body[:-1] + _SUFFIX + mac.encode() + b'"}', mac

    def wrote(self, mac: str) -> None:
        """The line sealed with `mac` is synced: it is the chain's last, and counted."""
        self.seq += 1
        self.prev = mac
        if self.seq > self.written:
            fd = os.open(self.count_path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600)
            try:  # the count only grows: its text never gets shorter, nothing stale is left
                os.pwrite(fd, b"%d\n" % self.seq, 0)
            finally:
                os.close(fd)
            self.written = self.seq

    def opened(self, raw: bytes) -> tuple[int, str, bytes, str] | None:
        """(seq, prev, the line's JSON without its MAC, its MAC) when `raw` is a line sealed
        with this key for this session; None otherwise."""
        if self._keyed is None or raw[-_TAIL:-_TAIL + len(_SUFFIX)] != _SUFFIX or \
                not raw.endswith(b'"}'):
            return None
        body = raw[:-_TAIL] + b"}"
        head = _HEAD.match(body)
        if head is None:
            return None
        mac = self.mac(body)
        if not hmac.compare_digest(mac.encode(), raw[-_MAC_HEX - 2:-2]):
            return None
        return int(head.group(1)), head.group(2).decode(), body, mac

    def _mint(self) -> bytes:
        """A new key, on disk and synced before any line that needs it."""
        key = os.urandom(KEY_BYTES)
        make_private_dirs(self.folder)
        os.chmod(self.folder, 0o700)
        fd = os.open(self.key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, key)
            os.fsync(fd)
        finally:
            os.close(fd)
        folder = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
        return key


def _hide(key: bytes) -> None:
    """No output ever holds the key: it is written nowhere but its file, and the forms a tool
    would print it in (`xxd -p`, `base64`) are redacted wherever they turn up."""
    remember(key.hex())
    remember(base64.b64encode(key).decode())


def load(home: Path, session_id: str) -> Seal | None:
    """The seal of `session_id`'s journal as it was left: its key (None when there is none)
    and the count of lines written. Raises JournalUnreadable when the key is there but unusable."""
    try:
        seal = Seal(home, session_id)
    except ValueError:
        raise JournalUnreadable(f"{session_id!r} is not a session id") from None
    try:
        key = read_bounded(seal.key_path, KEY_BYTES + 1).data
    except FileRefused as why:
        if str(why) == "no such file":
            return None
        raise JournalUnreadable(f"its key {seal.key_path} cannot be read: {why}") from None
    if len(key) != KEY_BYTES:
        raise JournalUnreadable(f"its key {seal.key_path} is not {KEY_BYTES} bytes")
    return Seal(home, session_id, key, written=_count(seal.count_path))


def _count(path: Path) -> int:
    """How many lines murmur-tui wrote (0 when none was counted). Raises JournalUnreadable for a
    count that is not a number: then the journal's end cannot be told."""
    try:
        text = read_bounded(path, 32).data
    except FileRefused as why:
        if str(why) == "no such file":
            return 0
        raise JournalUnreadable(f"its line count {path} cannot be read: {why}") from None
    if not text.strip().isdigit():
        raise JournalUnreadable(f"its line count {path} is not a number")
    return int(text)


@dataclass
class Verified:
    """What a journal shows of itself: each trusted line's number and JSON (its MAC left out),
    in order, and whether they are all murmur-tui wrote (`whole`); `warning` says what was
    skipped, once, naming the file and the first line."""

    lines: list[tuple[int, bytes]] = field(default_factory=list)
    whole: bool = True
    warning: str | None = None


def verify(data: bytes, path: Path, seal: Seal) -> Verified:
    """The trusted lines of `data` (the journal at `path`); moves `seal`'s chain to the last
    of them, so a line written next follows it."""
    raws = data.split(b"\n")
    cut_at = len(raws) if raws[-1] else 0  # the last line, when no newline ends it
    found = Verified()
    first: tuple[int, str] | None = None  # the first line skipped, and why
    skipped, broken_at = 0, 0
    for number, raw in enumerate(raws, 1):
        if not raw or raw.isspace():
            continue
        if broken_at:
            skipped += 1
            continue
        opened = seal.opened(raw)
        if opened is None:
            if number == cut_at and _unfinished(raw):
                continue  # the line the crash cut: it never finished, nothing to warn of
            skipped += 1
            first = first or (number, f"it was not written by murmur-tui for session "
                                      f"{seal.session_id} (it does not verify)")
            continue
        seq, prev, body, mac = opened
        if seq != seal.seq + 1 or prev != seal.prev:
            skipped += 1
            broken_at = number
            first = first or (number, "it is a line murmur-tui wrote, out of its place "
                                      "(repeated or moved)")
            continue
        found.lines.append((number, body))
        seal.seq, seal.prev = seq, mac
    said: list[str] = []
    if first is not None:
        number, why = first
        which = f"line {number} and every line after it are" if broken_at == number else \
            f"line {number} is"
        others = f", {skipped} lines skipped in all" if skipped > 1 else ""
        said.append(f"{which} not used: {why}{others}")
    if seal.seq < seal.written:
        found.whole = False
        said.append(f"murmur-tui wrote {seal.written} lines to it and only {seal.seq} are "
                    "there in order, so a call it does not show finished may have run: none is "
                    "run again unless its replay is safe, and no answer it holds is delivered")
    found.warning = f"{path}: " + "; ".join(said) if said else None
    return found


def _unfinished(raw: bytes) -> bool:
    """A line that is no whole JSON value: what a crash leaves of a line being written."""
    try:
        loads_line(raw)
    except NotJson:
        return True
    return False
