"""The shell tool (spec §5.3): allowlisted binaries, run in the session workdir (docs/shell.md).

Interpreters (`bash`, `sh`, …) run `<bin> -c <command>`; any other binary gets the command split
shell-word style as its arguments. The child sees a stripped environment with
`HOME=<workdir>/.capsule-home` and never a credential-shaped variable. A non-zero exit is data,
not an error. Output is read as it arrives (`shell_output`): 16 KiB of each stream in the result,
the whole of it (up to 32 MiB of each) in `logs/shell-<ms>.log` when either stream is cut.

A command runs in its own process group and never outlives its call: the group is killed when
the call is canceled, when `capabilities.limits.deadline_seconds` (600 s) passes, when the
command's own process exits (whatever it left in the background), and when the supervisor exits
(`kill_running`, run at exit; the CLI calls it on SIGTERM/SIGHUP). Should the supervisor be
killed outright, a watchdog process that holds a pipe to the supervisor kills the group all the
same.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tui.core.cancel import CancelToken
from tui.core.hardening import make_undumpable
from tui.core.manifest.model import INTERPRETERS
from tui.core.secrets import credential_shaped, redact
from tui.core.shell_output import CAP_BYTES, LOG_CAP_BYTES, OutputCapture, size_text

__all__ = ["CAP_BYTES", "LOG_CAP_BYTES"]

DEFAULT_DEADLINE = 600.0  # capabilities.limits.deadline_seconds unset (as for tools, drivers)
DEADLINE_KEY = "capabilities.limits.deadline_seconds"
_PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM")
_FENCE_MARKER = re.compile(r"<(?=/?untrusted-content)", re.IGNORECASE)
NEUTRALISED = "!MURMUR-NEUTRALISED!"
_READ_SIZE = 64 * 1024
_POLL_SECONDS = 0.05  # only where a process cannot be waited on through a descriptor
_KILLED_WAIT = 1.0  # once killed, how long between two kills while the leader lingers
_DRAIN_READS = 16  # after the leader exits: at most this many reads of what is left (1 MiB)
_WATCHDOG_SHELL = "/bin/sh"
# One per supervisor process, in a session of its own. It keeps the set of running groups the
# supervisor announces ("+ <pgid>" / "- <pgid>") and, at end of file — the supervisor is gone,
# however it went — kills every group still in it.
_WATCHDOG_SCRIPT = """\
live=" "
while read -r op pg; do
  case "$op $live" in
    "+ "*" $pg "*) ;;
    "+ "*) live="$live$pg " ;;
    "- "*" $pg "*) live="${live%%" $pg "*} ${live#*" $pg "}" ;;
  esac
