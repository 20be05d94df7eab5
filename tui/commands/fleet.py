"""`murmur-tui attach` and `murmur-tui fleet`: the command-line side of watching sessions over
their doors (docs/fleet.md)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from tui.commands.exits import error
from tui.core.errors import AttachError

TOKEN_ENV = "MURMUR_DOOR_TOKEN"  # a door token for `attach URL` (argv is readable by others)


def add_parsers(commands: Any) -> None:
    attach = commands.add_parser(
        "attach", help="the supervisor screen on a session running elsewhere",
        description="Attach to a running session over its A2A door: SESSION is a session id, "
                    "its last 4+ characters or @N (@1 the newest) from `murmur-tui ps`, or the "
                    "door's URL. "
                    "Leaving the screen leaves the session running.")
    attach.add_argument("target", metavar="SESSION|URL")
    given = attach.add_mutually_exclusive_group()
    given.add_argument("--token-file", type=Path,
                       help=f"a file holding the door's bearer token (default: the operator's "
                            f"token from the session's running record, else ${TOKEN_ENV})")
    add_credential_option(given, "the screen")
    attach.add_argument("--theme", help="the screen's theme")
    fleet = commands.add_parser(
        "fleet", help="every running session on one screen, grouped by what needs you",
        description="Every session serving a door on this machine (the running records under "
                    "$MURMUR_HOME/running), those of the hosts $MURMUR_HOME/tui/fleet.yaml "
                    "lists under hosts: and --host adds, and those you launch from the "
                    "screen, grouped Needs you / Working / Done. Enter attaches; q there "
                    "comes back.")
    fleet.add_argument("--theme", help="the screen's theme")
    fleet.add_argument("--host", action="append", default=[], metavar="NAME=URL",
                       help="also show the session serving the door at URL, under the host "
                            "NAME (repeatable; fleet.yaml's hosts: lists more)")
    fleet.add_argument("--token-file", type=Path, metavar="FILE",
                       help=f"a file holding the --host doors' bearer token (default: "
                            f"${TOKEN_ENV}, else none)")
    fleet.add_argument("--web", nargs="?", const="", default=None, metavar="HOST:PORT",
                       help="serve the fleet as a web page instead (default: 127.0.0.1 and a "
                            "free port) and print its links: the full one, and a read-only one "
                            "holding the sessions' watcher credential")


def add_credential_option(parser: Any, who: str) -> None:
    """`--credential NAME`, as Murmur's `mur token --credential` names it."""
    parser.add_argument(
        "--credential", metavar="NAME",
        help=f"present the token of this credential from the session's running record "
             f"(default: operator, which holds every scope); a credential declared under "
             f"network.authentication.credentials limits {who} to its scopes")


def resolve(home: Path, target: str, token_file: Path | None,
            credential: str | None = None) -> tuple[str, str, Any, str | None]:
    """(session id, url, running record or None, token) for SESSION|URL. A session's token is
    its record's (the operator's, or `credential`'s), presented only at the address checked
    to be the session's own socket (`url` is then that address)."""
    token = _token_from(token_file)
    if target.startswith(("http://", "https://")):
        if credential is not None:
            raise AttachError("--credential reads a token from a session's running record: "
                              "name the session (from `murmur-tui ps`), not a URL")
        return "", _checked_url(target), None, token if token else _env_token()
    from tui.core.errors import SessionNotFound
    from tui.core.running.probe import door_url, verify
    from tui.core.running.tokens import OPERATOR, credential_names, read_token
    from tui.core.trace.address import live_record

    try:  # Murmur's addresses, resolved the one way every command resolves them
        record = live_record(home, target)
    except SessionNotFound as exc:
        raise AttachError(exc.text, code=exc.code) from None
    if record.url is None:
        raise AttachError(f"session {record.session_id} serves no door: there is nothing to "
                          "attach to")
    name = credential or OPERATOR
    if token is None:
        token = read_token(home, record, name)
        if token is None and credential is not None:
            names = credential_names(home, record)
            raise AttachError(_no_credential(record.session_id, name, names),
                              code="E-RUN-049" if names else "E-RUN-048")
    verdict = verify(record, 3.0, token=token, credential=name)
    if verdict.state != "live":
        raise AttachError(f"session {record.session_id} is {verdict.state}: {verdict.reason}")
    # a token goes only where the door was found to be the session's own socket
    return (record.session_id, door_url(record, verdict), record,
            token if verdict.address else None)


def _no_credential(session_id: str, name: str, names: list[str]) -> str:
    """Murmur's E-RUN-048 / E-RUN-049 words for a credential the record does not hold."""
    if not names:
        return (f"{session_id} has a public door or its record holds no token: its capsule "
                "declares no network.authentication, so it minted no credential "
                f"{_quoted(name)}")
    return f"{session_id} minted no credential {_quoted(name)}; it has: {', '.join(names)}"


def _quoted(name: str) -> str:
    from tui.core.text.printable import printable

    return f"'{printable(name[:64], keep_newlines=False)}'"


def _checked_url(target: str) -> str:
    """A door URL given on the command line, refused here when no HTTP client could use it."""
    import httpx

    url = target.rstrip("/")
    problem = None if url.isascii() and url.isprintable() else \
        "it holds a character that is not printable ASCII"
    if problem is None:
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, ValueError) as exc:
            problem = str(exc).splitlines()[0][:200] if str(exc) else "it does not parse"
        else:
            if parsed.scheme not in ("http", "https"):
                problem = f"its scheme is {parsed.scheme[:20]!r}, not http or https"
            elif not parsed.host:
                problem = "it names no host"
            elif parsed.port is not None and not 0 < parsed.port <= 65535:
                problem = f"{parsed.port} is not a port (1 to 65535)"
            elif parsed.userinfo:
                problem = "it holds a user name or password (give a token with --token-file)"
    if problem is not None:
        raise AttachError(f"{_quoted(target)} is not a door URL: {problem}")
    return url


