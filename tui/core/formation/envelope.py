"""The spawn envelope (spec murmur-newest §9.1): a delegated child may hold no more capability
than the session that delegates to it, on any axis its manifest grants. `delegate-task` reads the
child's manifest before it starts anything and refuses a child that asks for more, naming the
key (docs/formations.md, "Delegation").

The axes murmur-tui's manifest has, each compared as the child's grant against the parent's:

- `capabilities.network.allow` — every destination the child may reach (its capsule-wide list
  and a hook entry's own, which is not clamped to the capsule's) must be covered by one the
  parent may reach (the same rule `covers` a component's own list with, tui/core/a2a/
  net_policy.py);
- `capabilities.shell.allow` — every binary the child may run, the parent may run;
- `capabilities.shell.strip_env` — every pattern the parent strips, the child strips too;
- `capabilities.env.allow` — every host variable the child's components may see (capsule-wide
  or an entry's own), the parent's may;
- `capabilities.spawn.allow` — every capsule the child may start, the parent may start (the
  same installed name, or the same capsule folder);
- `capabilities.filesystem.scope` / `.read_only` — a parent held to a scope holds its child
  to the same scope or one inside it, and what the parent may only read, the child may only
  read.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from tui.core.a2a.net_policy import Rule, parse_rule
from tui.core.errors import NetworkAllowError
from tui.core.manifest.model import Capsule

SHOWN = 5  # names listed in one refusal, then "and N more"


def excess(parent: Capsule, child: Capsule) -> str | None:
    """Where `child` asks for more than `parent` holds, every key in one sentence each; None
    when it holds no more."""
    problems = [problem for problem in (
        _network(parent, child), _shell(parent, child), _strip_env(parent, child),
        _env(parent, child), _spawn(parent, child), *_filesystem(parent, child))
        if problem is not None]
    return "; ".join(problems) if problems else None


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:SHOWN])
    return shown + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def _asks(key: str, items: list[str], may_not: str) -> str | None:
    if not items:
        return None
    return f"{key}: the child asks for {_names(items)}, which this session may not {may_not}"


# -- network ---------------------------------------------------------------------------------------
def _reach(capsule: Capsule) -> list[tuple[str, str]]:
    """(key, entry) of every network.allow entry that grants something: the capsule-wide list
    and each hook entry's own (a tool entry's own is clamped to the capsule's)."""
    found = [("capabilities.network.allow", entry)
             for entry in capsule.capabilities.network_allow]
    for artifact in capsule.artifacts:
        own = artifact.capabilities
        if artifact.runtime == "hook" and own is not None and own.network_declared:
            found += [(f"artifacts[{artifact.name}].capabilities.network.allow", entry)
                      for entry in own.network_allow]
    return found


def _rule(entry: str) -> Rule | None:
    try:
        return parse_rule(entry)
    except NetworkAllowError:
        return None


def _network(parent: Capsule, child: Capsule) -> str | None:
    held = [rule for _, entry in _reach(parent) if (rule := _rule(entry)) is not None]
    beyond: dict[str, list[str]] = {}
    for key, entry in _reach(child):
        rule = _rule(entry)
        if rule is None or not any(top.covers(rule) for top in held):
            beyond.setdefault(key, []).append(entry)
    said = [_asks(key, entries, "reach") for key, entries in beyond.items()]
    return "; ".join(text for text in said if text) or None


# -- shell and environment -------------------------------------------------------------------------
def _shell(parent: Capsule, child: Capsule) -> str | None:
    held = set(parent.capabilities.shell_allow)
    return _asks("capabilities.shell.allow",
                 [b for b in child.capabilities.shell_allow if b not in held], "run")


def _strip_env(parent: Capsule, child: Capsule) -> str | None:
    stripped = set(child.capabilities.shell_strip_env)
    kept = [p for p in parent.capabilities.shell_strip_env if p not in stripped]
    if not kept:
        return None
    return (f"capabilities.shell.strip_env: the child does not strip {_names(kept)}, which "
            "this session strips")


def _env_allow(capsule: Capsule) -> list[str]:
    names = list(capsule.capabilities.env_allow)
    for artifact in capsule.artifacts:
        if artifact.capabilities is not None:
            names += [n for n in artifact.capabilities.env_allow if n not in names]
    return names


def _env(parent: Capsule, child: Capsule) -> str | None:
    held = set(_env_allow(parent))
    return _asks("capabilities.env.allow",
                 [n for n in _env_allow(child) if n not in held], "pass to its components")


# -- spawn -----------------------------------------------------------------------------------------
def _starts(capsule: Capsule, entry: str) -> str:
    """What a spawn.allow entry starts: an installed capsule by name, or a folder (resolved)."""
    return str((capsule.root / entry).resolve()) if "/" in entry else entry


def _spawn(parent: Capsule, child: Capsule) -> str | None:
    held = {_starts(parent, entry) for entry in parent.capabilities.spawn_allow}
    beyond = [entry for entry in child.capabilities.spawn_allow
              if _starts(child, entry) not in held]
    return _asks("capabilities.spawn.allow", beyond, "start")


# -- filesystem ------------------------------------------------------------------------------------
def _within(path: str, outer: str) -> bool:
    inner_parts, outer_parts = PurePosixPath(path).parts, PurePosixPath(outer).parts
    return inner_parts[:len(outer_parts)] == outer_parts


def _filesystem(parent: Capsule, child: Capsule) -> list[str | None]:
    held, asked = parent.capabilities, child.capabilities
    problems: list[str | None] = []
    if held.filesystem_scope is not None and (
            asked.filesystem_scope is None
            or not _within(asked.filesystem_scope, held.filesystem_scope)):
        wants = ("the whole workdir (no scope)" if asked.filesystem_scope is None
                 else asked.filesystem_scope)
        problems.append(f"capabilities.filesystem.scope: the child asks for {wants}, where "
                        f"this session is held to {held.filesystem_scope}")
    writable = [path for path in held.filesystem_read_only
                if not any(_within(path, read) for read in asked.filesystem_read_only)]
    if writable:
        problems.append(f"capabilities.filesystem.read_only: the child may write "
                        f"{_names(writable)}, which this session may only read")
    return problems

