"""A component's sandbox from the manifest: folder, environment, memory and deadline.

- A tool's only preopened folder is its session workdir; a driver gets none; a hook gets none
  unless its entry grants `filesystem.scope` (that folder under the workdir, as `.`).
- The environment holds only the `MURMUR_*` variables murmur-tui sets and the host variables
  named in `capabilities.env.allow` (the entry's, else the capsule's) — never one whose name is
  credential-shaped (`secrets.credential_shaped`), even when allowed by name.
- Limits, from the entry's `capabilities.limits` when it declares them, else the capsule's:
  `memory_bytes` (512 MiB, all the component's linear memories together), `table_elements`
  (100,000, all its tables together), `instances` (1,000 core instances) and
  `deadline_seconds` (600 s, hooks 30 s). guest.py enforces them on the store.
- Network: each outgoing wasi:http request is checked against `network.allow` (`network`
  below, `http_gate.py`); with no list every request is refused.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from tui.core.a2a import net_policy
from tui.core.a2a.net_policy import Rule
from tui.core.chat import compact_json
from tui.core.fs.private_files import make_private_dirs
from tui.core.manifest.model import Artifact, Capsule
from tui.core.text.secrets import credential_shaped
from tui.core.wasm.guest import Sandbox

DEFAULT_DEADLINE = 600.0
HOOK_DEADLINE = 30.0


def environment(capsule: Capsule, entry: Artifact, extra: Mapping[str, str]) -> dict[str, str]:
    env: dict[str, str] = {}
    allow = (entry.capabilities.env_allow if entry.capabilities and entry.capabilities.env_allow
             else capsule.capabilities.env_allow)
    for name in allow:
        if name in os.environ and not credential_shaped(name,
                                                        capsule.capabilities.shell_strip_env):
            env[name] = os.environ[name]
    if entry.config:
        env["MURMUR_ARTIFACT_CONFIG"] = compact_json(dict(entry.config))
    if capsule.inference and capsule.inference.driver_config:
        env["MURMUR_INFERENCE_DRIVER_CONFIG"] = compact_json(dict(capsule.inference.driver_config))
    env.update(extra)
    return env


def sandbox(capsule: Capsule, entry: Artifact, *, workdir: Path, logs: Path,
            extra_env: Mapping[str, str]) -> Sandbox:
    own = entry.capabilities
    declared = own is not None and own.limits_declared
    where = f"artifacts[{entry.name}].capabilities.limits" if declared else "capabilities.limits"
    limits = own.limits if own is not None and declared else capsule.capabilities.limits
    default = HOOK_DEADLINE if entry.runtime == "hook" else DEFAULT_DEADLINE
    deadline = limits.deadline_seconds or default
    preopen: Path | None = None
    if entry.runtime == "tool":
        preopen = workdir
    elif entry.runtime == "hook" and own and own.filesystem_scope:
        preopen = workdir / own.filesystem_scope
        make_private_dirs(preopen)
    return Sandbox(
        log_path=logs / f"{entry.name}.log",
        memory_bytes=limits.memory_bytes,
        deadline_seconds=float(deadline),
        table_elements=limits.table_elements,
        instances=limits.instances,
        limits_key=where,
        preopen=preopen,
        env=environment(capsule, entry, extra_env),
        network=network(capsule, entry),
    )


def network(capsule: Capsule, entry: Artifact) -> tuple[Rule, ...]:
    """The rules an entry's outgoing wasi:http requests are checked against: its own
    `network.allow` clamped to the capsule's (entries outside it are dropped), else the
    capsule's. A hook has only its own (none: no network), as in Murmur."""
    granted = entry.capabilities
    own = granted.network_allow if granted is not None and granted.network_declared else None
    if entry.runtime == "hook":
        return net_policy.parse_rules(
            own, f"artifacts[{entry.name}].capabilities.network.allow") if own else ()
    rules, _dropped = net_policy.effective(capsule.capabilities.network_allow, own,
                                           entry.name)
    return rules