done
for pg in $live; do kill -9 -"$pg" 2>/dev/null; done
"""

class ShellRefused(Exception):
    """The call never ran (bad input, binary not allowed or not found): an error result."""


@dataclass(frozen=True)
class ShellResult:
    binary: str  # the resolved absolute path, or the bare name when nothing resolved
    command: str
    exit_code: int
    stdout: str  # at most CAP_BYTES of it
    stderr: str
    stdout_bytes: int
    stderr_bytes: int
    duration_ms: int
    truncated: bool
    full_output_path: str | None
    text: str  # the tool result text the model reads
    stopped: str | None = None  # "timeout" | "canceled" | "supervisor exit": the group was killed
    log_capped: bool = False  # the log reached LOG_CAP_BYTES and the rest was discarded


def tool_description(binary: str) -> str:
    if binary in INTERPRETERS:
        return (f"Run a shell command via {binary} in the capsule workdir. The command runs as "
                f"`{binary} -c <command>`; the result shows the exit code, stdout and stderr.")
    return (f"Run {binary} in the capsule workdir. `command` holds the arguments only (split "
            f"like a shell would); the result shows the exit code, stdout and stderr.")


INPUT_SCHEMA = {
    "type": "object",
    "properties": {"command": {"type": "string"}},
    "required": ["command"],
}


def synthetic_manifest(binary: str) -> str:
    """`tools/<binary>/murmur.yaml` as Murmur writes it for an allowed binary."""
    return (
        f"name: {binary}\nversion: 0.0.0\nruntime: tool\nimplementation: native\n"
        f"description: {json.dumps(tool_description(binary))}\n"
        f"input_schema: '{json.dumps(INPUT_SCHEMA)}'\n"
    )


class ShellTool:
    """Runs allowlisted binaries for one session."""

    def __init__(
        self,
        allow: tuple[str, ...],
        workdir: Path,
        logs_dir: Path,
        extra_env: Mapping[str, str] | None = None,
        deadline_seconds: float | None = None,
        log_cap_bytes: int = LOG_CAP_BYTES,
        strip_env: tuple[str, ...] = (),
    ) -> None:
        self.allow = allow
        self.strip_env = strip_env
        self.workdir = workdir
        self.logs_dir = logs_dir
        self.home = workdir / ".capsule-home"
        self.deadline_seconds = float(deadline_seconds or DEFAULT_DEADLINE)
        self.log_cap_bytes = log_cap_bytes
        self._env = {key: os.environ[key] for key in _PASSED_ENV if key in os.environ}
        self._env.setdefault("PATH", os.defpath)
        self._env.update(extra_env or {})
        self._env["HOME"] = str(self.home)
        self._resolved: dict[str, str] = {}
        self._home_made = False
        make_undumpable()  # a command runs with the user's rights: it must not read this process

    @property
    def environment(self) -> dict[str, str]:
        """The environment every command gets (a copy): no credential-shaped name, and a key
        murmur-tui knows is `[redacted]` in any value."""
        return {name: redact(value) for name, value in self._env.items()
                if not credential_shaped(name, self.strip_env)}

    def resolve(self, binary: str) -> str:
        """The absolute path the name runs, or the bare name when nothing resolves."""
        if binary not in self._resolved:
            found = shutil.which(binary, path=self._env["PATH"])
            self._resolved[binary] = os.path.realpath(found) if found else binary
        return self._resolved[binary]

    def argv(self, binary: str, command: str) -> list[str]:
        if binary in INTERPRETERS:
            return [binary, "-c", command]
        try:
            return [binary, *shlex.split(command)]
        except ValueError as exc:
            raise ShellRefused(f"cannot split the command into arguments: {exc}") from None

    def run(self, binary: str, data: str | None, cancel: CancelToken | None = None
            ) -> ShellResult:
        """Run one call. `data` is the tool input JSON. Raises ShellRefused if nothing ran.
        Returns only once the command's whole process group is dead."""
        if binary not in self.allow:
            raise ShellRefused(f"'{binary}' is not in capabilities.shell.allow")
        command = _command_of(data)
        argv = self.argv(binary, command)
        resolved = self.resolve(binary)
        if not self._home_made:
            try:
                self.home.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ShellRefused(f"cannot make {self.home}: {exc.strerror or exc}") from None
            self._home_made = True
        capture = OutputCapture(self.logs_dir, command, self.log_cap_bytes)
        started = time.perf_counter()
        group = _spawn(argv, self.workdir, self.environment, binary)
        unsubscribe = cancel.subscribe(lambda: group.kill("canceled")) if cancel else None
        try:
            _pump(group, capture, self.deadline_seconds)
        finally:
            if unsubscribe is not None:
                unsubscribe()
            code = group.finish()
        duration_ms = int((time.perf_counter() - started) * 1000)
        exit_code = 128 - code if code < 0 else code
        return self._result(resolved, command, exit_code, capture, group.reason, duration_ms)

    def _result(self, resolved: str, command: str, exit_code: int, capture: OutputCapture,
                stopped: str | None, duration_ms: int) -> ShellResult:
        capture.end(0)
        capture.end(1)
        notes = [f"Exit code: {exit_code}"]
        if stopped is not None:
            notes.append(self._stop_note(stopped))
        if capture.capped:
            notes.append(capture.cap_note())
        capture.finish(notes)
        out_text, err_text = capture.text(0), capture.text(1)
        text = f"$ {command}\nExit code: {exit_code}\nStdout:\n{out_text}\nStderr:\n{err_text}"
        if stopped is not None:
            text += "\n\n" + self._stop_note(stopped)
        full_path = str(capture.log_path) if capture.log_path is not None else None
        if capture.log_error is not None:
            text += (f"\n\nOutput truncated. The full output could not be written: "
                     f"{capture.log_error}")
        elif full_path is not None and capture.capped:
            text += (f"\n\nOutput truncated. The first {size_text(capture.share)} of each "
                     f"stream were written to {full_path}; the rest was discarded.")
        elif full_path is not None:
            text += f"\n\nOutput truncated. Full output written to {full_path}"
        return ShellResult(
            binary=resolved, command=command, exit_code=exit_code, stdout=out_text,
            stderr=err_text, stdout_bytes=capture.raw_bytes(0),
            stderr_bytes=capture.raw_bytes(1), duration_ms=duration_ms,
            truncated=capture.truncated, full_output_path=full_path, text=text,
            stopped=stopped, log_capped=capture.capped,
        )

    def _stop_note(self, stopped: str) -> str:
        if stopped == "timeout":
            return (f"Timed out after {self.deadline_seconds:g} s ({DEADLINE_KEY}); the command "
                    f"was killed.")
        if stopped == "canceled":
            return "Canceled; the command was killed."
        return "The supervisor is exiting; the command was killed."


