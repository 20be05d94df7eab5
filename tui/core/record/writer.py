"""The durable conversation record's writer (spec §3).

`$MURMUR_HOME/conversations/<record>/<context-id>/conversation.jsonl` holds one message per
line, append-only. The writer creates the directory chain (mode 0700) on its first append only
and never writes an id twice; every line passes through the one redaction (`secrets.py`). Each
line goes out in a single `write` to an `O_APPEND` file, so a crash mid-append leaves at most
one partial last line — which every reader skips, and which the next writer closes off with a
newline before appending.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from tui.core.chat import Message, compact_json
from tui.core.fs.private_files import open_append
from tui.core.text.secrets import redact
from tui.core.text.segments import segment_problem

RECORD_FILE = "conversation.jsonl"


def conversations_root(home: Path) -> Path:
    return home / "conversations"


def record_path(home: Path, record: str, context_id: str) -> Path | None:
    """The record file, or None when either name is not a single path segment."""
    if segment_problem(record) or segment_problem(context_id):
        return None
    return conversations_root(home) / record / context_id / RECORD_FILE

class RecordWriter:
    """Appends messages to one record file; the runtime is the only writer.

    A failed write is reported once through `on_error` and the session goes on; the message
    stays pending and is written (in order) by the next successful append, so no hole is left.
    """

    def __init__(self, home: Path, path: Path, on_error: Callable[[str], None]) -> None:
        self.home = home
        self.path = path
        self._on_error = on_error
        self._fd: int | None = None
        self._recorded: set[str] = set()
        self._pending: list[Message] = []
        self._reported = False
        self._lock = threading.Lock()
        self._closed = False

    def mark_recorded(self, message_ids: list[str]) -> None:
        """Ids already on disk (a threaded reload): never written again."""
        self._recorded.update(message_ids)

    def is_recorded(self, message_id: str) -> bool:
        return message_id in self._recorded

    def append(self, message: Message) -> bool:
        """Write `message` (and any earlier pending ones); True when all are on disk."""
        message_id = str(message["id"])
        if message_id in self._recorded or any(m["id"] == message_id for m in self._pending):
            return not self._pending
        self._pending.append(message)
        try:
            with self._lock:
                if self._closed:
                    return False
                fd = self._open()
                while self._pending:
                    head = self._pending[0]
                    _write_all(fd, _line(head))
                    self._recorded.add(str(head["id"]))
                    self._pending.pop(0)
        except OSError as exc:
            if not self._reported:
                self._reported = True
                self._on_error(f"conversation record {self.path}: write failed ({exc}); "
                               "the task continues unrecorded until a write succeeds")
            return False
        return True

    def close(self, seal: bool = False) -> None:
        """Close the file (the next append opens it again) — or, with `seal`, write nothing
        more. Safe from any thread: waits for a line being written."""
        with self._lock:
            self._closed = self._closed or seal
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def _open(self) -> int:
        if self._fd is not None:
            return self._fd
        # a link or FIFO planted at the record's name is refused, never written through; a
        # partial line left by a crash is closed off with a newline first
        fd = open_append(self.path, self.home)
        self._fd = fd
        return fd


def _line(message: Message) -> bytes:
    """One record line. A lone surrogate should never get this far (text is made whole where
    it comes in, `text_rule`), but if one does, it is written as `?` rather than ending the
    session with UnicodeEncodeError."""
    return (redact(compact_json(message)) + "\n").encode("utf-8", "replace")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
