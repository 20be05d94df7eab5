"""`murmur-tui token [SESSION] [--credential NAME]`: a running session's door token, as Murmur's
`mur token` prints it (v0.11.0; docs/fleet.md, "Tokens"): exactly the token and a newline on
stdout, so `MURMUR_DOOR_TOKEN=$(murmur-tui token)` works.

SESSION is a session address (tui/core/trace/address.py: the full id, a suffix of four or more
characters, `@N`; default `@1`), resolved through layers 1 and 2 only — a slow door still has
its token. The token is read from the session's running record (`door_token` for the operator,
`credentials[NAME]` for a declared credential), the one place a session writes it. This is the
only command that prints a token.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tui.commands.exits import EXIT_OK


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "token", help="print a running session's door token, as `mur token` does",
        description="Print the door token of a running session (Murmur's sessions and "
                    "murmur-tui's) from its running record: exactly the token and a newline. "
                    "SESSION is its id, a suffix of 4+ characters, or @N (default @1, the "
                    "newest).")
    parser.add_argument("session", nargs="?", metavar="SESSION", default=None,
                        help="the session: full id, a unique suffix of 4+ characters, or @N")
    parser.add_argument("--credential", metavar="NAME", default=None,
                        help="the token of this credential declared under "
                             "network.authentication.credentials (default: operator)")


def run(args: argparse.Namespace, home: Path | None = None) -> int:
    """Print the token; SessionNotFound (E-RUN-022) or RunningSessionError (E-RUN-048 /
    E-RUN-049) when there is none to print."""
    from tui.core.fs.paths import murmur_home

    token = session_token(home or murmur_home(), args.session, args.credential)
    sys.stdout.write(token + "\n")
    sys.stdout.flush()
    return EXIT_OK


def session_token(home: Path, address: str | None, credential: str | None) -> str:
    """The token `mur token` would print, or RunningSessionError with Murmur's code."""
    from tui.core.errors import RunningSessionError
    from tui.core.running.tokens import OPERATOR, credential_names, read_token
    from tui.core.text.printable import printable
    from tui.core.trace.address import running_record

    record = running_record(home, address)
    name = credential or OPERATOR
    token = read_token(home, record, name) if record.url is not None else None
    if token is not None:
        return token
    names = credential_names(home, record) if record.url is not None else []
    session = record.session_id
    if not names:
        why = ("serves no door" if record.url is None else
               "has a public door: its capsule declares no network.authentication")
        raise RunningSessionError(f"{session} {why}, so it minted no token", code="E-RUN-048")
    shown = printable(name[:64], keep_newlines=False)
    raise RunningSessionError(f"{session} minted no credential '{shown}'; it has: "
                              f"{', '.join(names)}", code="E-RUN-049")
