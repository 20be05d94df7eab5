"""Which `murmur:*` interface versions a component may export and import.

Checked before instantiation, so a component built against another version is refused with a
message naming what it has, what is accepted and how to rebuild — never a wasmtime link error.
"""

from __future__ import annotations

from pathlib import Path

from tui.core.errors import IncompatibleComponent
from tui.core.wasm.imports import PROVIDED

ROLE_EXPORTS: dict[str, tuple[str, ...]] = {
    "tool": ("murmur:tool/run@0.2.0", "murmur:tool/run@0.1.0"),
    "driver": ("murmur:tool/run@0.2.0", "murmur:tool/run@0.1.0"),
    "hook": ("murmur:hook/lifecycle@0.8.0",),
    "capsule": ("murmur:capsule/run@0.1.0",),
}
# interfaces a component may import for their types only (tool-registry uses tool/run's)
TYPES_ONLY = frozenset({"murmur:tool/run@0.1.0", "murmur:tool/run@0.2.0"})
# Interfaces Murmur's current worlds import that murmur-tui does not link, and why (docs/wit.md).
NOT_LINKED = {
    "murmur:process/process": "murmur-tui does not run session processes for tools; a "
                              "capsule's programs run through its shell tool",
}
REBUILD = ("rebuild it against the WIT that murmur-tui ships (the wit/ folder; "
           "docs/wit.md shows how)")


def _package(name: str) -> str:
    return name.split("@", 1)[0]


def _accepted(names: tuple[str, ...]) -> str:
    if len(names) == 1:
        return names[0]
    return f"{names[0]} or @{names[1].split('@', 1)[1]}"


def check(path: Path, role: str, imports: frozenset[str], exports: frozenset[str]) -> str:
    """Return the export to call for `role`, or raise IncompatibleComponent."""
    wanted = ROLE_EXPORTS[role]
    found = next((name for name in wanted if name in exports), None)
    if found is None:
        interface = _package(wanted[0])
        other = sorted(name for name in exports if _package(name) == interface)
        if other:
            raise IncompatibleComponent(
                f"{path.name} exports {', '.join(other)}; murmur-tui accepts "
                f"{_accepted(wanted)} for a {role}; {REBUILD}")
        shown = ", ".join(sorted(exports)) or "nothing"
        raise IncompatibleComponent(
            f"{path.name} is not a {role}: it exports {shown}, not {_accepted(wanted)}")
    for name in sorted(imports):
        if name.startswith("murmur:") and name not in PROVIDED and name not in TYPES_ONLY:
            raise IncompatibleComponent(_unprovided(path, name))
    return found


def _unprovided(path: Path, name: str) -> str:
    """Why `name` cannot be linked: another version is provided, or the interface is not."""
    same = sorted(p for p in PROVIDED if _package(p) == _package(name))
    if same:
        return (f"{path.name} imports {name}; murmur-tui provides {', '.join(same)}; "
                f"{REBUILD}")
    reason = NOT_LINKED.get(_package(name), "murmur-tui does not provide that interface")
    return (f"{path.name} imports {name}, which murmur-tui does not link ({reason}); "
            "rebuild it without that import")
