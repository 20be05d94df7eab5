"""A shell command's output, read as it arrives, held in bounded memory (docs/shell.md).

The result keeps the first `CAP_BYTES` of each stream. Once either stream goes over that, the
whole output goes to `logs/shell-<ms>.log` as it arrives: stdout straight into the log, stderr
into an unlinked spool file beside it that is appended when the command ends. The log holds at
most `LOG_CAP_BYTES` of output, half of it for each stream (so a flood on stdout never hides
the error at the end of stderr); beyond that output is still read (the command never blocks on
a full pipe) but discarded, and the log and the result say so. Everything kept — in memory and in
the log — has passed through `ByteStreamRedactor` first, so a key a command prints is
`[redacted]`; what is kept is also handed, as it arrives, to `live` (the call's watcher). The
logs folder is made 0700, the log 0600, and neither is opened through a
symbolic link (a command can write in the workdir and could plant one).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from tui.core.fs.private_files import make_private_dirs
from tui.core.text.secrets import ByteStreamRedactor, redact

CAP_BYTES = 16 * 1024
LOG_CAP_BYTES = 64 * 1024 * 1024
_PRIVATE_FILE = os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def size_text(count: int) -> str:
    """A byte count the way the docs write limits: 64 MiB, 16 KiB, 700 bytes."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size and count % size == 0:
            return f"{count // size} {unit}"
    if count >= 1 << 20:
        return f"{count / (1 << 20):.1f} MiB"
    return f"{count} bytes"


@dataclass
class _Stream:
    head: bytearray = field(default_factory=bytearray)  # the first CAP_BYTES kept, redacted
    raw: int = 0  # bytes the command wrote
    seen: int = 0  # redacted bytes produced so far
    logged: int = 0  # of those, bytes in the log (stdout) or its stderr spool
    capped: bool = False  # its share of the log cap is full
    ended: bool = False
    redactor: ByteStreamRedactor = field(default_factory=ByteStreamRedactor)


