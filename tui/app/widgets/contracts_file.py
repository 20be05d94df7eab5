"""The session's `tools/contracts.json` (docs/tools.md, "Fingerprints") as the screen reads it:
each tool's contract and fingerprint, by name. Read by the Tools pane (the whole list) and the
tool calls pane (one line in a call's detail)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

MAX_TOOLS = 2000  # a longer file is cut here (a capsule has a few dozen tools at most)


@dataclass(frozen=True)
class ToolEntry:
    name: str
    kind: str  # wasm | shell | skill (or what the file says)
    effect: str
    replay: str
    capabilities: tuple[str, ...]
    source: str  # declared | derived | built-in
    fingerprint: str

    def line(self) -> str:
        """The contract in one line, as a call's detail shows it."""
        caps = ", ".join(self.capabilities) or "no capabilities"
        return (f"{self.effect}, replay {self.replay}, {caps} ({self.source}) · fingerprint "
                f"{self.fingerprint[:12]}")


def kind_of(value: dict[str, object]) -> str:
    """The tool's kind: the file's own `kind` when it has one; else a declared or derived
    contract is a WebAssembly tool's (only those have one), and a built-in one is a shell
    binary's when it may run processes, a skill's otherwise."""
    kind = value.get("kind")
    if isinstance(kind, str) and kind:
        return kind
    if value.get("source") != "built-in":
        return "wasm"
    caps = value.get("capabilities")
    return "shell" if isinstance(caps, list) and "process.execute" in caps else "skill"


def read_contracts(path: Path) -> list[ToolEntry] | str:
    """Every tool in the file, sorted by name, or why there are none (a sentence naming the
    file). An entry that is not a mapping is left out; a missing field shows as `?`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"{path}: no such file (the session wrote no contracts, or its workdir is " \
               "not on this machine)"
    except (OSError, UnicodeDecodeError) as exc:
        return f"{path}: cannot be read ({getattr(exc, 'strerror', None) or exc})"
    except ValueError as exc:
        return f"{path}: is not JSON ({exc})"
    if not isinstance(data, dict):
        return f"{path}: is not a mapping of tool names to contracts"
    entries = []
    for name, value in sorted(data.items())[:MAX_TOOLS]:
        if not isinstance(value, dict):
            continue
        caps = value.get("capabilities")
        entries.append(ToolEntry(
            name=str(name), kind=kind_of(value), effect=_text(value.get("effect")),
            replay=_text(value.get("replay")),
            capabilities=tuple(str(c) for c in caps) if isinstance(caps, list) else (),
            source=_text(value.get("source")),
            fingerprint=_text(value.get("fingerprint"))))
    return entries


def _text(value: object) -> str:
    return value if isinstance(value, str) and value else "?"