def _command_of(data: str | None) -> str:
    try:
        value = json.loads(data or "")
    except ValueError:
        raise ShellRefused("the input must be a JSON object with a non-empty 'command'"
                           ) from None
    command = value.get("command") if isinstance(value, dict) else None
    if not isinstance(command, str) or not command.strip():
        raise ShellRefused("the input must be a JSON object with a non-empty 'command'")
    return command.strip()


# -- process groups -----------------------------------------------------------------------------
class _Group:
    """One running command's process group."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.pgid = process.pid  # start_new_session: the leader's pid is the group's id
        self.reason: str | None = None
        self._lock = threading.RLock()  # re-entrant: kill_running may run in a signal handler
        self._reaped = False

    def kill(self, reason: str | None = None) -> None:
        """SIGKILL the whole group (at once; nothing a command could trap). Safe until reaped:
        the unreaped leader keeps the group's id from being reused."""
        with self._lock:
            if self._reaped:
                return
            if reason is not None and self.reason is None:
                self.reason = reason
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, signal.SIGKILL)

    def finish(self) -> int:
        """Once the leader has exited (or on the way out of an error): kill what is left of the
        group, take it off the watchdog's list, reap the leader. Returns its return code."""
        self.kill()
        with self._lock:
            self._reaped = True
        _LIVE.pop(self.pgid, None)
        _WATCHDOG.remove(self.pgid)
        code = self.process.wait()
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:  # a process that left the group now writes to a closed pipe
                pipe.close()
        return code


class _Watchdog:
    """The shell that kills the running groups should the supervisor die without doing it
    (SIGKILL, a crash): it blocks reading a pipe only the supervisor writes. Started at the
    first command, started again if something killed it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._pipe: int | None = None

    def ensure(self) -> None:
        """Have a watchdog running before a command starts (so the command is never running
        while no watchdog could hear of it)."""
        with self._lock:
            if self._pipe is None or self._process is None or self._process.poll() is not None:
                self._start()

    def add(self, pgid: int) -> None:
        self._send(f"+ {pgid}\n")

    def remove(self, pgid: int) -> None:
        self._send(f"- {pgid}\n")

    @property
    def pid(self) -> int | None:
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def _send(self, line: str) -> None:
        with self._lock:
            for _ in range(2):
                if self._pipe is None or self._process is None or self._process.poll() is not None:
                    self._start()
                if self._pipe is None:
                    return  # no shell to run one: the exit hook and the CLI's handlers remain
                try:
                    os.write(self._pipe, line.encode())
                    return
                except OSError:
                    self._stop()

    def _start(self) -> None:
        self._stop()
        if not os.access(_WATCHDOG_SHELL, os.X_OK):
            return
        read_end, write_end = os.pipe()
        try:
            self._process = subprocess.Popen(
                [_WATCHDOG_SHELL, "-c", _WATCHDOG_SCRIPT], stdin=read_end,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/",
                env={"PATH": os.defpath}, start_new_session=True)
        except OSError:
            os.close(write_end)
            return
        finally:
            os.close(read_end)
        self._pipe = write_end
        for pgid in list(_LIVE):  # a restarted watchdog learns what is running now
            with contextlib.suppress(OSError):
                os.write(write_end, f"+ {pgid}\n".encode())

    def _stop(self) -> None:
        if self._pipe is not None:
            with contextlib.suppress(OSError):
                os.close(self._pipe)
            self._pipe = None
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def close(self) -> None:
        """At exit, after every group was killed: end of file, and the watchdog ends."""
        with self._lock:
            if self._pipe is not None:
                os.close(self._pipe)
                self._pipe = None
            if self._process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._process.wait(timeout=5)


_LIVE: dict[int, _Group] = {}
_WATCHDOG = _Watchdog()


def kill_running() -> None:
    """Kill the process group of every command still running (the supervisor is exiting).
    Safe from a signal handler and from any thread."""
    for group in list(_LIVE.values()):
        group.kill("supervisor exit")


def running_groups() -> tuple[int, ...]:
    """The process group ids of the commands running now."""
    return tuple(_LIVE)


def watchdog_pid() -> int | None:
    """The watchdog's pid while it runs."""
    return _WATCHDOG.pid


