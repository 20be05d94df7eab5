"""`hosts:` in `$MURMUR_HOME/tui/fleet.yaml`, and `fleet --host NAME=URL`: the machines beyond
this one whose sessions `murmur-tui fleet` shows (docs/fleet.md, "Hosts").

    hosts:
      - name: build-3
        doors: [http://build-3:7401, http://build-3:7402]
        token_command: [ssh, build-3, murmur-tui, token]   # the session id appended
      - name: cluster
        discover: [sh, -c, "kubectl get pods -l app=murmur -o json | jq -c '…'"]
        token_file: ~/.murmur-cluster-token

Each host has a `name` (printable, unique, not empty) and either `doors:` (door URLs) or
`discover:` (a command, an argv list run without a shell, printing a `ps --json` listing:
tui/core/hosts/discovery.py), and at most one token source (`token_file`, `token_env`,
`token_command`: tui/core/hosts/tokens.py). `interval:` (seconds) is how often it is looked at
again; `address:` the name to reach a discovered door bound to a wildcard address.

The file is read as untrusted input, as `notify:` is (tui/core/notify/settings.py): a broken
entry is one problem naming the file, the entry and the key, and the others still load; a
problem never quotes a value (a token may be one).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tui.core.errors import HostEntryRefused
from tui.core.hosts.tokens import TokenSource
from tui.core.running.address import door_host_port

MAX_NAME = 64
DEFAULT_INTERVAL = 5.0  # seconds between two looks at a host that answers
KEYS = ("name", "doors", "discover", "token_file", "token_env", "token_command", "address",
        "interval")


@dataclass(frozen=True)
class HostConfig:
    name: str
    doors: tuple[str, ...] = ()  # door URLs (`http://host:port`), or
    discover: tuple[str, ...] = ()  # a command whose stdout lists the host's sessions
    token: TokenSource = field(default_factory=TokenSource)
    address: str = ""  # reaches a discovered door bound to 0.0.0.0 / ::
    interval: float = DEFAULT_INTERVAL

    @property
    def where(self) -> str:
        """Where the host is looked for, for a person: the first door's `host:port` (and how
        many more), or the discovery's program. Never a token, never an argument."""
        from tui.core.hosts.run import shown_command

        if self.discover:
            return shown_command(self.discover)
        first = urlsplit(self.doors[0]).netloc if self.doors else ""
        return first + (f" +{len(self.doors) - 1}" if len(self.doors) > 1 else "")


@dataclass(frozen=True)
class HostsFile:
    hosts: tuple[HostConfig, ...] = ()
    problems: tuple[str, ...] = ()


def load_hosts(home: Path) -> HostsFile:
    """The hosts `fleet.yaml` lists, in its order, and one problem per entry not loaded."""
    from tui.core.notify.settings import fleet_file, fleet_section

    file = fleet_file(home)
    section, problem = fleet_section(home, "hosts", "no host beyond this machine is shown")
    if problem is not None:
        return HostsFile(problems=(problem,))
    if section is None:
        return HostsFile()
    if not isinstance(section, list):
        return HostsFile(problems=(f"{file}: hosts: expected a list of hosts (name, and doors "
                                   "or discover); no host beyond this machine is shown",))
    hosts: list[HostConfig] = []
    problems: list[str] = []
    for index, entry in enumerate(section):
        shown = f"hosts[{index}]"
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str) and \
                _name_problem(entry["name"]) is None:
            shown = f"{shown} ({entry['name']})"
        try:
            host = entry_of(entry, file.parent)
            if any(other.name == host.name for other in hosts):
                raise HostEntryRefused("name: another host above has this name; names are unique")
        except HostEntryRefused as exc:
            problems.append(f"{file}: {shown}: {exc.text}; this host is not shown")
            continue
        hosts.append(host)
    return HostsFile(tuple(hosts), tuple(problems))


def entry_of(entry: Any, folder: Path) -> HostConfig:
    """One entry of `hosts:`; HostEntryRefused naming the key at fault."""
    if not isinstance(entry, Mapping):
        raise HostEntryRefused("expected a mapping (name, and doors or discover)")
    unknown = sorted(str(key) for key in entry if key not in KEYS)
    if unknown:
        raise HostEntryRefused(f"unknown key {', '.join(unknown)[:200]} (known: {', '.join(KEYS)})")
    name = entry.get("name")
    if not isinstance(name, str):
        raise HostEntryRefused("name: expected the host's name (text)")
    problem = _name_problem(name)
    if problem is not None:
        raise HostEntryRefused(f"name: {problem}")
    if ("doors" in entry) == ("discover" in entry):
        raise HostEntryRefused("expected either doors (door URLs) or discover (a command), "
                           "exactly one")
    doors: tuple[str, ...] = ()
    discover: tuple[str, ...] = ()
    if "doors" in entry:
        value = entry["doors"]
        if not isinstance(value, list) or not value:
            raise HostEntryRefused("doors: expected a list of one or more door URLs")
        doors = tuple(door_url(item, f"doors[{i}]") for i, item in enumerate(value))
    else:
        discover = argv_of(entry["discover"], "discover")
    address = entry.get("address", "")
    if "address" in entry:
        if not discover:
            raise HostEntryRefused("address: only a discovered host has one (doors name theirs)")
        if not isinstance(address, str) or not _is_host(address):
            raise HostEntryRefused("address: expected a host name or IP address")
    interval = entry.get("interval", DEFAULT_INTERVAL)
    if isinstance(interval, bool) or not isinstance(interval, int | float) or \
            not 1 <= interval <= 3600:
        raise HostEntryRefused("interval: expected a number of seconds from 1 to 3600")
    return HostConfig(name, doors, discover, token_source(entry, folder), address,
                      float(interval))


