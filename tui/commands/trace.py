"""`murmur-tui trace [show|steps|diff|report]`: a session's trace.jsonl read as `mur trace` reads
it (Murmur v0.11, spec §6.5). `show` is the default, so `murmur-tui trace [SESSION]` still
works; a session is named by Murmur's addresses (tui/core/trace/address.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tui.commands.exits import EXIT_OK, error

SUBCOMMANDS = ("show", "steps", "diff", "report")
# which options each subcommand takes (a stray one is refused, not ignored)
_TAKES = {"show": {"json"}, "steps": {"verbose"}, "diff": set(), "report": {"last", "since"}}


def add_parser(commands: Any) -> None:
    trace = commands.add_parser(
        "trace", help="read a session's trace.jsonl as `mur trace show|steps|diff|report` does",
        usage="murmur-tui trace [show] [SESSION] [--json] [--workdir DIR]\n"
              "       murmur-tui trace [show] FORMATION-ID [--json] [--workdir DIR]\n"
              "       murmur-tui trace steps [SESSION] [--verbose] [--workdir DIR]\n"
              "       murmur-tui trace diff [BEFORE AFTER] [--workdir DIR]\n"
              "       murmur-tui trace report [SESSION ...] [--last N | --since 2h] "
              "[--workdir DIR]",
        description="show: a session's turns, tokens, tool, skill and shell calls, hook "
                    "failures, compaction, redundant calls, failures, reopens and tasks. "
                    "steps: the session → task → turn tree. diff: two sessions' metrics and "
                    "where their prompts diverge (default @2 @1). report: statistics over "
                    "many sessions. A formation id (frm_…) lists the formation's members "
                    "and their calls to each other. SESSION is a session id, its last 4+ "
                    "characters, @N (@1 the newest) among the session folders of the workdir "
                    "(default ./workdir), or a path: a session folder, a folder of sessions, "
                    "or a trace.jsonl.")
    trace.add_argument("words", nargs="*", metavar="ARG",
                       help="a subcommand (show, steps, diff, report) and its sessions")
    trace.add_argument("--workdir", type=Path, metavar="DIR",
                       help="the folder holding the session folders (default: ./workdir)")
    trace.add_argument("--json", action="store_true",
                       help="show: one JSON object (summary, redundant calls, sections)")
    trace.add_argument("--verbose", action="store_true",
                       help="steps: each tool call's first string input")
    trace.add_argument("--last", type=int, metavar="N", help="report: the N newest sessions")
    trace.add_argument("--since", metavar="DURATION",
                       help="report: sessions started within 30m, 2h, 1d …")


def run(args: argparse.Namespace) -> int:
    from tui.core.fs.paths import murmur_home
    from tui.core.trace.show import remember_known_keys

    words = list(args.words)
    command = words.pop(0) if words and words[0] in SUBCOMMANDS else "show"
    given = {name for name in ("json", "verbose", "last", "since")
             if getattr(args, name) not in (None, False)}
    stray = sorted(given - _TAKES[command])
    if stray:
        return error(f"trace {command} takes no --{stray[0]}")
    remember_known_keys(murmur_home())
    if command == "show":
        return _show(args, words)
    if command == "steps":
        return _steps(args, words)
    if command == "diff":
        return _diff(args, words)
    return _report(args, words)


def _one(words: list[str], command: str) -> str | None:
    if len(words) > 1:
        raise _usage(f"trace {command} takes one session; {len(words)} were given")
    return words[0] if words else None


def _usage(text: str) -> Exception:
    from tui.core.errors import TraceNotFound

    return TraceNotFound(text)


def _trace(args: argparse.Namespace, text: str | None, default: str = "@1") -> Path:
    from tui.core.trace.address import trace_of

    return trace_of(text, args.workdir, Path.cwd(), default)


def _show(args: argparse.Namespace, words: list[str]) -> int:
    import json

    from tui.core.trace.details import load
    from tui.core.trace.formation import is_formation_address
    from tui.core.trace.show import render, to_json

    text = _one(words, "show")
    if text is not None and is_formation_address(text):
        return _formation(args, text)
    path = _trace(args, text)
    try:
        details = load(path)
    except OSError as exc:
        return error(f"{path}: cannot read the trace: {exc.strerror or exc}")
    if args.json:
        sys.stdout.write(json.dumps(to_json(details), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render(details))
    return EXIT_OK


def _formation(args: argparse.Namespace, formation_id: str) -> int:
    """`trace frm_…`: the formation's members and their calls (tui/core/trace/formation.py)."""
    import json

    from tui.core.fs.paths import murmur_home
    from tui.core.trace import formation

    found = formation.formation_trace(formation_id, args.workdir, Path.cwd(), murmur_home())
    if found.unreadable:
        sys.stderr.write(f"note: {found.unreadable} trace(s) of {formation_id} could not be "
                         "read\n")
    if args.json:
        sys.stdout.write(json.dumps(formation.to_json(found), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(formation.render(found))
    return EXIT_OK


def _steps(args: argparse.Namespace, words: list[str]) -> int:
    from tui.core.trace.reader import read_trace
    from tui.core.trace.steps import render_steps

    path = _trace(args, _one(words, "steps"))
    try:
        lines = read_trace(path)
    except OSError as exc:
        return error(f"{path}: cannot read the trace: {exc.strerror or exc}")
    sys.stdout.write(render_steps(path, lines, args.verbose))
    return EXIT_OK


def _diff(args: argparse.Namespace, words: list[str]) -> int:
    from tui.core.errors import MurmurTuiError, TraceNotFound
    from tui.core.trace.compare import Metrics, render_diff, wire_turns
    from tui.core.trace.details import load
    from tui.core.trace.reader import read_trace

    if len(words) not in (0, 2):
        raise TraceNotFound(f"trace diff takes 0 or 2 sessions, got {len(words)}: "
                            "murmur-tui trace diff [BEFORE AFTER]")
    before, after = words if words else ["@2", "@1"]
    found: list[Path] = []
    problems: list[str] = []
    for label, text in (("before", before), ("after", after)):
        try:
            found.append(_trace(args, text))
        except MurmurTuiError as exc:  # both sides are said, as Murmur says them
            problems.append(f"{label}: {exc}")
    if problems:
        return error("\n".join(problems))
    runs = []
    for path in found:
        try:
            runs.append((Metrics.of(load(path)), wire_turns(path, read_trace(path))))
        except OSError as exc:
            return error(f"{path}: cannot read the trace: {exc.strerror or exc}")
    (a, wire_a), (b, wire_b) = runs
    sys.stdout.write(render_diff(a, b, wire_a, wire_b))
    return EXIT_OK


def _report(args: argparse.Namespace, words: list[str]) -> int:
    import time

    from tui.core.errors import MurmurTuiError, TraceNotFound
    from tui.core.trace.address import sessions_in
    from tui.core.trace.analyse import TaskSummary
    from tui.core.trace.compare import Metrics
    from tui.core.trace.details import load
    from tui.core.trace.report import choose, render_report

    if words and (args.last is not None or args.since is not None):
        flag = "--since" if args.since is not None else "--last"
        raise TraceNotFound(f"{flag} cannot be combined with explicit session arguments")
    if args.last is not None and args.last < 1:
        raise TraceNotFound("--last must be at least 1")
    workdir = args.workdir if args.workdir is not None else Path.cwd() / "workdir"
    if words:
        paths = [_trace(args, text) for text in words]
    else:
        if not workdir.is_dir():
            raise TraceNotFound(f"workdir not found: {workdir}", code="E-IO-001")
        paths = choose(sessions_in(workdir), workdir, args.last, args.since,
                       time.time_ns() // 1_000_000)
    metrics: list[Metrics] = []
    tasks: list[TaskSummary] = []
    skipped = 0
    for path in paths:
        try:
            details = load(path)
        except (OSError, MurmurTuiError):  # empty, cut or unreadable: as Murmur, skipped
            skipped += 1
            continue
        if not details.summary.finished:  # still running, or killed: Murmur skips it too
            skipped += 1
            continue
        metrics.append(Metrics.of(details))
        if len(details.summary.tasks) > 1:
            tasks.extend(details.summary.tasks)
    if not metrics:
        raise TraceNotFound("no complete sessions to report — all traces are empty or "
                            "incomplete", code="E-TRC-001")
    if skipped:
        sys.stderr.write(f"note: skipped {skipped} incomplete session(s)\n")
    sys.stdout.write(render_report(workdir, metrics, tasks))
    return EXIT_OK
