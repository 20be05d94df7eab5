"""`roster.yaml`, the file that names a formation's members (spec murmur-newest §7.1), read as
Murmur reads it:

    roster_version: 1
    members:
      - name: planner        # ^[a-z][a-z0-9-]{0,31}$
        capsule: planner     # an installed artifact's name
        version: 0.3.0       # exact: not latest/stable/edge, not a range
        entry: true          # `entry:` with no value is the same as leaving it out
      - name: coder
        source: ./coder      # murmur-tui's own: a capsule folder, instead of capsule+version
    reachability:            # absent / [] = no edges; the word `all`; or rules:
      - from: planner
        to: [coder]          # at least one; never `from` itself

Any key at any level that is not one of these, and any value of the wrong kind, refuses the file
with `E-ROS-001` (the first problem in the file, naming its line). A file that is not YAML is
refused the same way, by the project's YAML reader (`tui.core.manifest.located_yaml`).
What needs more than one entry to be seen (names used twice, the entry, who calls whom) is
admission's (`tui.core.formation.admission`), in Murmur's order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tui.core.errors import RosterShapeError, Where, YamlError
from tui.core.manifest.located_yaml import read
from tui.core.manifest.problems import describe, node_line

ROSTER_FILE = "roster.yaml"
ROSTER_VERSION = 1
SHAPE = "E-ROS-001"
MEMBER_NAME = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
RESERVED_VERSIONS = ("latest", "stable", "edge")
_RANGE = re.compile(r"[\s*^~<>=|,]|^[vV]?$")  # what makes a version a range, not one version
TOP_KEYS = ("roster_version", "members", "reachability")
MEMBER_KEYS = ("name", "capsule", "version", "entry", "source")
RULE_KEYS = ("from", "to")


@dataclass(frozen=True)
class RosterRefusal:
    """Why a roster is not admitted: Murmur's code, what is wrong, and where."""

    code: str
    text: str
    file: Path
    line: int | None = None
    member: str | None = None

    def place(self, file: str) -> str:
        return f"{file}:{self.line}" if self.line else file

    @property
    def short(self) -> str:
        """`roster.yaml:7: member 'coder': … [E-ROS-005]` (the file by its name)."""
        return f"{self.place(self.file.name)}: {self.text} [{self.code}]"

    def __str__(self) -> str:
        return f"{self.place(str(self.file))}: {self.text} [{self.code}]"


@dataclass(frozen=True)
class Member:
    name: str
    line: int  # the line the member's entry starts on
    capsule: str | None = None  # with version: an installed artifact
    version: str | None = None
    source: str | None = None  # murmur-tui's extension: a capsule folder, roster-relative
    entry: bool = False


@dataclass(frozen=True)
class ReachRule:
    """One `reachability` rule: `caller` may call each of `callees`."""

    caller: str
    callees: tuple[str, ...]
    line: int
    callee_lines: tuple[int, ...]  # the line of each callee


@dataclass(frozen=True)
class Roster:
    path: Path
    members: tuple[Member, ...]
    rules: tuple[ReachRule, ...] = ()
    reach_all: bool = False  # `reachability: all`

    @property
    def folder(self) -> Path:
        return self.path.parent


Reachability = tuple[tuple[ReachRule, ...], bool]


def _shape(line: int | None, text: str) -> RosterShapeError:
    return RosterShapeError(text, where=Where(None, line))


def roster_path(target: Path) -> Path:
    """A folder holding `roster.yaml`, or the file itself -> the file."""
    return target / ROSTER_FILE if target.is_dir() else target


def read_roster(path: Path) -> Roster | RosterRefusal:
    """The roster at `path`, or the first problem of its shape (`E-ROS-001`)."""
    try:
        data, node = read(path)
    except FileNotFoundError:
        return RosterRefusal(SHAPE, "no such file (a roster is a folder holding roster.yaml, "
                             "or its path)", path)
    except YamlError as exc:
        first = exc.problems[0]
        key = f"{first.key}: " if first.key else ""
        return RosterRefusal(SHAPE, f"{key}{first.message}", path, first.line)
    try:
        return _roster(path, data, node)
    except RosterShapeError as exc:
        return RosterRefusal(SHAPE, exc.text, path, exc.where.line if exc.where else None)


def _pairs(node: yaml.Node | None) -> dict[str, tuple[int | None, yaml.Node]]:
    """Each key of a mapping node: its line and its value's node."""
    found: dict[str, tuple[int | None, yaml.Node]] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            found.setdefault(str(key.value), (node_line(key), value))
    return found


def _items(node: yaml.Node | None, count: int) -> list[yaml.Node | None]:
    if isinstance(node, yaml.SequenceNode) and len(node.value) == count:
        return list(node.value)
    return [None] * count


def _known(data: dict[Any, Any], node: yaml.Node | None, allowed: tuple[str, ...],
           where: str, line: int | None) -> dict[str, tuple[int | None, yaml.Node]]:
    pairs = _pairs(node)
    for key in data:
        if key not in allowed:
            shown = f"{where}.{key}" if where else str(key)
            raise _shape(pairs.get(str(key), (line, None))[0],
                         f"{shown}: unknown key (a roster has only {', '.join(allowed)}"
                         f"{' here' if where else ''})")
    return pairs


