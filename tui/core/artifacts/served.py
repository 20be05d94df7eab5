"""Which `murmur:*` package versions each Murmur release serves, and Murmur's verdict on a
component: the one table of them in murmur-tui (spec murmur-newest §1.2).

Murmur links exactly one version of every `murmur:*` package and has no fallback: a component
that exports or imports any other version, an unversioned name, or a package the release does
not serve, does not instantiate; `wasi:*` names are not compared (§1.1). `mur doctor` words a
refusal `<exports|imports> <interface> — this mur serves <package>@<version>` (or `— this mur
serves no version of <package>`, or `<interface> (unversioned)`) under `warning[W-REG-003]`
(§1.6). The columns below are the releases whose whole served set the spec shows; a release not
listed here (v0.5.0, v0.7.0–v0.10.0) is shown only in part by the sources. Murmur's
current release is `CURRENT_RELEASE`: change it (and add its column) here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# every package each release serves, at its one version (spec §1.2, §1.3)
SERVED_BY_RELEASE: dict[str, dict[str, str]] = {
    "0.2.0": {
        "murmur:hook": "0.5.0", "murmur:runtime": "0.2.0", "murmur:text": "0.1.0",
        "murmur:tool": "0.1.0", "murmur:tool-registry": "0.1.0", "murmur:capsule": "0.1.0",
        "murmur:artifact-manager": "0.1.0", "murmur:message": "0.1.0", "murmur:shell": "0.1.0",
        "murmur:task": "0.1.0", "murmur:host": "0.1.0", "murmur:runtime-guest": "0.1.0",
    },
    "0.3.0": {
        "murmur:hook": "0.8.0", "murmur:runtime": "0.3.0", "murmur:conversation": "0.1.0",
        "murmur:task-io": "0.1.0", "murmur:text": "0.1.0", "murmur:tool": "0.1.0",
        "murmur:tool-registry": "0.1.0", "murmur:capsule": "0.1.0",
        "murmur:artifact-manager": "0.1.0", "murmur:message": "0.1.0", "murmur:shell": "0.1.0",
        "murmur:task": "0.1.0", "murmur:host": "0.1.0", "murmur:runtime-guest": "0.1.0",
    },
    "0.4.0": {
        "murmur:hook": "0.9.0", "murmur:runtime": "0.4.0", "murmur:conversation": "0.2.0",
        "murmur:task-io": "0.1.0", "murmur:driver": "0.2.0", "murmur:text": "0.1.0",
        "murmur:tool": "0.1.0", "murmur:tool-registry": "0.1.0", "murmur:capsule": "0.1.0",
        "murmur:artifact-manager": "0.1.0", "murmur:message": "0.1.0", "murmur:shell": "0.1.0",
        "murmur:task": "0.1.0", "murmur:host": "0.1.0", "murmur:runtime-guest": "0.1.0",
    },
    "0.11.0": {
        "murmur:hook": "0.9.0", "murmur:runtime": "0.4.0", "murmur:conversation": "0.2.0",
        "murmur:task-io": "0.1.0", "murmur:driver": "0.6.0", "murmur:stream": "0.1.0",
        "murmur:process": "0.1.0", "murmur:tool": "0.2.0", "murmur:tool-registry": "0.2.0",
        "murmur:capsule": "0.1.0", "murmur:artifact-manager": "0.1.0",
        "murmur:message": "0.1.0", "murmur:shell": "0.1.0", "murmur:task": "0.1.0",
        "murmur:host": "0.1.0", "murmur:runtime-guest": "0.1.0",
    },
}
CURRENT_RELEASE = "0.11.0"
W_REG_003 = ("mur run refuses these at launch (warning[W-REG-003], "
             "https://docs.murmur.nexus/murmur-nexus/murmur/reference/diagnostics/#w-reg-003)")


@dataclass(frozen=True)
class MurmurRefusal:
    """One interface a Murmur release would not link, in `mur doctor`'s words (what murmur-tui
    itself would not link is `tui.core.wasm.versions.Unserved`)."""

    direction: str  # exports | imports
    interface: str  # as the component names it
    reason: str  # `this mur serves murmur:hook@0.9.0`, or why it is refused

    @property
    def line(self) -> str:
        """`exports murmur:hook/lifecycle@0.8.0 — this mur serves murmur:hook@0.9.0`."""
        return f"{self.direction} {self.interface} — {self.reason}"


def package_of(interface: str) -> tuple[str, str | None]:
    """`murmur:hook/lifecycle@0.8.0` → (`murmur:hook`, `0.8.0`); no `@`: version None."""
    name, at, version = interface.partition("@")
    return name.split("/", 1)[0], (version if at else None)


def unserved(imports: Iterable[str], exports: Iterable[str],
             release: str = CURRENT_RELEASE) -> list[MurmurRefusal]:
    """Every `murmur:*` interface of a component the release does not serve, exports first."""
    served: Mapping[str, str] = SERVED_BY_RELEASE[release]
    found: list[MurmurRefusal] = []
    for direction, names in (("exports", exports), ("imports", imports)):
        for interface in sorted(set(names)):
            if not interface.startswith("murmur:"):
                continue  # wasi:* links against any compatible 0.2.x the host provides
            package, version = package_of(interface)
            have = served.get(package)
            if version is None:
                found.append(MurmurRefusal(direction, f"{interface} (unversioned)",
                                      f"this mur serves {package}@{have}" if have else
                                      f"this mur serves no version of {package}"))
            elif have is None:
                found.append(MurmurRefusal(direction, interface,
                                      f"this mur serves no version of {package}"))
            elif version != have:
                found.append(MurmurRefusal(direction, interface,
                                           f"this mur serves {package}@{have}"))
    return found
