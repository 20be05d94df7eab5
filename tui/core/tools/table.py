"""The session's tools: what the model sees, and dispatch by name in Murmur's order (§5.3).

Order: (1) native artifact binaries (not supported by murmur-tui), (2) the shell tool for a
name in `capabilities.shell.allow`, (3) skills, (4) WebAssembly tools declared in the manifest;
any other name is an error result naming the allowlist. The runtime-provided tools
(`call-member`, `end-without-answer`: tui/core/formation/call_member.py) come first: their
names are reserved, no artifact may take them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from tui.core.cancel import CancelToken
from tui.core.events.kinds import ToolKind, ToolStatus
from tui.core.frozen import Frozen
from tui.core.text.fence import fence
from tui.core.tools.contracts import ToolContract

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True, repr=False, eq=False)
class ToolSpec(Frozen):
    """A tool as the model sees it in the payload's `tools` list."""

    name: str
    description: str
    parameters: dict[str, Any]
    kind: ToolKind

    def payload(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "parameters": self.parameters}


@dataclass(frozen=True, repr=False, eq=False)
class ToolCall(Frozen):
    call_id: str
    name: str
    input: dict[str, Any]
    turn: int
    task_id: str
    raw: str | None = None  # the input exactly as a script capsule passed it

    @property
    def data(self) -> str:
        if self.raw is not None:
            return self.raw
        return json.dumps(self.input, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class ShellResult:
    """What one shell call did (tui/core/shell/tool.py runs it)."""


    binary: str  # the resolved absolute path, or the bare name when nothing resolved
    command: str
    exit_code: int
    stdout: str  # at most CAP_BYTES of it
    stderr: str
    stdout_bytes: int
    stderr_bytes: int
    duration_ms: int
    truncated: bool
    full_output_path: str | None
    text: str  # the tool result text the model reads
    stopped: str | None = None  # "timeout" | "canceled" | "supervisor exit": the group was killed
    log_capped: bool = False  # the log reached LOG_CAP_BYTES and the rest was discarded
    work_id: str | None = None  # demoted: the command goes on in the background as this


@dataclass(frozen=True, repr=False, eq=False)
class ToolOutcome(Frozen):
    """What one call produced, before it becomes a tool message."""

    status: ToolStatus
    text: str
    fenced: bool
    kind: ToolKind
    duration_ms: int
    metadata: tuple[tuple[str, str], ...] = ()
    attachments: tuple[dict[str, Any], ...] = ()  # accepted: media_type, path, sha256, bytes
    images: tuple[dict[str, Any], ...] = ()  # their image blocks, as the record keeps them
    shell: ShellResult | None = None
    truncated: bool = False  # the tool, or the host's result cap, cut what the model reads
    # a WebAssembly tool's own `tool-result` fields, as it returned them (a script capsule's
    # `tool-registry.invoke` hands these back); None for tools that have no such result
    summary: str | None = None
    data: str | None = None
    data_path: str | None = None
    refused: bool = False  # the call never ran (undeclared, stopped, trapped)
    trapped: bool = False  # a WebAssembly call that trapped or ran out of time (not canceled)

    @property
    def ok(self) -> bool:
        return self.status == "passed"

    def meta(self, key: str) -> str | None:
        for name, value in self.metadata:
            if name == key:
                return value or None
        return None

    def message_text(self, tool_name: str) -> str:
        return fence(f"tool:{tool_name}", self.text) if self.fenced else self.text


def refusal(text: str, kind: ToolKind, duration_ms: int = 0) -> ToolOutcome:
    """A call that never ran: an unfenced error result."""
    return ToolOutcome(status="error", text=text, fenced=False, kind=kind,
                       duration_ms=duration_ms, refused=True)


OutputStream = Literal["stdout", "stderr"]


class CallProgress(Protocol):
    """What a running call shows before it ends, supplied by the dispatcher for one call.
    Either method may be called from the calling thread any number of times; what arrives
    after the call returned is dropped."""

    def output(self, stream: OutputStream, lines: list[str]) -> None:
        """Lines a shell command wrote (redacted already, without their line ends)."""
        ...

    def progress(self, text: str) -> None:
        """A progress message from a component (`emit-chunk` while its call runs)."""
        ...


class _Silent:
    """The progress of a call nobody watches (a script capsule's invoke of a tool, tests)."""

    def output(self, stream: OutputStream, lines: list[str]) -> None:
        return None

    def progress(self, text: str) -> None:
        return None


SILENT: CallProgress = _Silent()


class ToolHandler(Protocol):
    spec: ToolSpec

    def call(self, call: ToolCall, cancel: CancelToken,
             progress: CallProgress = SILENT) -> ToolOutcome: ...


class SkillHandler:
    """A skill returns its guidance text (unfenced: it is the operator's own)."""

    def __init__(self, name: str, skill_file: Path) -> None:
        self._file = skill_file
        text = _read_text(skill_file)
        first_line = next((line.strip() for line in text.splitlines() if line.strip()), name)
        self.spec = ToolSpec(name, first_line, dict(EMPTY_SCHEMA), "skill")

    def call(self, call: ToolCall, cancel: CancelToken,
             progress: CallProgress = SILENT) -> ToolOutcome:
        started = time.perf_counter()
        try:
            text = self._file.read_text(encoding="utf-8")
        except OSError as exc:
            return refusal(f"error: skill {self.spec.name}: cannot read {self._file}: {exc}",
                           "skill", ms_since(started))
        return ToolOutcome(status="passed", text=text, fenced=False, kind="skill",
                           duration_ms=ms_since(started))


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def ms_since(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


@dataclass
class ToolTable:
    """Every tool of a session, by dispatch order; built once per session."""

    runtime: dict[str, ToolHandler] = field(default_factory=dict)  # murmur-tui's own
    shell: dict[str, ToolHandler] = field(default_factory=dict)
    skills: dict[str, ToolHandler] = field(default_factory=dict)
    wasm: dict[str, ToolHandler] = field(default_factory=dict)
    closers: list[Callable[[], None]] = field(default_factory=list)
    contracts: dict[str, ToolContract] = field(default_factory=dict)  # by tool name
    fingerprints: dict[str, str] = field(default_factory=dict)  # by tool name
    warnings: list[str] = field(default_factory=list)  # declared capabilities not granted
    notices: list[tuple[str, str]] = field(default_factory=list)  # (code, text) said at start

    def handlers(self) -> Iterable[ToolHandler]:
        seen: set[str] = set()
        for table in (self.runtime, self.shell, self.skills, self.wasm):
            for name, handler in table.items():
                if name not in seen:
                    seen.add(name)
                    yield handler

    def specs(self) -> list[ToolSpec]:
        """The model-visible tools, sorted by name (prompt-cache stability)."""
        return sorted((handler.spec for handler in self.handlers()), key=lambda s: s.name)

    def resolve(self, name: str) -> ToolHandler | None:
        for table in (self.runtime, self.shell, self.skills, self.wasm):
            if name in table:
                return table[name]
        return None

    def close(self) -> None:
        for close in self.closers:
            close()