def _roster(path: Path, data: Any, node: yaml.Node | None) -> Roster:
    if data is None:
        raise _shape(1, "is empty (a roster has roster_version: 1 and members)")
    if not isinstance(data, dict):
        raise _shape(1, f"expected a mapping (roster_version, members, reachability), got "
                     f"{describe(data)}")
    pairs = _known(data, node, TOP_KEYS, "", 1)
    version = data.get("roster_version")
    if "roster_version" not in data:
        raise _shape(1, "roster_version: is required but missing (roster_version: 1)")
    if version != ROSTER_VERSION or isinstance(version, bool):
        raise _shape(pairs["roster_version"][0], f"roster_version: expected "
                     f"{ROSTER_VERSION}, got {describe(version)}")
    if "members" not in data:
        raise _shape(1, "members: is required but missing (a list of the formation's members)")
    line, members_node = pairs["members"]
    members = data["members"]
    if not isinstance(members, list) or not members:
        got = "an empty list" if members == [] else describe(members)
        raise _shape(line, f"members: expected a list of at least one member, got {got}")
    read_members = tuple(_member(index, item, item_node, line or 1) for index, (item, item_node)
                         in enumerate(zip(members, _items(members_node, len(members)),
                                          strict=True)))
    rules, reach_all = _reachability(data, pairs)
    return Roster(path, read_members, rules, reach_all)


def _member(index: int, data: Any, node: yaml.Node | None, line: int) -> Member:
    where = f"members[{index}]"
    here = node_line(node) or line
    if not isinstance(data, dict):
        raise _shape(here, f"{where}: expected a mapping (name, capsule, version, entry), got "
                     f"{describe(data)}")
    pairs = _known(data, node, MEMBER_KEYS, where, here)

    def text(key: str) -> str | None:
        if key not in data:
            return None
        value = data[key]
        if not isinstance(value, str) or not value.strip():
            quote = " (quote it)" if isinstance(value, (int, float)) and \
                not isinstance(value, bool) else ""
            raise _shape(pairs[key][0], f"{where}.{key}: expected text, got "
                         f"{describe(value)}{quote}")
        return value.strip()

    name = text("name")
    if name is None:
        raise _shape(here, f"{where}.name: is required but missing")
    if not MEMBER_NAME.match(name):
        raise _shape(pairs["name"][0], f"{where}.name: {describe(name)} is not a member name "
                     "(a lowercase letter, then up to 31 lowercase letters, digits or '-')")
    capsule, version, source = text("capsule"), text("version"), text("source")
    label = f"{where} ({name})"
    if source is not None and (capsule is not None or version is not None):
        raise _shape(pairs["source"][0], f"{label}: give capsule and version, or source, not "
                     "both")
    if source is None:
        for key, value in (("capsule", capsule), ("version", version)):
            if value is None:
                raise _shape(here, f"{label}.{key}: is required but missing (or give source: "
                             "a capsule folder)")
        if version is not None and (version.lower() in RESERVED_VERSIONS or
                                    _RANGE.search(version)):
            raise _shape(pairs["version"][0], f"{label}.version: {describe(version)} is not "
                         "an exact version (latest, stable, edge and ranges are not allowed)")
    entry = data.get("entry")
    if entry is not None and not isinstance(entry, bool):
        raise _shape(pairs["entry"][0], f"{label}.entry: expected true or false, got "
                     f"{describe(entry)}")
    return Member(name, here, capsule, version, source, entry is True)


def _reachability(data: dict[str, Any], pairs: dict[str, tuple[int | None, yaml.Node]]
                  ) -> Reachability:
    value = data.get("reachability")
    if value is None or value == []:
        return (), False
    line, node = pairs["reachability"]
    if value == "all":
        return (), True
    if not isinstance(value, list):
        raise _shape(line, f"reachability: expected the word all or a list of rules (from, "
                     f"to), got {describe(value)}")
    rules = []
    for index, (item, item_node) in enumerate(zip(value, _items(node, len(value)),
                                                  strict=True)):
        where, here = f"reachability[{index}]", node_line(item_node) or line or 1
        if not isinstance(item, dict):
            raise _shape(here, f"{where}: expected a mapping (from, to), got {describe(item)}")
        keys = _known(item, item_node, RULE_KEYS, where, here)
        caller = item.get("from")
        if not isinstance(caller, str) or not caller:
            raise _shape(keys.get("from", (here, None))[0], f"{where}.from: expected a member's "
                         f"name, got {describe(caller) if 'from' in item else 'nothing'}")
        callees = item.get("to")
        to_line, to_node = keys.get("to", (here, None))
        if not isinstance(callees, list) or not callees or \
                not all(isinstance(name, str) and name for name in callees):
            got = "an empty list" if callees == [] else describe(callees) \
                if not isinstance(callees, list) else "something that is not a name"
            raise _shape(to_line, f"{where}.to: expected a list of at least one member's name, "
                         f"got {got}")
        if caller in callees:
            raise _shape(to_line, f"{where}.to: {caller!r} may not call itself")
        lines = tuple(node_line(n) or to_line or here
                      for n in _items(to_node, len(callees)))
        rules.append(ReachRule(caller, tuple(callees), here, lines))
    return tuple(rules), False
