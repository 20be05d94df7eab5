"""Running a host's command — its discovery (`discover:`) or its token source
(`token_command:`) — as hostile input: an argv list, never a shell; stdin closed; its own
process group, killed whole at the timeout; stdout capped; what it says when it fails is the
last line of its stderr, printable, redacted and cut. Never a traceback.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass

from tui.core.errors import HostCommandFailed
from tui.core.text.printable import printable
from tui.core.text.secrets import redact

STDERR_KEPT = 4096  # the end of stderr kept for its last line
REASON_CHARS = 200


@dataclass(frozen=True)
class CommandOutput:
    stdout: bytes
    stderr_line: str  # the last line of stderr, shown (may be "")


def shown_command(argv: Sequence[str]) -> str:
    """The program a command runs, for a message (never its arguments: they may hold a
    secret)."""
    program = os.path.basename(argv[0]) if argv else "?"
    return printable(program[:60], keep_newlines=False) or "?"


def run_bounded(argv: Sequence[str], timeout: float, limit: int) -> CommandOutput:
    """Run `argv`; its stdout (at most `limit` bytes) once it exits 0, else HostCommandFailed."""
    what = shown_command(argv)
    try:
        process = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise HostCommandFailed(f"{what} cannot be run: {printable(why, keep_newlines=False)}"
                            ) from None
    try:
        out, err, problem = _read(process, timeout, limit)
    finally:
        _end(process)
    line = last_line(err)
    if problem is not None:
        raise HostCommandFailed(f"{what} {problem}")
    code = process.returncode
    if code != 0:
        said = f"exited with status {code}" if code > 0 else f"was killed by signal {-code}"
        raise HostCommandFailed(f"{what} {said}" + (f": {line}" if line else ""))
    return CommandOutput(out, line)


def _read(process: subprocess.Popen[bytes], timeout: float,
          limit: int) -> tuple[bytes, bytes, str | None]:
    assert process.stdout is not None and process.stderr is not None
    out, err = bytearray(), bytearray()
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ, "out")
        selector.register(process.stderr, selectors.EVENT_READ, "err")
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return bytes(out), bytes(err), f"did not finish within {timeout:g} s"
            for key, _ in selector.select(left):
                piece = os.read(key.fd, 65536)
                if not piece:
                    selector.unregister(key.fileobj)
                    continue
                if key.data == "out":
                    out += piece
                    if len(out) > limit:
                        return bytes(out[:limit]), bytes(err), \
                            f"printed more than {limit} bytes"
                else:
                    err = (err + piece)[-STDERR_KEPT:]
    try:
        process.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return bytes(out), bytes(err), f"did not finish within {timeout:g} s"
    return bytes(out), bytes(err), None


def _end(process: subprocess.Popen[bytes]) -> None:
    """The command and whatever it started, gone; its pipes closed."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            process.kill()
    process.wait()
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()


def last_line(data: bytes) -> str:
    """The last non-empty line of `data`, decoded, redacted, printable on one line, cut."""
    lines = [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    if not lines:
        return ""
    line = printable(redact(lines[-1].strip()), keep_newlines=False)
    return line if len(line) <= REASON_CHARS else line[:REASON_CHARS - 1] + "…"
