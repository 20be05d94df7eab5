"""`murmur-tui attach` and `murmur-tui fleet`: the command-line side of watching sessions over
their doors (docs/fleet.md)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from tui.core.errors import MurmurTuiError

TOKEN_ENV = "MURMUR_DOOR_TOKEN"  # a door token for `attach URL` (argv is readable by others)


class AttachError(MurmurTuiError):
    pass


def add_parsers(commands: Any) -> None:
    attach = commands.add_parser(
        "attach", help="the supervisor screen on a session running elsewhere",
        description="Attach to a running session over its A2A door: SESSION is a session id "
                    "(or its last 4+ characters) from `murmur-tui ps`, or the door's URL. "
                    "Leaving the screen leaves the session running.")
    attach.add_argument("target", metavar="SESSION|URL")
    attach.add_argument("--token-file", type=Path,
                        help=f"a file holding the door's bearer token (default: the token "
                             f"beside the session's running record, else ${TOKEN_ENV})")
    attach.add_argument("--theme", help="the screen's theme")
    fleet = commands.add_parser(
        "fleet", help="every running session on one screen, grouped by what needs you",
        description="Every session serving a door on this machine (the running records under "
                    "$MURMUR_HOME/running), and those you launch from the screen, grouped "
                    "Needs you / Working / Done. Enter attaches; q there comes back.")
    fleet.add_argument("--theme", help="the screen's theme")


def resolve(home: Path, target: str, token_file: Path | None) -> tuple[str, str, Any, str | None]:
    """(session id, url, running record or None, token) for SESSION|URL."""
    token = _token_from(token_file)
    if target.startswith(("http://", "https://")):
        return "", target.rstrip("/"), None, token if token else os.environ.get(TOKEN_ENV)
    from tui.core.running import door_address, read_records, read_token, verify

    records = [found.record for found in read_records(home) if found.record is not None]
    exact = [r for r in records if r.session_id == target]
    matches = exact or ([r for r in records if len(target) >= 4 and
                         (r.session_id.endswith(target) or r.session_id.startswith(target))])
    if not matches:
        raise AttachError(f"no running session {target!r} under {home / 'running'} "
                          "(`murmur-tui ps` lists them)")
    if len(matches) > 1:
        raise AttachError(f"{target!r} names {len(matches)} sessions: "
                          f"{', '.join(r.session_id for r in matches[:5])}; give more of it")
    record = matches[0]
    token = token or read_token(home, record)
    verdict = verify(record, 3.0, token=token)
    if verdict.state != "live":
        raise AttachError(f"session {record.session_id} is {verdict.state}: {verdict.reason}")
    return record.session_id, door_address(record.url), record, token


def _token_from(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise AttachError(f"--token-file {path}: {exc.strerror or exc}") from None
    if not text or len(text.split()) != 1:
        raise AttachError(f"--token-file {path}: expected one token on one line")
    return text


def attach(args: argparse.Namespace) -> int:
    from tui.core.paths import murmur_home

    home = murmur_home()
    session_id, url, record, token = resolve(home, args.target, args.token_file)
    code, to_fleet = _attach(home, session_id, url, record, token, args.theme)
    return fleet(args) if to_fleet else code


def _attach(home: Path, session_id: str, url: str, record: Any, token: str | None,
            theme: str | None) -> tuple[int, bool]:
    """The attached screen; (exit status, whether F asked for the fleet screen)."""
    from tui.app.attach import AttachApp

    app = AttachApp(home, session_id, url, record, theme=theme, token=token)
    app.run()
    if app.why_gone:
        sys.stderr.write(f"murmur-tui: {url}: {app.why_gone}\n")
        return 1, app.to_fleet
    return 0, app.to_fleet


def fleet(args: argparse.Namespace) -> int:
    """The fleet screen; Enter attaches to a session and `q` there comes back here."""
    from tui.app.fleet.app import FleetApp
    from tui.core.paths import murmur_home

    home = murmur_home()
    kept: dict[str, Any] = {}
    launched: list[Any] = []
    notice: str | None = None
    while True:
        app = FleetApp(home, theme=args.theme, kept=kept, launched=launched, notice=notice)
        app.run()
        kept, launched, notice = app.ended(), app.launched, None
        target = app.open_request
        if target is None:
            return 0
        try:
            _, url, record, token = resolve(home, target.session_id, None)
        except AttachError as exc:
            notice = exc.text
            continue
        _attach(home, target.session_id, url, record, token, args.theme)
