"""What an approval remembers of a shell command: the words of "this prefix for the session",
and what the shell tool will run for a command.

A shell call's prefix is its binary plus its first argument when that argument is a
subcommand-shaped word (letters, digits, `-`, `_`; not an option, not a path):
`git status --short` -> `git status`; `ls -la /tmp` -> `ls`. For an interpreter
(`bash -c SCRIPT`) it is the interpreter, the script's first word (its command) and the next
word on the same terms (`bash -c 'npm run build'` -> `bash -c npm run`; `bash -c 'touch x'` ->
`bash -c touch`) — and only for a plain script (no `;`, `&`, `|`, `<`, `>`, `$`, a
backquote, parentheses or a new line); for any other script the prefix is the whole script, so
remembering it repeats exactly that command. See docs/security.md.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil

from tui.core.manifest.model import INTERPRETERS

_SUBCOMMAND = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_SHELL_META = frozenset(";&|<>$`()\n\r")


def shell_prefix(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The words "this prefix for the session" remembers for a shell call's `argv`."""
    binary, rest = argv[0], list(argv[1:])
    if binary in INTERPRETERS and len(rest) == 2 and rest[0] == "-c":
        script = rest[1]
        if any(char in _SHELL_META for char in script):
            return (binary, "-c", script)
        try:
            words = shlex.split(script)
        except ValueError:
            return (binary, "-c", script)
        return (binary, "-c", *_first_words(words, 2))
    return (binary, *_first_words(rest, 1))


def _first_words(words: list[str], most: int) -> tuple[str, ...]:
    """The command words of a prefix: for an interpreter's script its first word (the command)
    and then, as for any binary's arguments, one subcommand-shaped word (`status`, `run`,
    `install`: letters, digits, `-` and `_`, not an option) if there is one."""
    taken: list[str] = []
    if most == 2 and words:
        taken.append(words[0])
        words = words[1:]
    if words and _SUBCOMMAND.fullmatch(words[0]):
        taken.append(words[0])
    return tuple(taken)


def matches(prefix: tuple[str, ...], argv: tuple[str, ...]) -> bool:
    """Whether a remembered prefix allows `argv`."""
    if not prefix or argv[0] != prefix[0]:
        return False
    if argv[0] in INTERPRETERS and len(argv) == 3 and argv[1] == "-c":
        if len(prefix) < 2 or prefix[1] != "-c":
            return False
        script = argv[2]
        if len(prefix) == 3 and prefix[2] == script:
            return True
        if any(char in _SHELL_META for char in script):
            return False
        try:
            words = tuple(shlex.split(script))
        except ValueError:
            return False
        wanted = prefix[2:]
        return words[:len(wanted)] == wanted
    wanted = prefix[1:]
    return argv[1:1 + len(wanted)] == wanted


def shell_argv(binary: str, command: str) -> tuple[str, ...] | None:
    """What the shell tool will run for `command` (None when it will refuse it anyway)."""
    if binary in INTERPRETERS:
        return (binary, "-c", command)
    try:
        return (binary, *shlex.split(command))
    except ValueError:
        return None


def resolve(binary: str) -> str:
    """The absolute path `binary` runs from (as the shell tool resolves it)."""
    found = shutil.which(binary, path=os.environ.get("PATH", os.defpath))
    return os.path.realpath(found) if found else binary