def token_source(entry: Mapping[str, Any], folder: Path) -> TokenSource:
    given = [key for key in ("token_file", "token_env", "token_command") if key in entry]
    if len(given) > 1:
        raise HostEntryRefused(f"{given[1]}: a host has one token source; {given[0]} is given "
                           "too")
    if not given:
        return TokenSource()
    key = given[0]
    value = entry[key]
    if key == "token_file":
        if not isinstance(value, str) or not value or "\x00" in value:
            raise HostEntryRefused("token_file: expected the path of a file holding the token")
        path = Path(value).expanduser()
        return TokenSource("file", path=path if path.is_absolute() else folder / path)
    if key == "token_env":
        if not isinstance(value, str) or not value or "=" in value or "\x00" in value \
                or not value.isprintable():
            raise HostEntryRefused("token_env: expected the name of an environment variable")
        return TokenSource("env", variable=value)
    return TokenSource("command", argv=argv_of(value, "token_command"))


def argv_of(value: Any, key: str) -> tuple[str, ...]:
    """A command as an argv list: run as it is, never through a shell (`[sh, -c, "…"]` is
    how to ask for one)."""
    if isinstance(value, str):
        raise HostEntryRefused(f"{key}: expected a list (argv), run without a shell; for a "
                           f"pipeline write [sh, -c, \"…\"]")
    if not isinstance(value, list) or not value or \
            not all(isinstance(item, str) and "\x00" not in item for item in value) or \
            not value[0]:
        raise HostEntryRefused(f"{key}: expected a list of strings, the program first")
    return tuple(value)


def door_url(value: Any, key: str) -> str:
    """`http://host:port` (or https, or a bare `host:port`, read as http) with at most a path
    after it: nothing else an HTTP client could read as a user or a second address."""
    if not isinstance(value, str) or not value.isascii() or not value.isprintable() \
            or " " in value:
        raise HostEntryRefused(f"{key}: expected a door URL (http://host:port) of printable ASCII")
    url = value.rstrip("/")
    if "://" not in url:
        try:
            door_host_port(url)
        except ValueError as exc:
            raise HostEntryRefused(f"{key}: not a door URL: {exc}") from None
        return f"http://{url}"
    try:
        parts = urlsplit(url)
    except ValueError:  # a bracketed host that is not an IPv6 address, an unclosed bracket
        raise HostEntryRefused(f"{key}: not a door URL: its host is not a name or an "
                               "address") from None
    try:
        port = parts.port
    except ValueError:
        raise HostEntryRefused(f"{key}: not a door URL: its port is not 1 to 65535") from None
    if parts.scheme not in ("http", "https"):
        raise HostEntryRefused(f"{key}: not a door URL: its scheme is not http or https")
    if not parts.hostname or "@" in parts.netloc:
        raise HostEntryRefused(f"{key}: not a door URL: it names no host, or a user")
    if parts.query or parts.fragment or (port is not None and not 0 < port <= 65535):
        raise HostEntryRefused(f"{key}: not a door URL: it has a query, a fragment or a bad port")
    return url


def host_argument(text: str, token: str | None) -> HostConfig:
    """`--host NAME=URL` (a door host; `token` from `--token-file` / `$MURMUR_DOOR_TOKEN`);
    HostEntryRefused saying why it is not one."""
    name, equals, url = text.partition("=")
    if not equals:
        raise HostEntryRefused("expected NAME=URL (build-3=http://build-3:7401)")
    problem = _name_problem(name)
    if problem is not None:
        raise HostEntryRefused(f"its name: {problem}")
    return HostConfig(name, (door_url(url, "its URL"),),
                      token=TokenSource("given", token=token) if token else TokenSource())


def _name_problem(name: str) -> str | None:
    if not name.strip():
        return "a host's name is not empty ('' is this machine)"
    if not name.isprintable():
        return "a host's name holds only printable characters"
    if len(name) > MAX_NAME:
        return f"a host's name is at most {MAX_NAME} characters"
    return None


def _is_host(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        pass
    try:
        door_host_port(f"{text}:1")
        return True
    except ValueError:
        return False
