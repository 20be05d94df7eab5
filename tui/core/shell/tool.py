"""The shell tool (spec §5.3): allowlisted binaries, run in the session workdir (docs/shell.md).

Interpreters (`bash`, `sh`, …) run `<bin> -c <command>`; any other binary gets the command split
shell-word style as its arguments. The child sees a stripped environment with
`HOME=<workdir>/.capsule-home` and never a credential-shaped variable. A non-zero exit is data,
not an error. Output is read as it arrives (`output.py`): 16 KiB of each stream in the result,
the whole of it (up to 32 MiB of each) in `logs/shell-<ms>.log` when either stream is cut.

A command runs in its own process group and never outlives its call (`process.py`): the group
is killed when the call is canceled, when `capabilities.limits.deadline_seconds` (600 s) passes,
when the command's own process exits, and when the supervisor exits.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from tui.core.cancel import CancelToken
from tui.core.errors import ShellRefused
from tui.core.fs.private_files import make_private_dirs
from tui.core.hardening import make_undumpable
from tui.core.manifest.model import INTERPRETERS
from tui.core.shell.background import Background, Work
from tui.core.shell.live import LiveLines, OutputStream
from tui.core.shell.output import LOG_CAP_BYTES, OutputCapture, size_text
from tui.core.shell.process import Group, pump, spawn
from tui.core.text.secrets import credential_shaped, redact
from tui.core.tools.table import ShellResult

DEFAULT_DEADLINE = 600.0  # capabilities.limits.deadline_seconds unset (as for tools, drivers)
DEADLINE_KEY = "capabilities.limits.deadline_seconds"
_PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM")


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
        background: Background | None = None,
    ) -> None:
        self.allow = allow
        self.background = background  # demotes a command that outruns its grace period
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

    def run(self, binary: str, data: str | None, cancel: CancelToken | None = None,
            lines: Callable[[OutputStream, list[str]], None] | None = None,
            call: tuple[str, int, str | None] = ("", 0, None)) -> ShellResult:
        """Run one call. `data` is the tool input JSON. Raises ShellRefused if nothing ran.
        Returns once the command's whole process group is dead — or, with a `background`,
        once the grace period has passed with the command still running (the result holds
        its `work_id`; `call` is its task id, turn and call id). `lines` hears the output
        while it runs, redacted, a line at a time (`live.py`)."""
        if binary not in self.allow:
            raise ShellRefused(f"'{binary}' is not in capabilities.shell.allow")
        command = _command_of(data)
        argv = self.argv(binary, command)
        resolved = self.resolve(binary)
        if not self._home_made:
            try:
                make_private_dirs(self.home)
            except OSError as exc:
                raise ShellRefused(f"cannot make {self.home}: {exc.strerror or exc}") from None
            self._home_made = True
        live = LiveLines(lines) if lines is not None else None
        capture = OutputCapture(self.logs_dir, command, self.log_cap_bytes,
                                live.feed if live is not None else None)
        started = time.perf_counter()
        try:
            group = spawn(argv, self.workdir, self.environment)
        except OSError as exc:
            raise ShellRefused(f"cannot run '{binary}': {exc.strerror or exc}") from None
        except subprocess.SubprocessError as exc:  # the parent died between fork and exec
            raise ShellRefused(f"cannot run '{binary}': {exc}") from None
        background = self.background
        exited = True  # until pump says otherwise (an error on the way out ends the group)
        code = 0
        unsubscribe = None
        try:
            if cancel is not None:
                unsubscribe = cancel.subscribe(lambda: group.kill("canceled"))
            exited = pump(group, capture, self.deadline_seconds, live,
                          background.grace_seconds if background is not None else None)
        finally:
            if unsubscribe is not None:
                unsubscribe()
            if exited:
                code = group.finish()
        if not exited and background is not None:
            return self._demote(background, resolved, command, group, capture, live, call)
        duration_ms = int((time.perf_counter() - started) * 1000)
        exit_code = 128 - code if code < 0 else code
        capture.end(0)
        capture.end(1)
        if live is not None:
            live.close()  # the last lines, before the result is built
        return self._result(resolved, command, exit_code, capture, group.reason, duration_ms)

    def _demote(self, background: Background, resolved: str, command: str, group: Group,
                capture: OutputCapture, live: LiveLines | None,
                call: tuple[str, int, str | None]) -> ShellResult:
        """The command outran its grace period: it goes on in the background; the call gets
        its handle at once."""
        work_id = background.new_id()
        name = f"{work_id}.log"
        if live is not None:
            live.close()  # the call is over: what it showed so far ends here
        capture.live = None
        capture.log_as(name)
        output_path = f"logs/{name}"
        work = Work(work_id, resolved, command, self.logs_dir / name, output_path,
                    group.started, kill=group.kill, log_problem=capture.log_error)
        background.detached(work, *call)
        threading.Thread(target=self._follow, args=(background, work, group, capture),
                         name=f"shell {work_id}", daemon=True).start()
        grace = background.grace_seconds
        text = (f"$ {command}\nStill running after {grace:g} s "
                f"(lifecycle.shell_grace_secs): moved to the background as {work_id}.\n")
        if capture.log_error is not None:
            text += (f"Its output is NOT kept: {capture.log_error}. No log is written to "
                     f"{output_path}.")
        else:
            text += f"Its output goes to {output_path}."
        if background.delivers:
            text += " Its result arrives as a new task when it ends."
        else:
            text += (" The session ends with its task, so its result will not arrive: it is "
                     "stopped then.")
        return ShellResult(
            binary=resolved, command=command, exit_code=0, stdout="", stderr="",
            stdout_bytes=capture.raw_bytes(0), stderr_bytes=capture.raw_bytes(1),
            duration_ms=int((time.monotonic() - group.started) * 1000), truncated=False,
            full_output_path=output_path, text=text, work_id=work_id)

    def _follow(self, background: Background, work: Work, group: Group,
                capture: OutputCapture) -> None:
        """Read a demoted command to its end (its deadline still holds), complete its log,
        tell the background."""
        try:
            pump(group, capture, self.deadline_seconds)
        finally:
            code = group.finish()
        exit_code = 128 - code if code < 0 else code
        notes = [f"Exit code: {exit_code}"]
        if group.reason is not None:
            notes.append(self._stop_note(group.reason))
        if capture.capped:
            notes.append(capture.cap_note())
        capture.finish(notes)
        if capture.log_error is not None and work.log_problem is None:
            work.log_problem = capture.log_error  # the log broke on the way (a full disk)
        background.finished(work, exit_code, int((time.monotonic() - group.started) * 1000))

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
        if stopped == "stopped":
            return "Stopped from the Background pane; the command was killed."
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

