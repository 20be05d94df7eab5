"""A `capabilities:` block -> `Capabilities`: network, filesystem, shell, env, limits, the
read grants (conversation, task_io) and, capsule-wide, `spawn.allow`; capsule-wide or on one
artifacts entry."""

from __future__ import annotations

import re
from pathlib import Path

from tui.core.manifest.model import Capabilities, Limits
from tui.core.manifest.problems import describe
from tui.core.manifest.runtime_tools import RESERVED, RUNTIME_TOOLS, reserved_problem
from tui.core.manifest.yaml_section import MISSING, Section, path_problem
from tui.core.text.secrets import credential_shaped
from tui.core.text.segments import MAX_NAME_BYTES

_BINARY_NAME = re.compile(r"^[A-Za-z0-9._+-]+$")
_CAPSULE_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$")  # an artifact's name
# Keys Murmur defines that murmur-tui reads no further (accepted without a warning).
_INERT_CAPABILITIES = ("peer_fetch", "resources", "containment", "plan", "state", "task_io")


def read_capabilities(
    section: Section | None, *, capsule_wide: bool, hook: bool = False
) -> Capabilities:
    if section is None:
        return Capabilities()
    network_allow = Capabilities.network_allow
    network_declared = Capabilities.network_declared
    if (network := section.section("network")) is not None:
        network_declared = network.raw("allow") is not MISSING
        network_allow = network.strings("allow") or network_allow
        network.mark_known("unix_sockets")
        network.finish()
    scope, read_only = _read_filesystem(section.section("filesystem"))
    shell_allow, strip_env = Capabilities.shell_allow, Capabilities.shell_strip_env
    if (shell := section.section("shell")) is not None:
        shell_allow = shell.strings("allow", allow_empty=False) or shell_allow
        for binary in shell_allow:
            if not _BINARY_NAME.match(binary):
                shell.problem("allow", f"{describe(binary)} is not a bare binary name")
            elif binary in RUNTIME_TOOLS:
                shell.problem("allow", reserved_problem(binary), RESERVED)
            elif len(binary) > MAX_NAME_BYTES:  # ASCII: a character is a byte
                shell.problem("allow", f"{describe(binary)} is {len(binary)} bytes long; a "
                              f"binary's name (and its tools/<name>/ folder) holds at most "
                              f"{MAX_NAME_BYTES}")
        strip_env = shell.strings("strip_env") or strip_env
        shell.mark_known("baseline_env", "interpreter_runtime", "staged_runtime")
        shell.finish()
    env_allow = Capabilities.env_allow
    if (env := section.section("env")) is not None:
        env_allow = env.strings("allow") or env_allow
        for variable in env_allow:
            if credential_shaped(variable):
                env.warn("allow", f"{describe(variable)} looks like a credential; murmur-tui "
                         "never passes such a variable to a component or a shell command, even "
                         "when allowed by name (docs/security.md)", "W-SEC-024")
        env.finish()
    limits = read_limits(section.section("limits"))
    conversation_read = _read_grant(section, "conversation", Capabilities.conversation_read,
                                    capsule_wide=capsule_wide, hook=hook)
    task_io_read = _read_grant(section, "task_io", Capabilities.task_io_read,
                               capsule_wide=capsule_wide, hook=hook)
    spawn_allow = _read_spawn(section.section("spawn")) if capsule_wide else ()
    section.mark_known("spawn", *_INERT_CAPABILITIES)
    section.finish()
    return Capabilities(
        network_allow=network_allow, network_declared=network_declared, filesystem_scope=scope,
        filesystem_read_only=read_only,
        shell_allow=shell_allow, shell_strip_env=strip_env, env_allow=env_allow, limits=limits,
        limits_declared=section.has("limits"),
        conversation_read=conversation_read, task_io_read=task_io_read, spawn_allow=spawn_allow,
    )


def _read_spawn(section: Section | None) -> tuple[str, ...]:
    """`spawn.allow`: each entry an installed capsule artifact's name (Murmur's), or a capsule
    folder relative to this capsule, written with a `/` (`./helper`, `../team/reviewer`:
    murmur-tui's). The folders are read when the session builds its tools."""
    if section is None:
        return ()
    allow = section.strings("allow") or ()
    section.finish()
    seen: set[str] = set()
    for entry in allow:
        if entry in seen:
            section.problem("allow", f"{describe(entry)} is listed twice")
            return ()
        seen.add(entry)
        if "/" in entry:
            if entry.startswith("/") or not entry.strip("./"):
                section.problem("allow", f"{describe(entry)} must be a capsule folder relative "
                                "to this capsule's folder (./helper), not absolute")
                return ()
        elif not _CAPSULE_NAME.match(entry):
            section.problem("allow", f"{describe(entry)} is neither an installed capsule's name "
                            "(lowercase letters, digits and '-') nor a capsule folder (a "
                            "relative path such as ./helper)")
            return ()
    return allow


def _read_filesystem(section: Section | None) -> tuple[str | None, tuple[str, ...]]:
    scope, read_only = Capabilities.filesystem_scope, Capabilities.filesystem_read_only
    if section is None:
        return scope, read_only
    scope = section.file_path("scope", scope)
    if scope is not None and (scope.startswith("/") or ".." in Path(scope).parts):
        section.problem("scope", f"{describe(scope)} must be a relative path under the "
                        "workdir (no '..', not absolute)", "E-CAP-002")
        scope = Capabilities.filesystem_scope
    read_only = section.strings("read_only") or read_only
    for entry in read_only:
        if problem := path_problem(entry):
            section.problem("read_only", f"{describe(entry)} {problem}")
            read_only = Capabilities.filesystem_read_only
            break
    section.mark_known("workdir_exec")
    section.finish()
    return scope, read_only


def _read_grant(section: Section, key: str, default: bool, *, capsule_wide: bool,
                hook: bool) -> bool:
    block = section.section(key)
    if block is None:
        return default
    granted = bool(block.boolean("read", default, required=hook))
    block.finish()
    if capsule_wide and key == "conversation":
        section.warn(key, "capabilities.conversation is inert capsule-wide; grant "
                     "conversation.read on the hook's artifacts entry", "W-SEC-016")
        return default
    return granted


def read_limits(section: Section | None) -> Limits:
    if section is None:
        return Limits()
    limits = Limits(
        memory_bytes=section.integer("memory_bytes", Limits.memory_bytes, minimum=1),
        table_elements=section.integer("table_elements", Limits.table_elements, minimum=1),
        instances=section.integer("instances", Limits.instances, minimum=1),
        deadline_seconds=section.number("deadline_seconds", Limits.deadline_seconds,
                                        check=lambda v: v > 0, expectation="a number > 0"),
    )
    section.finish()
    return limits
