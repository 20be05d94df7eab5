"""What an approval remembers of a shell command, what a remembered rule then allows, and
what the shell tool will run for a command (docs/security.md, "Approvals").

A rule is a tuple of words. For a binary run with its arguments it is the binary and what
follows it: `("git", "status")`. For an interpreter's script (`bash -c SCRIPT`) it is the
interpreter, `-c`, and the first words of one command of the script: `("bash", "-c", "npm",
"run")`.

- "this prefix for the session" remembers each command's program plus its first argument when
  that argument is a subcommand-shaped word (letters, digits, `-`, `_`; not an option, not a
  path): `git status --short` -> `git status`; `ls -la /tmp` -> `ls`.
- "always for this capsule" remembers each command's program: `git status --short` -> `git`.

A script is taken apart into its commands at `&&`, `||`, `;` and `|` (`git status && ls` ->
`git status`, `ls`), and a later script is allowed when every one of its commands starts with
the words of a remembered rule. A script that is more than that — `$`, a backquote,
parentheses, `<`, `>`, a lone `&`, a new line, a command starting with a variable assignment
or a shell keyword (`if`, `eval`, `exec`, …) — is remembered as itself: it allows exactly that
script again, and no rule of words ever allows it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Iterable
from typing import Literal

from tui.core.manifest.model import INTERPRETERS

Rule = tuple[str, ...]
Scope = Literal["prefix", "program"]

_SUBCOMMAND = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_SHELL_META = frozenset("$`()<>\n\r")  # what makes a script more than commands in a row
_OPERATORS = frozenset({"&&", "||", ";", "|"})
_PUNCTUATION = ";&|"
# words that make a command something else than a program run with its arguments
_KEYWORDS = frozenset({"!", "{", "}", "[[", "]]", "case", "coproc", "do", "done", "elif",
                       "else", "esac", "fi", "for", "function", "if", "in", "select", "then",
                       "time", "until", "while", "eval", "exec", "command", "builtin",
                       "source", ".", "alias", "trap"})


def split_script(script: str) -> list[list[str]] | None:
    """The commands of a plain script, each as its words (`git status && ls` ->
    `[["git", "status"], ["ls"]]`); None for any other script (see the module's text).

    A quoted `;`, `&&`, … (`echo ';'`) is taken as an operator too: that only asks for more
    (a command that is not one must then be allowed), never for less."""
    if any(char in _SHELL_META for char in script):
        return None
    lexer = shlex.shlex(script, posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace_split = True
    lexer.commenters = ""  # `#` mid-word is no comment to the shell: never drop what follows
    try:
        tokens = list(lexer)
    except ValueError:  # an unclosed quote: the shell refuses it
        return None
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in _OPERATORS:
            commands.append([])
        elif token and set(token) <= set(_PUNCTUATION):  # `&`, `;;`, `|&`: not plain
            return None
        else:
            commands[-1].append(token)
    for words in commands:
        if not words or "=" in words[0] or words[0] in _KEYWORDS:
            return None
    return commands


def _head(words: list[str], scope: Scope) -> Rule:
    """The words a rule keeps of one command: its program, and for a prefix its
    subcommand-shaped first argument (`status`, `run`, `install`) if it has one."""
    taken = [words[0]]
    if scope == "prefix" and len(words) > 1 and _SUBCOMMAND.fullmatch(words[1]):
        taken.append(words[1])
    return tuple(taken)


def shell_rules(argv: tuple[str, ...], scope: Scope) -> tuple[Rule, ...]:
    """The rules a decision remembers for a shell call's `argv`: "this prefix" (`prefix`) or
    "always" (`program`). One per distinct command of a script; the script itself when it is
    not plain."""
    binary, rest = argv[0], list(argv[1:])
    if binary in INTERPRETERS and len(rest) == 2 and rest[0] == "-c":
        commands = split_script(rest[1])
        if commands is None:
            return ((binary, "-c", rest[1]),)
        rules: list[Rule] = []
        for words in commands:
            rule = (binary, "-c", *_head(words, scope))
            if rule not in rules:
                rules.append(rule)
        return tuple(rules)
    return (_head([binary, *rest], scope),)


def shell_prefix(argv: tuple[str, ...]) -> tuple[Rule, ...]:
    """What "this prefix for the session" remembers."""
    return shell_rules(argv, "prefix")


def shell_program(argv: tuple[str, ...]) -> tuple[Rule, ...]:
    """What "always for this capsule" remembers."""
    return shell_rules(argv, "program")


def allowed(rules: Iterable[Rule], argv: tuple[str, ...]) -> bool:
    """Whether remembered `rules` (together) allow `argv`: a binary's arguments start with a
    rule's words; a script is one remembered as itself, or every one of its commands starts
    with a rule's words."""
    rules = [rule for rule in rules if rule and rule[0] == argv[0]]
    if argv[0] in INTERPRETERS and len(argv) == 3 and argv[1] == "-c":
        script = argv[2]
        if (argv[0], "-c", script) in rules:
            return True
        commands = split_script(script)
        heads = [rule[2:] for rule in rules if len(rule) >= 2 and rule[1] == "-c"]
        return commands is not None and all(
            any(tuple(words[:len(head)]) == head for head in heads) for words in commands)
    return any(argv[1:len(rule)] == rule[1:] for rule in rules)


def matches(rule: Rule, argv: tuple[str, ...]) -> bool:
    """Whether one remembered rule allows `argv`."""
    return allowed((rule,), argv)


def rules_text(rules: tuple[Rule, ...]) -> str:
    """Rules as a person reads them, words as written (no shell quoting): `git status`,
    `bash -c git status, ls`, `bash -c echo 'a' | wc (exactly this script)`."""
    parts: list[str] = []
    scripts: dict[str, list[str]] = {}
    for rule in rules:
        if len(rule) >= 2 and rule[0] in INTERPRETERS and rule[1] == "-c":
            if len(rule) == 3 and split_script(rule[2]) is None:
                script = " ⏎ ".join(line for line in rule[2].splitlines() if line.strip())
                parts.append(f"{rule[0]} -c {script} (exactly this script)")
            else:
                scripts.setdefault(rule[0], []).append(" ".join(rule[2:]))
        else:
            parts.append(" ".join(rule))
    parts += [f"{interpreter} -c {', '.join(heads)}" for interpreter, heads in scripts.items()]
    return "; ".join(parts)


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