class OutputCapture:
    """stdout (0) and stderr (1) of one command."""

    def __init__(self, logs_dir: Path, command: str, log_cap: int = LOG_CAP_BYTES,
                 live: Callable[[int, bytes], None] | None = None) -> None:
        self.logs_dir = logs_dir
        self.live = live  # hears each stream's redacted bytes as they arrive
        self.command = command
        self.log_cap = log_cap
        self.streams = (_Stream(), _Stream())
        self.log_path: Path | None = None
        self.log_error: str | None = None
        self._out: BinaryIO | None = None
        self._spool: BinaryIO | None = None
        self._follow = False  # background work: each read reaches the log at once (a tail)

    # -- reading ------------------------------------------------------------------------------
    def feed(self, index: int, data: bytes) -> None:
        stream = self.streams[index]
        stream.raw += len(data)
        if len(stream.head) >= CAP_BYTES and (stream.capped or self.log_error is not None):
            return  # nothing more of it is kept anywhere: drain without the redaction cost
        self._take(index, stream.redactor.feed(data))

    def end(self, index: int) -> None:
        stream = self.streams[index]
        if not stream.ended:
            stream.ended = True
            self._take(index, stream.redactor.flush())

    def _take(self, index: int, data: bytes) -> None:
        if data and self.live is not None:
            self.live(index, data)
        self._keep(self.streams[index], data)

    def _keep(self, stream: _Stream, data: bytes) -> None:
        if not data:
            return
        before = len(stream.head)
        if before < CAP_BYTES:
            stream.head += data[:CAP_BYTES - before]
        stream.seen += len(data)
        if self._out is not None:
            self._write(stream, data)
            if self._follow:
                self._flush()
        elif self.log_error is None and stream.seen > CAP_BYTES and self._open_log():
            # Until now every stream's whole output was in its head; the log starts with it.
            for other in self.streams:
                self._write(other, bytes(other.head) if other is not stream
                            else bytes(stream.head[:before]) + data)

    # -- the log ------------------------------------------------------------------------------
    def log_as(self, name: str) -> bool:
        """From now on the whole output goes to `logs/<name>` (background work: its log is
        named for its work id), starting with what the command has written so far. False
        when the log cannot be written (`log_error` says why)."""
        self._follow = True
        if self._out is not None and self.log_path is not None:  # cut already: rename it
            target = self.logs_dir / name
            try:
                os.rename(self.log_path, target)
            except OSError as exc:
                self.log_error = f"{target}: {exc.strerror or exc}"
                return False
            self.log_path = target
            return True
        if self.log_error is not None:
            return False
        if not self._open_log(name):
            return False
        for stream in self.streams:
            self._write(stream, bytes(stream.head))
        self._flush()
        return self._out is not None

    def _open_log(self, fixed: str | None = None) -> bool:
        try:
            folder = _private_folder(self.logs_dir)
            try:
                if fixed is not None:
                    name = fixed
                    out_fd = os.open(fixed, _PRIVATE_FILE | os.O_WRONLY, 0o600, dir_fd=folder)
                else:
                    name, out_fd = _create(folder, "shell-{}.log", os.O_WRONLY)
                spool_name, spool_fd = _create(folder, "shell-{}.stderr.part", os.O_RDWR)
                os.unlink(spool_name, dir_fd=folder)
            finally:
                os.close(folder)
        except OSError as exc:
            self.log_error = f"{self.logs_dir}: {exc.strerror or exc}"
            return False
        self.log_path = self.logs_dir / name
        self._out = os.fdopen(out_fd, "wb")
        self._spool = os.fdopen(spool_fd, "w+b")
        self._guarded(self._out.write, f"{redact('$ ' + self.command)}\nStdout:\n".encode())
        return self._out is not None

    def _write(self, stream: _Stream, data: bytes) -> None:
        room = self.share - stream.logged
        if len(data) > room:
            stream.capped = True
            data = data[:max(room, 0)]
        if not data:
            return
        sink = self._out if stream is self.streams[0] else self._spool
        if sink is not None:
            self._guarded(sink.write, data)
            stream.logged += len(data)

    def _flush(self) -> None:
        if self._out is not None:
            self._guarded(lambda _: self._out.flush() if self._out is not None else None, b"")

    def _guarded(self, write: Callable[[bytes], object], data: bytes) -> None:
        """Write, or on a failing disk stop logging and remember why."""
        try:
            write(data)
        except OSError as exc:
            self.log_error = f"{self.log_path}: {exc.strerror or exc}"
            self._close()

    def finish(self, footer: list[str]) -> None:
        """Flush both streams, then complete the log: the stderr part, the exit line, notes."""
        self.end(0)
        self.end(1)
        out, spool = self._out, self._spool
        if out is None or spool is None:
            return
        try:
            out.write(b"\nStderr:\n")
            spool.seek(0)
            shutil.copyfileobj(spool, out, 1024 * 1024)
            out.write(("\n" + "\n".join(footer) + "\n").encode())
        except OSError as exc:
            self.log_error = f"{self.log_path}: {exc.strerror or exc}"
        self._close()

    def _close(self) -> None:
        for handle in (self._out, self._spool):
            if handle is not None:
                with contextlib.suppress(OSError):
                    handle.close()
        self._out = self._spool = None

    # -- what the result shows ----------------------------------------------------------------
    @property
    def share(self) -> int:
        """How much of each stream the log keeps."""
        return self.log_cap // 2

    @property
    def capped(self) -> bool:
        return any(stream.capped for stream in self.streams)

    @property
    def truncated(self) -> bool:
        return any(stream.seen > CAP_BYTES for stream in self.streams)

    def text(self, index: int) -> str:
        """The kept head of a stream as text (invalid UTF-8 shows as U+FFFD)."""
        return bytes(self.streams[index].head).decode("utf-8", errors="replace")

    def raw_bytes(self, index: int) -> int:
        return self.streams[index].raw

    def cap_note(self) -> str:
        out, err = self.raw_bytes(0), self.raw_bytes(1)
        return (f"Log cap reached: the log keeps the first {size_text(self.share)} of each "
                f"stream; the rest was read and discarded (the command wrote {out} bytes to "
                f"stdout and {err} bytes to stderr).")


def _private_folder(path: Path) -> int:
    """The logs folder, made if missing and restricted to 0700; a descriptor to it, opened
    without following a link in its last component."""
    make_private_dirs(path)
    if path.is_symlink():
        raise OSError(errno.ELOOP, "a symbolic link, not a folder: no log is written through it")
    folder = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if os.fstat(folder).st_mode & 0o077:
            os.fchmod(folder, 0o700)
    except OSError:
        os.close(folder)
        raise
    return folder


def _create(folder: int, pattern: str, mode: int) -> tuple[str, int]:
    """A new 0600 file named for the current millisecond (the next free one)."""
    stamp = time.time_ns() // 1_000_000
    while True:
        name = pattern.format(stamp)
        try:
            return name, os.open(name, _PRIVATE_FILE | mode, 0o600, dir_fd=folder)
        except FileExistsError:
            stamp += 1
