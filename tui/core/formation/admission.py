"""Admitting a roster as `mur run --roster` does (spec murmur-newest §7.2): the checks in
Murmur's order, the first failure wins, members in roster order.

| order | check                                                          | code       |
|------:|----------------------------------------------------------------|------------|
|     1 | the file reads, its shape is valid (`roster.py`)              | E-ROS-001  |
|     2 | member names are unique                                        | E-ROS-003  |
|     3 | exactly one member is `entry: true`                            | E-ROS-002  |
|     4 | every `from` / `to` names a member                             | E-ROS-004  |
|     5 | the entry member is in no `to`                                 | E-ROS-008  |
|     6 | the member is installed at its version (project store, then   | E-ROS-007  |
|       | global) and the lock agrees with it; its manifest parses      | E-REG-005  |
|     7 | every member a rule calls serves peers                         | E-ROS-005  |
|     8 | with any edge, every member's door authenticates               | E-ROS-006  |

Step 6 takes each member in turn: found in a store and intact (its sidecar), then its
`murmur.lock` pin (beside the roster; a member the lock does not name is not pinned — admission
never writes the lock), then its packed `murmur.yaml` unpacked and read by the manifest reader.
A member with murmur-tui's `source:` is a capsule folder read in place (no store, no pin).
`reachability: all` is every ordered pair of distinct members that both serve peers, except
into the entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tui.core.artifacts import archive, store
from tui.core.artifacts.pins import Lock, lock_path, platform_tag, read_lock
from tui.core.artifacts.resolve import stores_of
from tui.core.errors import ManifestError, MurmurTuiError
from tui.core.formation.roster import Member, Roster, RosterRefusal, read_roster
from tui.core.manifest.model import MANIFEST_NAME, Capsule
from tui.core.manifest.reader import load_capsule

NOT_INSTALLED = "E-ROS-007"
LOCK_DISAGREES = "E-REG-005"
LOCK_UNREADABLE = "E-RUN-003"


@dataclass(frozen=True)
class AdmittedMember:
    name: str
    entry: bool
    capsule: Capsule  # its manifest, as the manifest reader read it
    artifact: str | None  # `name@version` from a store; None for a `source:` member
    where: str  # project | global | source
    folder: Path  # the capsule folder: unpacked from the archive, or the source folder
    archive: Path | None = None  # the store's `.mur.zip`
    sha256: str | None = None  # of the archive: what admission binds the member to
    source: str | None = None  # the roster's `source:` text, for a source member

    @property
    def label(self) -> str:
        """`coder@1.2.0`, or `coder@0.1.0 (source ./coder)`."""
        if self.artifact is not None:
            return self.artifact
        return f"{self.capsule.name}@{self.capsule.version} (source {self.source})"

    @property
    def manifest(self) -> str:
        """Its manifest, for a message: `coder@1.2.0's murmur.yaml`, or the source file."""
        if self.artifact is not None:
            return f"{self.artifact}'s murmur.yaml"
        return str(Path(self.source or ".") / self.capsule.manifest_path.name)

    @property
    def serves_peers(self) -> bool:
        return self.capsule.exports.peer_tasks_accept

    @property
    def authenticated(self) -> bool:
        return self.capsule.network.authentication is not None


@dataclass(frozen=True)
class Admitted:
    roster: Roster
    members: tuple[AdmittedMember, ...]  # roster order
    edges: tuple[tuple[str, str], ...]  # (caller, callee), rules' order (or expanded `all`)

    @property
    def entry(self) -> AdmittedMember:
        return next(member for member in self.members if member.entry)

    def callees(self, name: str) -> tuple[str, ...]:
        return tuple(callee for caller, callee in self.edges if caller == name)


def admit(path: Path, home: Path) -> Admitted | RosterRefusal:
    """The roster at `path` admitted, or the first check it fails. `home` is `$MURMUR_HOME`
    (its `artifacts/` is the global store)."""
    roster = read_roster(path)
    if isinstance(roster, RosterRefusal):
        return roster
    refusal = _names(roster) or _entry(roster) or _rules(roster)
    if refusal is not None:
        return refusal
    members: list[AdmittedMember] = []
    lock: list[Lock | None] = []  # read once, when the first store member needs it
    for member in roster.members:
        found = _resolve(roster, member, home, lock)
        if isinstance(found, RosterRefusal):
            return found
        members.append(found)
    edges = _edges(roster, members)
    return _peers(roster, members, edges) or Admitted(roster, tuple(members), edges)


def _refuse(roster: Roster, code: str, text: str, line: int | None,
            member: str | None = None) -> RosterRefusal:
    return RosterRefusal(code, text, roster.path, line, member)


def _names(roster: Roster) -> RosterRefusal | None:
    seen: dict[str, int] = {}
    for member in roster.members:
        if member.name in seen:
            return _refuse(roster, "E-ROS-003", f"member name {member.name!r} is used twice "
                           f"(lines {seen[member.name]} and {member.line}); names are unique",
                           member.line, member.name)
        seen[member.name] = member.line
    return None


def _entry(roster: Roster) -> RosterRefusal | None:
    entries = [member for member in roster.members if member.entry]
    if len(entries) == 1:
        return None
    if not entries:
        return _refuse(roster, "E-ROS-002", "no member is the entry (set entry: true on "
                       "exactly one member)", roster.members[0].line)
    shown = " and ".join(f"{m.name!r} (line {m.line})" for m in entries)
    every = "both" if len(entries) == 2 else "all"
    return _refuse(roster, "E-ROS-002", f"members {shown} are {every} marked entry: true; "
                   "exactly one member is the entry", entries[1].line, entries[1].name)


def _rules(roster: Roster) -> RosterRefusal | None:
    names = [member.name for member in roster.members]
    for index, rule in enumerate(roster.rules):
        for role, name, line in (("from", rule.caller, rule.line),
                                 *(("to", n, at) for n, at in
                                   zip(rule.callees, rule.callee_lines, strict=True))):
            if name not in names:
                return _refuse(roster, "E-ROS-004", f"reachability[{index}].{role}: {name!r} "
                               f"is not a member (members: {', '.join(names)})", line)
    entry = next(member for member in roster.members if member.entry)
    for index, rule in enumerate(roster.rules):
        for name, line in zip(rule.callees, rule.callee_lines, strict=True):
            if name == entry.name:
                return _refuse(roster, "E-ROS-008", f"reachability[{index}].to: {name!r} is "
                               f"the entry member, which no member may call", line, name)
    return None


def _resolve(roster: Roster, member: Member, home: Path,
             lock: list[Lock | None]) -> AdmittedMember | RosterRefusal:
    def refuse(text: str, code: str = NOT_INSTALLED) -> RosterRefusal:
        return _refuse(roster, code, f"member {member.name!r}: {text}", member.line,
                       member.name)

    if member.source is not None:
        folder = roster.folder / member.source
        try:
            holds = (folder / MANIFEST_NAME).is_file() or folder.name == MANIFEST_NAME
        except OSError:
            holds = False
        if not holds:
            return refuse(f"source {member.source} is not a capsule folder (no {MANIFEST_NAME} "
                          f"in {folder})")
        parsed = _manifest(folder, refuse)
        if isinstance(parsed, RosterRefusal):
            return parsed
        return AdmittedMember(member.name, member.entry, parsed, None, "source",
                              parsed.root, source=member.source)
    name, version = member.capsule or "", member.version or ""
    label = f"{name}@{version}"
    looked: list[str] = []
    for where, place in stores_of(roster.folder, home, name, version):
        looked.append(str(place))
        try:
            payload = store.find(place, name, version, "wasm")
            if payload is None:
                continue
            if payload.layout != "zip":
                return refuse(f"{payload.file} is not a capsule artifact (mur install writes "
                              f"{name}-{version}.mur.zip)")
            data, digest = store.verify(payload)
        except OSError as exc:
            return refuse(f"{place} cannot be read ({exc.strerror or exc})")
        except MurmurTuiError as exc:
            return refuse(exc.text)
        disagreement = _against_lock(roster, name, version, digest, payload.platform, lock)
        if disagreement is not None:
            return refuse(disagreement[1], disagreement[0])
        try:
            folder = archive.unpack_capsule(payload, data, digest, home)
        except MurmurTuiError as exc:
            return refuse(exc.text)
        parsed = _manifest(folder, refuse, f"the packed murmur.yaml of {label}")
        if isinstance(parsed, RosterRefusal):
            return parsed
        return AdmittedMember(member.name, member.entry, parsed, label, where, folder,
                              payload.file, digest)
    return refuse(f"capsule {label} is not installed (looked in: {', '.join(looked)}); "
                  f"install it with `mur install {label}`")


def _manifest(folder: Path, refuse: Callable[[str], RosterRefusal], what: str | None = None
              ) -> Capsule | RosterRefusal:
    try:
        return load_capsule(folder)
    except ManifestError as exc:
        lines = str(exc).splitlines()
        shown = what or f"the capsule at {folder}"
        more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
        return refuse(f"{shown} does not parse: {lines[0] if lines else exc}{more}")


def _against_lock(roster: Roster, name: str, version: str, digest: str, platform: str | None,
                  lock: list[Lock | None]) -> tuple[str, str] | None:
    """(code, text) when `murmur.lock` beside the roster pins `name` otherwise than what was
    found (Murmur's `conflict_with` words), or cannot be read; None when it agrees or does not
    pin it."""
    if not lock:
        try:
            lock.append(read_lock(lock_path(roster.folder)))
        except MurmurTuiError as exc:
            return LOCK_UNREADABLE, str(exc)
    found = lock[0]
    pin = found.pin(name) if found is not None else None
    if pin is None or found is None:
        return None
    where = f"{found.path}: "
    if pin.version != version:
        return LOCK_DISAGREES, f"{where}pinned {name}@{pin.version}, but {name}@{version} was " \
            "resolved"
    if pin.sha256 is not None and platform is not None:
        return LOCK_DISAGREES, f"{where}{name!r} is pinned as a platform-independent payload " \
            "but resolved as a per-platform one"
    if pin.sha256 is None and platform is None:
        return LOCK_DISAGREES, f"{where}{name!r} is pinned as a per-platform payload but " \
            "resolved as a platform-independent one"
    expected = pin.expected(platform or platform_tag())
    if expected != digest:
        tag = f" for {platform}" if platform else ""
        return LOCK_DISAGREES, f"{where}{name!r} is pinned at sha256 {expected}{tag}, but " \
            f"{digest} was resolved"
    return None


def _edges(roster: Roster, members: list[AdmittedMember]) -> tuple[tuple[str, str], ...]:
    if not roster.reach_all:
        edges: list[tuple[str, str]] = []
        for rule in roster.rules:
            edges.extend((rule.caller, callee) for callee in rule.callees
                         if (rule.caller, callee) not in edges)
        return tuple(edges)
    serving = [member for member in members if member.serves_peers]
    return tuple((caller.name, callee.name) for caller in serving for callee in serving
                 if caller.name != callee.name and not callee.entry)


def _peers(roster: Roster, members: list[AdmittedMember],
           edges: tuple[tuple[str, str], ...]) -> RosterRefusal | None:
    called: dict[str, str] = {}
    for caller, callee in edges:
        called.setdefault(callee, caller)
    lines = {member.name: member.line for member in roster.members}
    for member in members:
        if member.name in called and not member.serves_peers:
            return _refuse(roster, "E-ROS-005", f"member {member.name!r} is called by "
                           f"{called[member.name]!r} but does not serve peers "
                           f"({member.manifest} does not set exports.peer_tasks.accept: true)",
                           lines[member.name], member.name)
    if not edges:
        return None
    for member in members:
        if not member.authenticated:
            return _refuse(roster, "E-ROS-006", f"member {member.name!r} has a public door, "
                           "and a formation with calls needs every member's door to "
                           f"authenticate ({member.manifest} does not "
                           "declare network.authentication)", lines[member.name], member.name)
    return None
