"""Tool contracts (docs/tools.md): what a tool does to the world, whether a call may run again,
what it may reach, and the fingerprint that names all of it.

A WebAssembly tool declares its contract in its own `murmur.yaml`, in a block Murmur's loader
ignores:

    x-murmur-tui:
      contract:
        effect: read-only        # read-only | mutating
        replay: safe             # safe | idempotent | unsafe
        capabilities: [network.access]

Undeclared, the contract is derived from the tool's grants (`derive`) and says so. The shell
tool and skills have fixed contracts (`SHELL`, `SKILL`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from tui.core.errors import LaunchError
from tui.core.manifest.model import Artifact, Capsule
from tui.core.manifest.problems import describe

Effect = Literal["read-only", "mutating"]
Replay = Literal["safe", "idempotent", "unsafe"]
Source = Literal["declared", "derived", "built-in"]
FailureKind = Literal["definitive", "uncertain"]

EFFECTS: tuple[Effect, ...] = ("read-only", "mutating")
REPLAYS: tuple[Replay, ...] = ("safe", "idempotent", "unsafe")
CAPABILITIES = ("environment.read", "environment.write", "filesystem.read", "filesystem.write",
                "network.access", "process.execute", "secrets.read")
BLOCK = "x-murmur-tui"
CONTRACT_KEYS = ("effect", "replay", "capabilities")
FAILURE_KEY = "failure"  # a result's metadata key: definitive | uncertain

# Spice's payload bounds
MAX_PAYLOAD_BYTES = 1 << 20  # one tool schema, call or result
MAX_PROGRESS_BYTES = 4096  # one progress message
MAX_ERROR_BYTES = 4096  # one execution failure's text


@dataclass(frozen=True)
class ToolContract:
    effect: Effect
    replay: Replay
    capabilities: tuple[str, ...]  # sorted, no repeats
    source: Source

    def line(self) -> str:
        """The contract in one line, as the screen shows it."""
        caps = ", ".join(self.capabilities) or "no capabilities"
        return f"{self.effect}, replay {self.replay}, {caps} ({self.source})"

    def as_json(self) -> dict[str, Any]:
        return {"effect": self.effect, "replay": self.replay,
                "capabilities": list(self.capabilities), "source": self.source}


SHELL = ToolContract("mutating", "unsafe", ("environment.read", "filesystem.read",
                                            "filesystem.write", "process.execute"), "built-in")
SKILL = ToolContract("read-only", "safe", ("filesystem.read",), "built-in")


def fingerprint(component: bytes, description: str, schema: Mapping[str, Any],
                contract: ToolContract) -> str:
    """sha256 over the component's bytes, the description, the schema (canonical JSON), the
    effect, the replay and the sorted capabilities, each part length-prefixed."""
    digest = hashlib.sha256()
    parts = (component, description.encode(), json.dumps(
        schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(),
        contract.effect.encode(), contract.replay.encode(),
        "\n".join(sorted(contract.capabilities)).encode())
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


def granted(capsule: Capsule, entry: Artifact) -> tuple[str, ...]:
    """The capabilities a WebAssembly tool is granted: its session workdir is always preopened
    read-write; network when its (or else the capsule's) `network.allow` lists anything;
    environment.read when an `env.allow` names a variable."""
    own = entry.capabilities
    network = (own.network_allow if own is not None and own.network_declared
               else capsule.capabilities.network_allow)
    env = own.env_allow if own is not None and own.env_allow else capsule.capabilities.env_allow
    caps = {"filesystem.read", "filesystem.write"}
    if network:
        caps.add("network.access")
    if env:
        caps.add("environment.read")
    return tuple(sorted(caps))


def derive(capsule: Capsule, entry: Artifact) -> ToolContract:
    """An undeclared WebAssembly tool's contract: read-only + safe only when nothing it is
    granted can change the world, else mutating + unsafe. Its workdir is always writable, so
    an undeclared WebAssembly tool is always mutating + unsafe."""
    caps = granted(capsule, entry)
    writes = {"filesystem.write", "network.access", "environment.write", "process.execute"}
    if writes.intersection(caps):
        return ToolContract("mutating", "unsafe", caps, "derived")
    return ToolContract("read-only", "safe", caps, "derived")


def read(manifest: Mapping[str, Any], manifest_path: Path) -> ToolContract | None:
    """The contract an artifact's own manifest declares, or None. A bad value is a
    LaunchError naming the file, the line and the key."""
    block = manifest.get(BLOCK)
    if block is None:
        return None
    lines = _Lines(manifest_path)
    if not isinstance(block, dict):
        raise lines.error((BLOCK,), "must be a mapping (contract: {...})")
    contract = block.get("contract")
    if contract is None:
        return None
    where = (BLOCK, "contract")
    if not isinstance(contract, dict):
        raise lines.error(where, "must be a mapping of effect, replay and capabilities")
    for key in contract:
        if key not in CONTRACT_KEYS:
            raise lines.error((*where, str(key)), f"is not a contract key (known: "
                              f"{', '.join(CONTRACT_KEYS)})")
    effect = _choice(contract, "effect", EFFECTS, lines, where)
    replay = _choice(contract, "replay", REPLAYS, lines, where)
    raw = contract.get("capabilities", [])
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise lines.error((*where, "capabilities"), "must be a list of capability names")
    for item in raw:
        if item not in CAPABILITIES:
            raise lines.error((*where, "capabilities"), f"{describe(item)} is not a "
                              f"capability (known: {', '.join(CAPABILITIES)})")
    if effect == "read-only" and {"filesystem.write", "environment.write"} & set(raw):
        raise lines.error((*where, "effect"), "read-only contradicts a write capability")
    return ToolContract(effect, replay, tuple(sorted(set(raw))), "declared")


def _choice(contract: Mapping[str, Any], key: str, values: tuple[Any, ...], lines: _Lines,
            where: tuple[str, ...]) -> Any:
    value = contract.get(key)
    if value is None:
        raise lines.error(where, f"has no {key} (one of: {', '.join(values)})")
    if value not in values:
        raise lines.error((*where, key), f"{describe(value)} is not one of: "
                          f"{', '.join(values)}")
    return value


class _Lines:
    """The line of a nested key of a YAML file, for a message (read only when one is needed)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def error(self, keys: tuple[str, ...], message: str) -> LaunchError:
        line = self._line(keys)
        return LaunchError(f"{self.path}{f':{line}' if line else ''}: {'.'.join(keys)}: "
                           f"{message}")

    def _line(self, keys: tuple[str, ...]) -> int | None:
        try:
            node: yaml.Node | None = yaml.compose(self.path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError, UnicodeDecodeError):
            return None
        line = None
        for key in keys:
            if not isinstance(node, yaml.MappingNode):
                break
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                    line, node = key_node.start_mark.line + 1, value_node
                    break
            else:
                break
        return line


def ungranted(contract: ToolContract, grants: Iterable[str]) -> tuple[str, ...]:
    """The declared capabilities the capsule does not grant."""
    have = set(grants)
    return tuple(cap for cap in contract.capabilities if cap not in have)


def failure_kind(contract: ToolContract, trapped: bool, stated: str | None) -> FailureKind:
    """Whether a failed call is known to have committed nothing: a tool's stated `failure`
    metadata wins; a trap or a timeout is definitive only for a read-only tool (a mutating
    one may have written before it stopped)."""
    if stated in ("definitive", "uncertain"):
        return "definitive" if stated == "definitive" else "uncertain"
    if trapped and contract.effect == "read-only":
        return "definitive"
    return "uncertain"


def retry_decision(contract: ToolContract, kind: FailureKind,
                   stated: bool = False) -> tuple[bool, str]:
    """The retry rule: once, only for a replay-safe or idempotent tool after a definitive
    failure; never after an uncertain one. `stated`: the tool's result said the kind (else a
    trap or a timeout implied it). Returns the decision and why, in words."""
    if kind == "uncertain":
        if stated:
            return False, ("not retried: the tool says the failure is uncertain (it may have "
                           "changed something)")
        return False, (f"not retried: the failure is uncertain ({contract.effect} tool, it may "
                       "have changed something before it stopped)")
    if contract.replay == "unsafe":
        return False, "not retried: the tool's replay is unsafe"
    if stated:
        return True, f"retried once: the tool says the failure is definitive and its replay " \
                     f"is {contract.replay}"
    return True, f"retried once: the failure is definitive and the tool's replay is " \
                 f"{contract.replay}"


def cut(text: str, limit: int, what: str) -> str:
    """`text` within `limit` UTF-8 bytes; a longer one is cut there with a note."""
    data = text.encode("utf-8", errors="replace")
    if len(data) <= limit:
        return text
    kept = data[:limit].decode("utf-8", errors="ignore")
    return f"{kept}\n[truncated: {what} was {len(data)} bytes; the first {limit} are above]"
