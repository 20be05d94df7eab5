"""`murmur-tui new NAME` and `murmur-tui new --roster NAME`: scaffold a capsule, or a formation
of two as `mur new --roster` does, in `./NAME`, ready to run offline (tui/core/scaffold).

Refusals are Murmur's codes: E-NEW-002 a name that is not an artifact name, E-NEW-003 a
`./NAME` that exists (both exit 2, bad input: nothing was written), E-IO-003 a write the file
system refused (exit 1: nothing was left behind).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tui.commands.exits import EXIT_NOT_OK, EXIT_OK, error


def add_parser(commands: Any) -> None:
    new = commands.add_parser(
        "new", help="scaffold a capsule (or, with --roster, a formation) that runs offline",
        description="Write ./NAME: a capsule (murmur.yaml, a script for the built-in scripted "
                    "driver, task.md) that `murmur-tui launch NAME` runs at once, offline; "
                    "with --roster, a formation of two as `mur new --roster` writes one "
                    "(roster.yaml, lead/ the entry member, worker/ the member lead calls), "
                    "which `murmur-tui doctor NAME` admits. NAME is an artifact name: "
                    "lowercase letters, digits and '-', not starting or ending with '-' "
                    "(E-NEW-002); ./NAME must not exist (E-NEW-003). Nothing is written "
                    "unless all of it is.")
    new.add_argument("name", metavar="NAME", help="the folder written in the current "
                     "directory, and the capsule's name (with --roster: the formation's, and "
                     "the prefix of its capsules' names, NAME-lead and NAME-worker)")
    new.add_argument("--roster", action="store_true",
                     help="scaffold a formation of two capsules, as `mur new --roster NAME`")


def run(args: argparse.Namespace) -> int:
    from tui.core.errors import ScaffoldError
    from tui.core.scaffold.capsule import capsule_files
    from tui.core.scaffold.formation import formation_files
    from tui.core.scaffold.writer import write_scaffold

    name: str = args.name
    try:
        files = formation_files(name) if args.roster else capsule_files(name)
        write_scaffold(Path.cwd(), name, files)
    except ScaffoldError as exc:
        refused = error(str(exc))  # exit 2: bad input, nothing was written
        return EXIT_NOT_OK if exc.code == "E-IO-003" else refused
    lines = _formation_lines(name) if args.roster else _capsule_lines(name)
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    return EXIT_OK


def _capsule_lines(name: str) -> list[str]:
    from tui.core.scaffold.capsule import VERSION

    return [
        f"Scaffolded capsule '{name}' in ./{name}",
        *_listed(name, [
            ("murmur.yaml", f"capsule {name}@{VERSION}, the built-in scripted driver"),
            ("script.yaml", "what the scripted driver answers, a turn at a time"),
            ("task.md", "the task it runs when given none"),
            (".gitignore", "the sessions' files (workdir/)"),
        ]),
        "",
        "Next:",
        f"  murmur-tui launch {name}",
        f"  murmur-tui launch {name} --headless",
    ]


def _formation_lines(name: str) -> list[str]:
    from tui.core.scaffold.formation import VERSION

    return [
        f"Scaffolded formation '{name}' in ./{name}",
        *_listed(name, [
            ("roster.yaml", "lead is the entry member; lead may call worker"),
            ("lead/murmur.yaml", f"capsule {name}-lead@{VERSION}"),
            ("lead/script.yaml", "lead calls worker, then answers with worker's answer"),
            ("lead/task.md", "the formation's task when it is given none"),
            ("worker/murmur.yaml", f"capsule {name}-worker@{VERSION}, serves peers"),
            ("worker/script.yaml", "worker's answer"),
            (".gitignore", "the sessions' files (workdir/, .murmur/)"),
        ]),
        "",
        "Next:",
        *_next([(f"murmur-tui doctor {name}", "the roster, admitted as Murmur admits it"),
                (f"murmur-tui launch --roster {name}", "the formation: lead asks worker"),
                (f"murmur-tui launch {name}/worker", "a member on its own")]),
    ]


def _next(steps: list[tuple[str, str]]) -> list[str]:
    """`  command   what it does`, the descriptions in one column."""
    width = max(len(command) for command, _ in steps)
    return [f"  {command.ljust(width)}   {what}" for command, what in steps]


def _listed(name: str, files: list[tuple[str, str]]) -> list[str]:
    """`  NAME/path   what it is`, the descriptions in one column."""
    width = max(len(f"{name}/{path}") for path, _ in files) + 3
    return [f"  {f'{name}/{path}':<{width}}{what}" for path, what in files]

