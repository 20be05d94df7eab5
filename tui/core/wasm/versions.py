"""Every `murmur:*` interface version murmur-tui accepts, and which Murmur release served it.

Murmur links exactly one version of each package; murmur-tui links every version a Murmur
release served (and the hook set its own earlier releases served), so a component built for
any of them runs unchanged. `INTERFACES` is the one table: `imports.py` links what it lists,
and `check` refuses anything else before instantiation, naming what the component has and the
nearest version accepted — never a wasmtime link error. Types differ between versions only in
records the host builds with every field of the newest version (a record is lowered field by
field, so an older component's type simply reads fewer), and in records lifted from a guest,
which the host reads by name with a default (docs/wit.md, "Interface versions").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tui.core.errors import IncompatibleComponent

# interface (without version) -> the versions linked, newest first, each with where it is from
INTERFACES: dict[str, tuple[tuple[str, str], ...]] = {
    "murmur:hook/lifecycle": (("0.9.0", "Murmur v0.4.0 to v0.11.0"),
                              ("0.8.0", "Murmur v0.3.0 and murmur-tui's earlier releases"),
                              ("0.5.0", "Murmur v0.2.0")),
    "murmur:runtime/inference": (("0.4.0", "Murmur v0.4.0 to v0.11.0"),
                                 ("0.3.0", "Murmur v0.3.0"),
                                 ("0.2.0", "Murmur v0.2.0 and murmur-tui's earlier releases")),
    "murmur:runtime/tokens": (("0.4.0", "Murmur v0.4.0 to v0.11.0"),
                              ("0.3.0", "Murmur v0.3.0")),
    "murmur:conversation/read": (("0.2.0", "Murmur v0.4.0 to v0.11.0"),
                                 ("0.1.0", "Murmur v0.3.0 and murmur-tui's earlier releases")),
    "murmur:task-io/read": (("0.1.0", "Murmur v0.3.0 to v0.11.0"),),
    "murmur:tool/run": (("0.2.0", "Murmur v0.9.0 to v0.11.0"),
                        ("0.1.0", "Murmur v0.2.0 to v0.6.0")),
    "murmur:tool-registry/invoke": (("0.2.0", "Murmur v0.11.0"),
                                    ("0.1.0", "Murmur v0.2.0 to v0.6.0")),
    "murmur:task/task": (("0.1.0", "Murmur v0.2.0 to v0.11.0"),),
    "murmur:stream/events": (("0.1.0", "Murmur v0.6.0 to v0.11.0"),),
    "murmur:text/chunks": (("0.1.0", "Murmur v0.2.0 to v0.6.0"),),
    "murmur:capsule/run": (("0.1.0", "Murmur v0.2.0 to v0.11.0"),),
    "murmur:artifact-manager/manage": (("0.1.0", "Murmur v0.2.0 to v0.11.0"),),
    "murmur:message/send": (("0.1.0", "Murmur v0.2.0 to v0.11.0"),),
}
# what each role must export (its interface); a component may also import an exported
# interface for its types alone (a hook's `message`, a script capsule's `tool-result`)
ROLE_EXPORT = {"tool": "murmur:tool/run", "driver": "murmur:tool/run",
               "hook": "murmur:hook/lifecycle", "capsule": "murmur:capsule/run"}
# Packages Murmur serves that murmur-tui does not link, and why (docs/wit.md).
NOT_LINKED = {
    "murmur:process/process": "murmur-tui does not run session processes for tools; a "
                              "capsule's programs run through its shell tool",
    "murmur:driver/process": "it is a process driver, which runs a harness program under "
                             "`inference.transport: process` (Murmur v0.4.0 on); murmur-tui "
                             "does not host that transport",
}
REBUILD = ("rebuild it against the WIT that murmur-tui ships (the wit/ folder; "
           "docs/wit.md shows how)")


def linked() -> list[str]:
    """Every versioned interface name murmur-tui links, for `imports.py`."""
    return [f"{interface}@{version}" for interface, served in INTERFACES.items()
            for version, _ in served]


@dataclass(frozen=True)
class Unserved:
    """One interface a component speaks that murmur-tui does not link."""

    direction: str  # "exports" | "imports"
    name: str       # as the component names it, e.g. murmur:hook/lifecycle@0.7.0
    nearest: str | None  # the nearest version linked, e.g. murmur:hook/lifecycle@0.8.0
    why: str        # the sentence after the name

    def line(self, file: str) -> str:
        return f"{file} {self.direction} {self.name}{self.why}"


def _split(name: str) -> tuple[str, str | None]:
    interface, _, version = name.partition("@")
    return interface, version or None


def _number(version: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(part) for part in version.split("-", 1)[0].split("."))
    except ValueError:
        return None


def nearest(interface: str, version: str | None) -> tuple[str, str] | None:
    """The linked (version, release) closest to `version` (the newest for an unversioned or
    unreadable one; a tie goes to the newer), or None when the interface is not linked."""
    served = INTERFACES.get(interface)
    if not served:
        return None
    wanted = _number(version) if version else None
    if wanted is None:
        return served[0]

    def distance(entry: tuple[str, str]) -> tuple[int, ...]:
        have = _number(entry[0]) or ()
        width = max(len(have), len(wanted))
        a, b = have + (0,) * (width - len(have)), wanted + (0,) * (width - len(wanted))
        first = next((i for i in range(width) if a[i] != b[i]), width)
        # differing earlier is farther; within the first differing part, by how much
        return (width - first, abs(a[first] - b[first]) if first < width else 0)

    return min(served, key=distance)  # newest first: min keeps the newer of a tie


def _accepted(interface: str) -> str:
    versions = [version for version, _ in INTERFACES[interface]]
    first, rest = f"{interface}@{versions[0]}", [f"@{v}" for v in versions[1:]]
    if not rest:
        return first
    return ", ".join([first, *rest[:-1]]) + f" or {rest[-1]}"


def _judge(direction: str, name: str) -> Unserved | None:
    interface, version = _split(name)
    if interface in INTERFACES and version in {v for v, _ in INTERFACES[interface]}:
        return None
    shown = name if version else f"{name} (unversioned)"
    close = nearest(interface, version)
    if close is not None:
        near = f"{interface}@{close[0]}"
        verb = "accepts" if direction == "exports" else "links"
        return Unserved(direction, shown, near,
                        f"; murmur-tui {verb} {_accepted(interface)} — the nearest is "
                        f"{near} ({close[1]}); {REBUILD}")
    reason = NOT_LINKED.get(interface, "murmur-tui does not provide that interface")
    return Unserved(direction, shown, None,
                    f", which murmur-tui does not link ({reason}); rebuild it without that "
                    f"{'import' if direction == 'imports' else 'export'}")


def unserved(role: str, imports: frozenset[str], exports: frozenset[str]) -> list[Unserved]:
    """What keeps a component from loading in `role`: its role export in a version not
    linked (or missing), then each `murmur:*` import not linked. Empty when it loads."""
    found: list[Unserved] = []
    wanted = ROLE_EXPORT[role]
    own = sorted(name for name in exports if _split(name)[0] == wanted)
    if not any(_judge("exports", name) is None for name in own):
        if own:
            found.extend(u for name in own if (u := _judge("exports", name)) is not None)
        else:
            other = sorted(name for name in exports if _split(name)[0] in NOT_LINKED)
            shown = ", ".join(sorted(exports)) or "nothing"
            why = (f": {NOT_LINKED[_split(other[0])[0]]}; a {role} exports {_accepted(wanted)}"
                   if other else f", not {_accepted(wanted)}: it is not a {role}")
            found.append(Unserved("exports", shown, f"{wanted}@{INTERFACES[wanted][0][0]}",
                                  why))
    for name in sorted(imports):
        if name.startswith("murmur:") and (problem := _judge("imports", name)) is not None:
            found.append(problem)
    return found


def check(path: Path, role: str, imports: frozenset[str], exports: frozenset[str]) -> str:
    """Return the export to call for `role` (the newest linked version the component has),
    or raise IncompatibleComponent naming the first thing that keeps it from loading."""
    problems = unserved(role, imports, exports)
    if problems:
        raise IncompatibleComponent(problems[0].line(path.name))
    wanted = ROLE_EXPORT[role]
    return next(f"{wanted}@{version}" for version, _ in INTERFACES[wanted]
                if f"{wanted}@{version}" in exports)
