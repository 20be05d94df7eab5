"""The shell tool (spec §5.3): allowlisted binaries, run in the session workdir.

Interpreters (`bash`, `sh`, …) run `<bin> -c <command>`; any other binary gets the command split
shell-word style as its arguments. The child sees a stripped environment with
`HOME=<workdir>/.capsule-home`. A non-zero exit is data, not an error. stdout and stderr are each
capped at 16 KiB in the result; when either is cut, the whole output goes to
`logs/shell-<ms>.log` and the result says where.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tui.core.cancel import CancelToken
from tui.core.manifest import INTERPRETERS

CAP_BYTES = 16 * 1024
_PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM")
_FENCE_MARKER = re.compile(r"<(?=/?untrusted-content)", re.IGNORECASE)
NEUTRALISED = "!MURMUR-NEUTRALISED!"


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
    ) -> None:
        self.allow = allow
        self.workdir = workdir
        self.logs_dir = logs_dir
        self.home = workdir / ".capsule-home"
        self._env = {key: os.environ[key] for key in _PASSED_ENV if key in os.environ}
        self._env.setdefault("PATH", os.defpath)
        self._env.update(extra_env or {})
        self._env["HOME"] = str(self.home)
        self._resolved: dict[str, str] = {}
        self._home_made = False

    @property
    def environment(self) -> dict[str, str]:
        """The environment every command gets (a copy)."""
        return dict(self._env)

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
        """Run one call. `data` is the tool input JSON. Raises ShellRefused if nothing ran."""
        if binary not in self.allow:
            raise ShellRefused(f"'{binary}' is not in capabilities.shell.allow")
        command = _command_of(data)
        argv = self.argv(binary, command)
        resolved = self.resolve(binary)
        if not self._home_made:
            self.home.mkdir(parents=True, exist_ok=True)
            self._home_made = True
        started = time.perf_counter()
        try:
            process = subprocess.Popen(
                argv, cwd=self.workdir, env=self._env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            )
        except OSError as exc:
            raise ShellRefused(f"cannot run '{binary}': {exc.strerror or exc}") from None
        stdout, stderr = _communicate(process, cancel)
        duration_ms = int((time.perf_counter() - started) * 1000)
        code = process.returncode
        exit_code = 128 - code if code < 0 else code
        return self._result(resolved, command, exit_code, stdout, stderr, duration_ms)

    def _result(self, resolved: str, command: str, exit_code: int, stdout: bytes,
                stderr: bytes, duration_ms: int) -> ShellResult:
        truncated = len(stdout) > CAP_BYTES or len(stderr) > CAP_BYTES
        out_text, err_text = _cut(stdout), _cut(stderr)
        text = f"$ {command}\nExit code: {exit_code}\nStdout:\n{out_text}\nStderr:\n{err_text}"
        full_path: str | None = None
        if truncated:
            full_path = str(self._write_full_log(command, exit_code, stdout, stderr))
            text += f"\n\nOutput truncated. Full output written to {full_path}"
        return ShellResult(
            binary=resolved, command=command, exit_code=exit_code, stdout=out_text,
            stderr=err_text, stdout_bytes=len(stdout), stderr_bytes=len(stderr),
            duration_ms=duration_ms, truncated=truncated, full_output_path=full_path, text=text,
        )

    def _write_full_log(self, command: str, exit_code: int, stdout: bytes, stderr: bytes
                        ) -> Path:
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        stamp = time.time_ns() // 1_000_000
        path = self.logs_dir / f"shell-{stamp}.log"
        while path.exists():
            stamp += 1
            path = self.logs_dir / f"shell-{stamp}.log"
        with path.open("wb") as handle:
            handle.write(f"$ {command}\nExit code: {exit_code}\nStdout:\n".encode())
            handle.write(stdout)
            handle.write(b"\nStderr:\n")
            handle.write(stderr)
        return path


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


def _communicate(process: subprocess.Popen[bytes], cancel: CancelToken | None
                 ) -> tuple[bytes, bytes]:
    """Wait for the child; if `cancel` is set meanwhile, kill its whole process group."""
    if cancel is None:
        return process.communicate()

    def kill() -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)

    unsubscribe = cancel.subscribe(kill)
    try:
        return process.communicate()
    finally:
        unsubscribe()


def _cut(data: bytes) -> str:
    """At most CAP_BYTES of output as text (invalid UTF-8 shows as U+FFFD)."""
    return data[:CAP_BYTES].decode("utf-8", errors="replace")


def fence(source: str, content: str) -> str:
    """Wrap tool output in the untrusted-content fence, neutralising markers inside it."""
    name = source.replace(">", "_").replace("\r", " ").replace("\n", " ")
    body = _FENCE_MARKER.sub("<" + NEUTRALISED, content)
    return f"<untrusted-content source={name}>\n{body}\n</untrusted-content>"