def _env_token() -> str | None:
    from tui.core.running.address import token_problem

    token = os.environ.get(TOKEN_ENV)
    if not token:  # unset or empty: no token
        return None
    problem = token_problem(token)
    if problem is not None:
        raise AttachError(f"${TOKEN_ENV} is not a bearer token: {problem}")
    return token


def _token_from(path: Path | None) -> str | None:
    """The token in a file the person named: a regular file (a link to one is followed: the
    path is theirs), at most 4 KiB, never waited on; one trailing newline is
    dropped, and the rest must be one bearer token (printable ASCII, no space)."""
    if path is None:
        return None
    from tui.core.errors import HostTokenRefused
    from tui.core.hosts.tokens import token_from_file

    try:
        return token_from_file(path, f"--token-file {path}")
    except HostTokenRefused as exc:
        raise AttachError(exc.text) from None


def attach(args: argparse.Namespace) -> int:
    from tui.core.fs.paths import murmur_home

    home = murmur_home()
    session_id, url, record, token = resolve(home, args.target, args.token_file,
                                             args.credential)
    if not on_a_terminal():  # after resolve: a wrong address is told as such, anywhere
        return error(NEEDS_TERMINAL.format(command="attach"))
    code, to_fleet = _attach(home, session_id, url, record, token, args.theme)
    return fleet(args) if to_fleet else code


NEEDS_TERMINAL = "{command} needs a terminal: its stdin and stdout are not one"


def on_a_terminal() -> bool:
    """A screen drawn into a pipe writes escape codes there and waits for keys that never
    come: the screen commands refuse, as `browse` does, before anything is drawn."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def _attach(home: Path, session_id: str, url: str, record: Any, token: str | None,
            theme: str | None, screen: Any = None) -> tuple[int, bool]:
    """The attached screen (`screen`: its app class, the supervisor's by default); (exit
    status, whether F asked for the fleet screen)."""
    from tui.app.attach import RemoteSource

    if screen is None:
        from tui.app.app import SupervisorApp as screen
    remote = RemoteSource(home, session_id, url, record, token=token)
    screen(home, theme=theme, source=remote).run()
    if remote.why_gone:
        sys.stderr.write(f"murmur-tui: {url}: {remote.why_gone}\n")
        return 1, remote.to_fleet
    return 0, remote.to_fleet


def fleet(args: argparse.Namespace) -> int:
    """The fleet screen; Enter attaches to a session and `q` there comes back here. With
    `--web`, the fleet is served as a web page (fleet_web.py); a process textual-serve starts
    for a browser tab runs this same loop under its viewer (tui/web/served.py)."""
    from tui.core.fs.paths import murmur_home
    from tui.web import served_link

    # a wrong --host is told as such, anywhere (as attach tells a wrong address); `attach`'s
    # F comes here with attach's arguments, which name no host
    given = given_hosts(args.host, args.token_file) if hasattr(args, "host") else []
    if getattr(args, "web", None) is not None:  # `attach` comes here too, with no --web
        from tui.commands.fleet_web import serve

        return serve(args.web, args.theme, host_arguments(args))
    link = served_link()
    if link is None and not on_a_terminal():
        return error(NEEDS_TERMINAL.format(command="fleet"))
    from tui.web.served import viewer

    home = murmur_home()
    seen = viewer(link, home)
    kept: dict[str, Any] = {}
    launched: list[Any] = []
    notice: str | None = None
    told: set[Any] = set()  # the questions already told of: coming back never tells them again
    while True:
        app = seen.fleet_app(home, theme=args.theme, kept=kept, launched=launched,
                             notice=notice, told=told, given_hosts=given)
        app.run()
        kept, launched, notice, told = app.ended(), app.launched, None, app.told_questions
        target = app.open_request
        if target is None or seen.gone():
            return 0
        if target.host:  # another machine's: its door, with the token its host gave
            url, record, token = target.url, None, target.token
        else:
            try:
                _, url, record, token = resolve(home, target.session_id, None,
                                                seen.credential)
            except AttachError as exc:
                notice = exc.text
                continue
        _attach(home, target.session_id, url, record, token, args.theme, seen.supervisor_app)
        if seen.gone():
            return 0


def host_arguments(args: argparse.Namespace) -> list[str]:
    """`--host` and `--token-file` again, for the fleet a browser tab starts (`--web`)."""
    argv = [item for value in args.host for item in ("--host", value)]
    if args.token_file is not None:
        argv += ["--token-file", str(args.token_file.absolute())]
    return argv


def given_hosts(values: list[str], token_file: Path | None) -> list[Any]:
    """`--host NAME=URL`s, each with the token `attach` would take (`--token-file`, else
    `$MURMUR_DOOR_TOKEN`, else none); AttachError (exit 2) naming a bad one."""
    from tui.core.errors import HostEntryRefused
    from tui.core.hosts.config import host_argument
    from tui.core.text.printable import printable

    if token_file is not None and not values:
        raise AttachError("--token-file is the --host doors' token: give --host NAME=URL")
    token = (_token_from(token_file) or _env_token()) if values else None
    hosts: list[Any] = []
    for value in values:
        try:
            host = host_argument(value, token)
        except HostEntryRefused as exc:
            raise AttachError(f"--host {printable(value[:80], keep_newlines=False)}: "
                              f"{exc.text}") from None
        if any(other.name == host.name for other in hosts):
            raise AttachError(f"--host {printable(host.name)}: given twice; a host's name is "
                              "unique")
        hosts.append(host)
    return hosts
