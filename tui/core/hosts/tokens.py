"""Where a host's door token comes from (docs/fleet.md, "Hosts"): a file (`token_file:`), an
environment variable (`token_env:`), a command run once per session (`token_command:`, the
session id appended: `[ssh, build-3, murmur-tui, token]`), or the token `fleet --host` was
given (`--token-file`, `$MURMUR_DOOR_TOKEN`). Every token is checked as `attach --token-file`
checks one, and remembered by the one redaction the moment it is read: it is never shown.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from tui.core.errors import HostCommandFailed, HostTokenRefused
from tui.core.hosts.run import run_bounded, shown_command
from tui.core.running.address import token_problem
from tui.core.text.secrets import remember

MAX_TOKEN_FILE = 4096  # a door token is ~50 bytes; a bigger file is not one
TOKEN_COMMAND_TIMEOUT = 10.0

SourceKind = Literal["none", "file", "env", "command", "given"]


@dataclass(frozen=True)
class TokenSource:
    kind: SourceKind = "none"
    path: Path | None = None  # file
    variable: str = ""  # env
    argv: tuple[str, ...] = ()  # command
    token: str | None = field(default=None, repr=False)  # given

    @property
    def per_session(self) -> bool:
        """Whether each session may have a token of its own (a command is asked per session)."""
        return self.kind == "command"

    def read(self, session_id: str | None = None) -> str | None:
        """The token, checked (None for a host with no token source); HostTokenRefused saying
        why there is none. A command gets `session_id` appended when it is known."""
        if self.kind == "none":
            return None
        if self.kind == "given":
            return self.token
        if self.kind == "file":
            assert self.path is not None
            return token_from_file(self.path, f"token_file {self.path}")
        if self.kind == "env":
            value = os.environ.get(self.variable)
            if not value:
                raise HostTokenRefused(f"token_env: ${self.variable} is not set")
            return checked(value, f"token_env: ${self.variable}")
        argv = [*self.argv, *([session_id] if session_id else [])]
        try:
            ran = run_bounded(argv, TOKEN_COMMAND_TIMEOUT, MAX_TOKEN_FILE)
        except HostCommandFailed as exc:
            raise HostTokenRefused(f"token_command: {exc.text}") from None
        return checked(_text(ran.stdout, f"token_command: {shown_command(argv)}"),
                       f"token_command: {shown_command(argv)}")


def token_from_file(path: Path, shown: str) -> str:
    """The token in a file a person named: a regular file (a link to one is followed: the path
    is theirs), at most MAX_TOKEN_FILE bytes, never waited on; one trailing newline dropped,
    the rest one bearer token (printable ASCII, no space). HostTokenRefused naming `shown`."""
    from tui.core.errors import FileRefused
    from tui.core.fs.safe_read import read_bounded

    try:
        target = Path(os.path.realpath(path))
        if target != path.absolute():
            shown = f"{shown} (a link to {target})"
        read = read_bounded(target, MAX_TOKEN_FILE)
    except (FileRefused, OSError, ValueError) as exc:
        said = str(exc.strerror or exc) if isinstance(exc, OSError) else \
            str(exc) or type(exc).__name__
        raise HostTokenRefused(f"{shown}: {said}") from None
    if read.truncated:
        raise HostTokenRefused(f"{shown}: it is {read.size} bytes; a token file holds one token "
                           f"(at most {MAX_TOKEN_FILE} bytes)")
    return checked(_text(read.data, shown), shown)


def _text(data: bytes, shown: str) -> str:
    try:
        return data.removesuffix(b"\n").decode("utf-8")
    except UnicodeDecodeError:
        raise HostTokenRefused(f"{shown}: it is not UTF-8 text") from None


def checked(token: str, shown: str) -> str:
    """`token` when it can be a bearer token (remembered: never shown); else HostTokenRefused."""
    problem = token_problem(token)
    if problem is not None:
        raise HostTokenRefused(f"{shown}: expected one token on one line; {problem}")
    remember(token)
    return token
