"""Approvals (`launch --approve shell|tools|all`): a gate before calls that may change things.

Nothing declares a tool read-only before it runs (a WebAssembly tool reports `state_effect`
only with its result), so the rule is by kind: under `shell` or `all` every shell command asks;
under `tools` or `all` every WebAssembly tool call asks; skills never ask (they only return
guidance). A call asks unless a rule allows it: one remembered for this session ("this prefix"),
or one stored for this capsule in `$MURMUR_HOME/tui/approvals.yaml` ("always": the
command's program, or the tool). The answer comes from an `Approver` (the screen's dialog;
headless, nobody: denied). What a shell call's rules are: tui/core/tools/shell_prefix.py.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from tui.core.cancel import CancelToken
from tui.core.errors import ApprovalConfigError, Where
from tui.core.tools.shell_prefix import (
    Rule,
    allowed,
    resolve,
    rules_text,
    shell_argv,
    shell_prefix,
    shell_program,
)

Mode = Literal["off", "shell", "tools", "all"]
MODES: tuple[Mode, ...] = ("off", "shell", "tools", "all")
Choice = Literal["once", "prefix", "always", "deny"]
STORE_FILE = "approvals.yaml"
CONFIG_FILE = "config.yaml"
HOOK_NAME = "murmur-tui:approval"  # `call_denied.hook_name`: the person at the screen refused


@dataclass(frozen=True)
class ApprovalRequest:
    """One call waiting for a decision, as the dialog shows it."""

    kind: Literal["shell", "tool"]
    tool_name: str
    target: str  # the resolved binary (shell) or the tool's name
    argv: tuple[str, ...]  # shell: what will run; () for a tool
    input: Mapping[str, Any]
    prefix: tuple[Rule, ...]  # shell: what "this prefix for the session" remembers
    capsule: str
    cancel: CancelToken | None = None
    program: tuple[Rule, ...] = ()  # shell: what "always for this capsule" remembers
    call_id: str | None = None  # the call that waits (the screen marks it waiting)

    @property
    def prefix_text(self) -> str:
        return rules_text(self.prefix)

    @property
    def program_text(self) -> str:
        """What "always" stores, as a person reads it: `git`, `bash -c git, ls`, the tool."""
        return rules_text(self.program) if self.kind == "shell" else self.tool_name

    def remembers(self, choice: Choice) -> tuple[Rule, ...]:
        """The shell rules `choice` keeps ("always": the programs; else the prefixes)."""
        return self.program if choice == "always" else self.prefix


@dataclass(frozen=True)
class ApprovalDecision:
    choice: Choice
    reason: str = ""


class Approver(Protocol):
    def decide(self, request: ApprovalRequest) -> ApprovalDecision: ...


class Nobody:
    """Headless: no one can approve, so a call no rule allows is denied (said once)."""

    def __init__(self, say: Callable[[str], object]) -> None:
        self._say = say
        self._said = False

    def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        if not self._said:
            self._said = True
            self._say("murmur-tui: approvals are on and nobody can approve in a headless run: "
                      "calls no stored rule allows are denied (rules: "
                      "$MURMUR_HOME/tui/approvals.yaml)\n")
        return ApprovalDecision("deny", "approvals are on and nobody can approve in a headless run")


def capsule_key(manifest_path: Path, name: str) -> str:
    return f"{manifest_path.resolve()}#{name}"


def read_mode(flag: str | None, home: Path) -> Mode:
    """The approval mode: `--approve` if given, else `approve:` in `$MURMUR_HOME/tui/
    config.yaml`, else off."""
    if flag is not None:
        return _mode(flag, "--approve", None)
    path = home / "tui" / CONFIG_FILE
    data = _read_yaml(path)
    if data is None:
        return "off"
    if not isinstance(data, dict):
        raise ApprovalConfigError(f"{path}: the file must be a mapping of settings",
                                  where=Where(path))
    value = data.get("approve")
    if value is None:
        return "off"
    if value is False:
        return "off"
    return _mode(value, "approve", path)


def _mode(value: object, name: str, path: Path | None) -> Mode:
    for mode in MODES:
        if value == mode:
            return mode
    where = f"{path}: key approve: " if path is not None else f"{name}: "
    raise ApprovalConfigError(f"{where}{value!r} is not one of shell, tools, all, off",
                              where=Where(path, None, "approve") if path else None)


def _read_yaml(path: Path) -> Any:
    from tui.core.errors import YamlError
    from tui.core.manifest.located_yaml import read

    try:
        return read(path)[0]
    except FileNotFoundError:
        return None
    except YamlError as exc:
        raise ApprovalConfigError(str(exc), where=Where(path)) from None


@dataclass
class Rules:
    """Rules for one capsule: shell prefixes and tool names."""

    shell: list[Rule] = field(default_factory=list)
    tools: set[str] = field(default_factory=set)

    def allows(self, request: ApprovalRequest, *more: Rules) -> bool:
        """Whether these rules, with `more` (the session's and the stored together: a script
        whose commands each one allows), allow the call."""
        if request.kind == "tool":
            return any(request.tool_name in rules.tools for rules in (self, *more))
        return allowed([rule for rules in (self, *more) for rule in rules.shell], request.argv)

    def add(self, request: ApprovalRequest, choice: Choice = "always") -> None:
        if request.kind == "tool":
            self.tools.add(request.tool_name)
            return
        for rule in request.remembers(choice):
            if rule not in self.shell:
                self.shell.append(rule)


class ApprovalStore:
    """`$MURMUR_HOME/tui/approvals.yaml` (0600): "always" rules, per capsule (the manifest's
    path and the capsule's name)::

        capsules:
          - manifest: /path/to/murmur.yaml
            name: my-capsule
            shell: [[git], [bash, -c, npm, run], [bash, -c, ls]]
            tools: [fetch-page]
    """

    def __init__(self, home: Path) -> None:
        self.path = home / "tui" / STORE_FILE
        self._guard = threading.Lock()

    def rules(self, capsule: str) -> Rules:
        return self._load().get(capsule, Rules())

    def _load(self) -> dict[str, Rules]:
        data = _read_yaml(self.path)
        if data is None:
            return {}
        entries = data.get("capsules") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise ApprovalConfigError(f"{self.path}: key capsules: must be a list",
                                      where=Where(self.path, None, "capsules"))
        found: dict[str, Rules] = {}
        for number, entry in enumerate(entries):
            here = f"{self.path}: key capsules[{number}]"
            if not isinstance(entry, dict) or not isinstance(entry.get("manifest"), str) \
                    or not isinstance(entry.get("name"), str):
                raise ApprovalConfigError(f"{here}: needs manifest: and name: strings",
                                          where=Where(self.path, None, f"capsules[{number}]"))
            rules = found.setdefault(f"{entry['manifest']}#{entry['name']}", Rules())
            shell, tools = entry.get("shell") or [], entry.get("tools") or []
            if not isinstance(shell, list) or not all(
                    isinstance(words, list) and words and all(isinstance(w, str) for w in words)
                    for words in shell):
                raise ApprovalConfigError(f"{here}.shell: must be a list of word lists",
                                          where=Where(self.path, None,
                                                      f"capsules[{number}].shell"))
            if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
                raise ApprovalConfigError(f"{here}.tools: must be a list of tool names",
                                          where=Where(self.path, None,
                                                      f"capsules[{number}].tools"))
            rules.shell.extend(tuple(words) for words in shell)
            rules.tools.update(tools)
        return found

    def add(self, request: ApprovalRequest) -> None:
        """Store what "always" remembers of `request`."""
        import yaml

        from tui.core.fs.private_files import write_private

        with self._guard:
            found = self._load()
            found.setdefault(request.capsule, Rules()).add(request)
            entries = []
            for key in sorted(found):
                manifest, _, name = key.rpartition("#")
                rules = found[key]
                entries.append({"manifest": manifest, "name": name,
                                "shell": [list(words) for words in rules.shell],
                                "tools": sorted(rules.tools)})
            write_private(self.path, yaml.safe_dump({"capsules": entries}, sort_keys=False,
                                                    allow_unicode=True))


class Approvals:
    """The gate for one session: which calls ask, the rules that answer without asking, and
    the approver that answers the rest. `check` runs on the session's thread."""

    hook_name = HOOK_NAME  # `call_denied.hook_name`

    def __init__(self, mode: Mode, store: ApprovalStore, approver: Approver,
                 capsule: str) -> None:
        self.mode = mode
        self.store = store
        self.approver = approver
        self.capsule = capsule
        self.session = Rules()

    def asks(self, kind: str) -> bool:
        if kind == "shell":
            return self.mode in ("shell", "all")
        if kind == "wasm":
            return self.mode in ("tools", "all")
        return False  # skills, and names no tool answers (refused anyway)

    def request(self, kind: str, tool_name: str, call_input: Mapping[str, Any],
                cancel: CancelToken | None = None, call_id: str | None = None
                ) -> ApprovalRequest | None:
        """The request for a call that asks; None when the call does not ask (its kind, or a
        shell input the tool refuses without running anything)."""
        if not self.asks(kind):
            return None
        if kind == "wasm":
            return ApprovalRequest("tool", tool_name, tool_name, (), call_input, (),
                                   self.capsule, cancel, call_id=call_id)
        command = call_input.get("command")
        if not isinstance(command, str) or not command.strip():
            return None
        argv = shell_argv(tool_name, command.strip())
        if argv is None:
            return None
        return ApprovalRequest("shell", tool_name, resolve(tool_name), argv, call_input,
                               shell_prefix(argv), self.capsule, cancel,
                               program=shell_program(argv), call_id=call_id)

    def check(self, request: ApprovalRequest) -> ApprovalDecision:
        """Allowed by a rule, or the approver's decision (remembered as it asks)."""
        try:
            stored = self.store.rules(self.capsule)
        except ApprovalConfigError:  # checked at launch; an edit since then allows nothing
            stored = Rules()
        if self.session.allows(request, stored):
            return ApprovalDecision("once")
        decision = self.approver.decide(request)
        if decision.choice == "prefix":
            self.session.add(request, "prefix")
        elif decision.choice == "always":
            self.session.add(request, "always")
            with contextlib.suppress(OSError, ApprovalConfigError):  # allowed, this session
                self.store.add(request)
        return decision


@dataclass(frozen=True)
class Setup:
    """Approvals as the launch settled them, before the approver (screen or headless) is
    known."""

    mode: Mode
    store: ApprovalStore
    capsule: str

    def gate(self, approver: Approver) -> Approvals:
        return Approvals(self.mode, self.store, approver, self.capsule)


def prepare(flag: str | None, home: Path, manifest_path: Path, name: str) -> Setup | None:
    """The launch's approvals (None when off). A bad `approve:` or approvals.yaml raises
    ApprovalConfigError naming the file and key, before anything runs."""
    mode = read_mode(flag, home)
    if mode == "off":
        return None
    store = ApprovalStore(home)
    key = capsule_key(manifest_path, name)
    store.rules(key)
    return Setup(mode, store, key)
