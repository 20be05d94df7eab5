"""The tools the runtime itself provides (spec murmur-newest §9.1): their names are reserved, and
`capabilities.spawn.allow` — the grant that makes `delegate-task` — cannot be combined with an
authenticated door.

- An `artifacts:` entry, or a shell binary (its tool is named after it), that takes one of
  `RUNTIME_TOOLS` is refused `E-CAP-013`, as Murmur refuses it at staging.
- `network.authentication` with a non-empty `capabilities.spawn.allow` is refused `E-MAN-003`
  (a formation member authenticates its door and so cannot delegate).
"""

from __future__ import annotations

from tui.core.manifest.model import Artifact, Capabilities, Network
from tui.core.manifest.problems import describe
from tui.core.manifest.yaml_section import Section

RUNTIME_TOOLS = ("share-file", "fetch-peer-file", "delegate-task", "submit-plan",
                 "switch-driver", "call-member", "end-without-answer")
RESERVED = "E-CAP-013"


def reserved_problem(name: str) -> str:
    return (f"{describe(name)} is the name of a tool the runtime provides "
            f"({', '.join(RUNTIME_TOOLS)}); choose another name")


def check_runtime_names(top: Section, artifacts: tuple[Artifact, ...]) -> None:
    """An artifact named as a runtime tool (a shell binary is checked where `shell.allow` is
    read, tui/core/manifest/capabilities.py)."""
    for entry in artifacts:
        if entry.name in RUNTIME_TOOLS:
            top.report.problem(entry.line, "artifacts", reserved_problem(entry.name), RESERVED)


def check_spawn_with_authentication(top: Section, capabilities: Capabilities,
                                    network: Network) -> None:
    if capabilities.spawn_allow and network.authentication is not None:
        top.problem("network", "network.authentication cannot be combined with a non-empty "
                    "capabilities.spawn.allow: a capsule whose door authenticates (a formation "
                    "member's) cannot delegate; drop one of the two", "E-MAN-003")