def _at_exit() -> None:
    kill_running()
    _WATCHDOG.close()


atexit.register(_at_exit)


def _spawn(argv: list[str], workdir: Path, env: dict[str, str], binary: str) -> _Group:
    _WATCHDOG.ensure()
    try:
        process = subprocess.Popen(
            argv, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True,
        )
    except OSError as exc:
        raise ShellRefused(f"cannot run '{binary}': {exc.strerror or exc}") from None
    except subprocess.SubprocessError as exc:  # the parent died between fork and exec
        raise ShellRefused(f"cannot run '{binary}': {exc}") from None
    group = _Group(process)
    _LIVE[group.pgid] = group
    _WATCHDOG.add(group.pgid)
    return group


def _pump(group: _Group, capture: OutputCapture, deadline: float) -> None:
    """Read both streams as they arrive until the leader exits; past the deadline kill the
    group (and keep reading until the leader is gone)."""
    process = group.process
    assert process.stdout is not None and process.stderr is not None
    pipes = {process.stdout.fileno(): 0, process.stderr.fileno(): 1}
    exit_fd = _exit_descriptor(process.pid)
    ends_at = time.monotonic() + deadline
    with selectors.DefaultSelector() as selector:
        for fd in pipes:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        if exit_fd is not None:
            selector.register(exit_fd, selectors.EVENT_READ)
        try:
            while not _exited(process.pid):
                remaining = ends_at - time.monotonic()
                if remaining <= 0 and group.reason is None:
                    group.kill("timeout")
                if group.reason is not None:  # killed: wait for the leader, killing again
                    group.kill()              # now and then (a setuid child may linger)
                    remaining = _KILLED_WAIT
                wait = max(remaining, 0.0)
                if exit_fd is None:
                    wait = min(wait, _POLL_SECONDS)
                for key, _ in selector.select(wait):
                    if key.fd in pipes and not _read(key.fd, pipes[key.fd], capture):
                        selector.unregister(key.fd)
                        del pipes[key.fd]
            group.kill()  # whatever the leader left behind; then what is already written
            for fd, index in pipes.items():
                for _ in range(_DRAIN_READS):  # bounded: a process outside the group may
                    if not _read(fd, index, capture, drain=True):  # still be writing
                        break
        finally:
            if exit_fd is not None:
                os.close(exit_fd)


def _read(fd: int, index: int, capture: OutputCapture, drain: bool = False) -> bool:
    """One read; False at end of file (or, when draining, once nothing is waiting)."""
    try:
        data = os.read(fd, _READ_SIZE)
    except BlockingIOError:
        return not drain
    except OSError:
        data = b""
    if not data:
        capture.end(index)
        return False
    capture.feed(index, data)
    return True


def _exit_descriptor(pid: int) -> int | None:
    """A descriptor that becomes readable when `pid` exits (Linux 5.3+), else None."""
    if sys.platform != "linux":
        return None
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None


def _exited(pid: int) -> bool:
    """Whether the leader has exited, without reaping it (so its group id stays ours)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def fence(source: str, content: str) -> str:
    """Wrap tool output in the untrusted-content fence, neutralising markers inside it."""
    name = source.replace(">", "_").replace("\r", " ").replace("\n", " ")
    body = _FENCE_MARKER.sub("<" + NEUTRALISED, content)
    return f"<untrusted-content source={name}>\n{body}\n</untrusted-content>"
