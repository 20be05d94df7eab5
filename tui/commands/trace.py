"""`murmur-tui trace`: a session's trace.jsonl summed up as `mur trace show` does."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tui.commands.exits import EXIT_OK, error


def add_parser(commands: Any) -> None:
    trace = commands.add_parser(
        "trace", help="sum up a session's trace.jsonl as `mur trace show` does",
        description="Read a session's trace.jsonl and print its turns, tokens, tool, skill "
                    "and shell calls, hook failures, compaction, redundant calls, failures, "
                    "reopens and tasks. Without WORKDIR|FILE: the newest session under "
                    "./workdir/.")
    trace.add_argument("target", nargs="?", type=Path, metavar="WORKDIR|FILE",
                       help="a session workdir, a folder of sessions, or a trace.jsonl")
    trace.add_argument("--json", action="store_true",
                       help="one JSON object (summary, redundant calls, sections)")


def run(args: argparse.Namespace) -> int:
    import json

    from tui.core.fs.paths import murmur_home
    from tui.core.trace.details import load
    from tui.core.trace.locate import locate
    from tui.core.trace.show import remember_known_keys, render, to_json

    path = locate(args.target, Path.cwd())
    remember_known_keys(murmur_home())
    try:
        details = load(path)
    except OSError as exc:
        return error(f"{path}: cannot read the trace: {exc.strerror or exc}")
    if args.json:
        sys.stdout.write(json.dumps(to_json(details), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render(details))
    return EXIT_OK
