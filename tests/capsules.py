"""The one way a test writes a capsule folder: a `murmur.yaml` and, for the scripted driver,
its `script.json`. A test passes what it is about (its script, its tools, a lifecycle) and
the rest is the same everywhere; a test about the manifest's own text (hostile or fuzzed
manifests, the reader's messages) writes that text itself."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

# the committed WebAssembly fixtures (WAT sources built into .wasm) a capsule can name
FIXTURES = Path(__file__).resolve().parent / "wasm" / "fixtures"
SCRIPT = "script.json"
DRIVER = "script-driver"


def _flow(value: object) -> str:
    """A YAML value for `value`: a plain word as it is, anything else as JSON (which is YAML)."""
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z_/.][\w./-]*", value) \
            and value.lower() not in ("true", "false", "yes", "no", "on", "off", "null"):
        return value
    return json.dumps(value)


def write_capsule(
    root: Path,
    responses: Sequence[Mapping[str, Any]] | None = None,
    *,
    name: str = "test-capsule",
    version: str = "1.0.0",
    model: str = "test-model",
    max_turns: int | None = 10,
    driver_config: Mapping[str, Any] | None = None,
    driver: str | None = None,
    tools: Mapping[str, Path | str] | None = None,
    shell: Sequence[str] = ("bash",),
    capabilities: str = "",
    lifecycle: Mapping[str, Any] | None = None,
    hooks: str = "",
    artifacts: str = "",
    extra: str = "",
) -> Path:
    """Write the capsule at `root` (made if missing) and return `root`.

    responses      the scripted driver's turns (tests/responses.py), written to script.json;
                   None writes no script (one is there already, or `driver` replaces it)
    driver_config  more of the scripted driver's config (`chunk_chars`, …)
    driver         YAML of an artifact entry (`  - name: …`) that is the driver instead
                   of the scripted one; the entry's name must be `wasm-driver`
    tools          tool artifacts by name: their `source` (a path; `{fixtures}` expands to
                   tests/wasm/fixtures)
    shell          `capabilities.shell.allow`; empty for no shell
    capabilities   more YAML lines under `capabilities:` (indented two spaces)
    lifecycle      `lifecycle:` keys
    hooks          YAML lines of `hooks:` entries (indented two spaces)
    artifacts      more YAML artifact entries (`  - name: …`); `{fixtures}` expands
    extra          more top-level YAML, appended as it is
    """
    root.mkdir(parents=True, exist_ok=True)
    if responses is not None:
        (root / SCRIPT).write_text(json.dumps(list(responses)), encoding="utf-8")
    lines = [f"name: {name}", f"version: {_flow(version)}", "artifacts:"]
    if driver is None:
        config = {"script": SCRIPT, **(driver_config or {})}
        lines += [f"  - name: {DRIVER}", "    runtime: driver", "    builtin: scripted",
                  "    config:", *(f"      {key}: {_flow(value)}" for key, value in config.items())]
    else:
        lines.append(driver.rstrip("\n"))
    for tool, source in (tools or {}).items():
        lines += [f"  - name: {tool}", "    runtime: tool",
                  f"    source: {_expand(str(source))}"]
    if artifacts:
        lines.append(_expand(artifacts).rstrip("\n"))
    if hooks:
        lines += ["hooks:", hooks.rstrip("\n")]
    inference = [f"  model: {model}"]
    if max_turns is not None:
        inference.append(f"  max_turns: {max_turns}")
    inference += ["  driver:", f"    artifact: {DRIVER if driver is None else 'wasm-driver'}"]
    lines += ["inference:", *inference]
    if shell or capabilities:
        lines.append("capabilities:")
        if shell:
            lines += ["  shell:", f"    allow: [{', '.join(shell)}]"]
        if capabilities:
            lines.append(capabilities.rstrip("\n"))
    if lifecycle:
        lines.append("lifecycle:")
        lines += [f"  {key}: {_flow(value)}" for key, value in lifecycle.items()]
    manifest = "\n".join(lines) + "\n" + extra
    (root / "murmur.yaml").write_text(manifest, encoding="utf-8")
    return root


def _expand(text: str) -> str:
    return text.replace("{fixtures}", str(FIXTURES))


def set_driver_config(root: Path, **config: object) -> None:
    """Add `config` to the scripted driver's config in the capsule at `root`: for a test that
    turns on, say, `requests_log` between two runs of the same capsule."""
    path = root / "murmur.yaml"
    manifest = yaml.safe_load(path.read_text(encoding="utf-8"))
    drivers = [entry for entry in manifest["artifacts"] if entry.get("builtin") == "scripted"]
    assert drivers, f"no scripted driver in {path}"
    for entry in drivers:
        entry.setdefault("config", {}).update(
            {key: str(value) if isinstance(value, Path) else value
             for key, value in config.items()})
    path.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
