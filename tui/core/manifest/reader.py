"""`murmur.yaml` -> a typed, validated `Capsule` (spec §1; the classes are in model.py).

Unknown keys are warned (`W-SEC-019`), never refused. A wrong type, a missing required key, a
bad record store or YAML murmur-tui will not read (tui/core/manifest/located_yaml.py) refuses
the manifest with `ManifestError`, whose every line names the file, the line and the key path.
Everything a session would otherwise refuse at setup (a built-in driver's `config`, paths) is
checked here, so it is located too. Keys Murmur defines but murmur-tui does not act on are
accepted silently (docs/manifest.md lists them). A key left out gets the default its class's
field declares; no default is written here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tui.core.errors import ManifestError, Problem, YamlError
from tui.core.manifest.artifact_entry import read_artifact
from tui.core.manifest.capabilities import read_capabilities
from tui.core.manifest.exports import read_exports
from tui.core.manifest.located_yaml import MAX_FILE_BYTES, load, read_text
from tui.core.manifest.model import (
    AFTER_TASKS,
    CAPTURES,
    CONVERSATIONS,
    HTTP_BUILTINS,
    MANIFEST_NAME,
    TASK_ACCEPTANCES,
    TRANSPORTS,
    Artifact,
    Capsule,
    Compaction,
    ContextSettings,
    Inference,
    Lifecycle,
    Retain,
    Retry,
    TraceRetain,
    TraceSettings,
)
from tui.core.manifest.network import read_network
from tui.core.manifest.older_forms import OlderEndpoint, as_gateway, read_older_endpoint
from tui.core.manifest.problems import ProblemReport, describe
from tui.core.manifest.runtime_tools import check_runtime_names, check_spawn_with_authentication
from tui.core.manifest.yaml_section import Section
from tui.core.text.segments import segment_problem

_DURATION = re.compile(r"^([0-9]{1,9})([smhd])$")
_DURATION_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# Keys Murmur defines that murmur-tui reads no further (accepted without a warning).
_INERT_TOP = ("mur_version", "observability", "control",
              "runtime", "implementation", "execution", "requires_files", "description",
              "input_schema", "upstream_auth", "binding", "execution_mode", "commit_policy")


def manifest_path(target: Path) -> Path:
    """A capsule folder or a manifest file -> the manifest file."""
    return target / MANIFEST_NAME if target.is_dir() else target


def load_capsule(target: Path) -> Capsule:
    """Read and validate a capsule manifest; raise ManifestError naming every problem."""
    shown = Path(target)
    try:
        path = shown = manifest_path(target).resolve()
        text = read_text(path)
    except FileNotFoundError:
        raise ManifestError([Problem(shown, None, "", "no such file (a capsule is a folder "
                                     "holding murmur.yaml, or the manifest path)")]) from None
    except YamlError as exc:
        raise ManifestError(exc.problems) from None
    except (OSError, ValueError, RuntimeError) as exc:  # a path the system cannot follow
        raise ManifestError([Problem(shown, None, "", f"cannot be read: {exc}")]) from None
    return parse_capsule(path, text)


def parse_capsule(path: Path, text: str) -> Capsule:
    report = ProblemReport(path)
    try:
        data, node = load(path, text)
    except YamlError as exc:
        raise ManifestError(exc.problems) from None
    if not isinstance(data, dict):
        raise ManifestError([Problem(path, 1, "", "expected a mapping of keys at the top "
                                     f"level, got {describe(data)}")])
    top = Section(report, "", data, node, 1)
    capsule = _read_capsule(top, path)
    if report.problems:
        ordered = sorted(report.problems, key=lambda problem: problem.line or 0)
        raise ManifestError(ordered, report.warnings)
    return capsule


def _read_capsule(top: Section, path: Path) -> Capsule:
    name = top.string("name", "", required=True)
    version = top.string("version", "", required=True)
    top.mark_known(*_INERT_TOP)
    entries = [(item, read_artifact(item)) for item in top.items("artifacts")]
    artifacts = tuple(entry for _, entry in entries)
    # an entry whose builtin: names no built-in driver was refused for that already
    unknown_builtin = {entry.name for item, entry in entries
                       if entry.builtin is None and isinstance(item.data.get("builtin"), str)}
    _check_unique_names(top, artifacts)
    capabilities = read_capabilities(top.section("capabilities"), capsule_wide=True)
    check_runtime_names(top, artifacts)
    context = _read_context(top.section("context"))
    inference, older = _read_inference(top.section("inference"), path.parent)
    lifecycle = _read_lifecycle(top.section("lifecycle"))
    trace = _read_trace(top.section("trace"))
    network = read_network(top.section("network"))
    exports = read_exports(top.section("exports"))
    check_spawn_with_authentication(top, capabilities, network)
    top.finish()
    if inference is not None and older is not None:  # Murmur v0.2.0's provider keys
        artifacts = as_gateway(top, older, artifacts, inference.driver_artifact)
    if inference is not None:
        _check_driver(top, inference, artifacts, unknown_builtin)
    if name and (problem := segment_problem(name)):
        names_record = context.record and context.record_store is None
        top.problem("name", f"{describe(name)} {problem}, so it cannot name the capsule's "
                    "folder under $MURMUR_HOME/workdirs" + (
                        " nor its conversation record (context.record_store would name that)"
                        if names_record else ""), "E-CAP-011" if names_record else None)
    return Capsule(
        name=name, version=version, manifest_path=path, artifacts=artifacts,
        capabilities=capabilities, context=context, inference=inference,
        lifecycle=lifecycle, trace=trace, network=network, exports=exports,
        warnings=tuple(top.report.warnings),
    )


def _check_unique_names(top: Section, artifacts: tuple[Artifact, ...]) -> None:
    seen: set[str] = set()
    for entry in artifacts:
        if entry.name and entry.name in seen:
            top.report.problem(entry.line, "artifacts", f"{describe(entry.name)} is declared "
                               "twice")
        seen.add(entry.name)


def _check_driver(top: Section, inference: Inference, artifacts: tuple[Artifact, ...],
                  unknown_builtin: set[str]) -> None:
    entry = next((item for item in artifacts if item.name == inference.driver_artifact), None)
    key = "inference.driver.artifact"
    if entry is None:
        names = ", ".join(item.name for item in artifacts if item.runtime == "driver") or "none"
        top.report.problem(top.line_of("inference"), key, f"names "
                           f"{describe(inference.driver_artifact)}, which is not an artifacts "
                           f"entry (driver entries: {names})")
    elif entry.runtime != "driver":
        top.report.problem(entry.line, key, f"names {entry.name!r}, whose runtime is "
                           f"{entry.runtime!r}; it must be runtime: driver")
    elif entry.builtin is None and entry.gateway is None and entry.name not in unknown_builtin:
        top.report.problem(entry.line, f"artifacts[{entry.name}].gateway",
                           "a WebAssembly driver needs a gateway: block with an endpoint")
    elif entry.builtin in HTTP_BUILTINS and entry.gateway is None:
        top.report.problem(entry.line, f"artifacts[{entry.name}].gateway",
                           f"builtin: {entry.builtin} needs a gateway: block with the provider's "
                           "endpoint and api_key")


def _read_context(section: Section | None) -> ContextSettings:
    if section is None:
        return ContextSettings()
    max_tokens = section.integer("max_tokens", ContextSettings.max_tokens, minimum=1)
    record = _read_on_off(section, "record", ContextSettings.record)
    record_store = section.string("record_store", ContextSettings.record_store)
    if record_store is not None and (problem := segment_problem(record_store)):
        section.problem("record_store", f"{describe(record_store)} {problem}", "E-CAP-011")
    retain = _read_retain(section)
    images_max_bytes = ContextSettings.images_max_bytes
    if (images := section.section("images")) is not None:
        images_max_bytes = images.integer("max_bytes", images_max_bytes, minimum=1)
        images.finish()
    seed_budget = section.number("seed_budget", ContextSettings.seed_budget,
                                 check=lambda v: 0 <= v <= 1,
                                 expectation="a fraction between 0 and 1")
    section.mark_known("seed_overflow_margin")
    section.finish()
    return ContextSettings(max_tokens=max_tokens, record=record, record_store=record_store,
                           retain=retain, images_max_bytes=images_max_bytes,
                           seed_budget=seed_budget)


def _read_on_off(section: Section, key: str, default: bool) -> bool:
    value = section.raw(key)
    if not section.has(key):
        return default
    if value is True or value == "on":
        return True
    if value is False or value == "off":
        return False
    section.problem(key, f"expected on or off, got {describe(value)}")
    return default


def _duration(section: Section, key: str) -> int | None:
    """`key`'s duration (`30d`, `12h`, `90m`, `45s`) in seconds; None when not set (or wrong:
    a problem)."""
    raw = section.raw(key)
    if isinstance(raw, str) and (match := _DURATION.match(raw)):
        return int(match.group(1)) * _DURATION_SECONDS[match.group(2)]
    if section.has(key):
        section.problem(key, f"expected a duration like 30d, 12h, 90m or 45s; got "
                        f"{describe(raw)}")
    return None


def _read_retain(section: Section) -> Retain | None:
    retain = section.section("retain")
    if retain is None:
        return ContextSettings.retain
    max_messages = retain.integer("max_messages", Retain.max_messages, minimum=1)
    max_age = _duration(retain, "max_age")
    if not retain.data:
        section.problem("retain", "must set max_messages or max_age (an empty block means "
                        "nothing; remove it to keep every message)")
    retain.finish()
    return Retain(max_messages=max_messages, max_age_seconds=max_age)


def _read_inference(section: Section | None, root: Path
                    ) -> tuple[Inference | None, OlderEndpoint | None]:
    if section is None:
        return None, None
    older = read_older_endpoint(section)
    transport = section.choice("transport", "http", TRANSPORTS)
    if transport == "process":
        section.problem("transport", "process transport (a CLI harness) is not supported by "
                        "murmur-tui; use an http driver")
    model = section.string("model", "", required=True)
    driver_artifact = ""
    driver_config: dict[str, Any] = {}
    driver = section.section("driver")
    if driver is None and (provider := section.section("provider")) is not None:
        driver = provider  # the older spelling of driver.artifact
    if driver is None:
        section.problem("driver", "is required: name the driver with driver.artifact")
    else:
        driver_artifact = driver.string("artifact", "", required=True)
        driver_config = driver.mapping("config") or {}
        driver.finish()
    prompt = _read_system_prompt(section, root)
    inference = Inference(
        model=model, driver_artifact=driver_artifact, driver_config=driver_config,
        max_turns=section.integer("max_turns", Inference.max_turns, minimum=1),
        max_tokens=section.integer("max_tokens", Inference.max_tokens, minimum=1),
        max_session_tokens=section.integer("max_session_tokens", Inference.max_session_tokens,
                                           minimum=1),
        system_prompt=prompt,
        compaction=_read_compaction(section.section("compaction"), root),
        retry=_read_retry(section.section("retry")),
        params=section.mapping("params") or {},
    )
    section.mark_known("provider", "alternates", "tool_refresh", "system_prompt_artifact",
                       "max_task_reopens")
    section.finish()
    return inference, older


def _read_system_prompt(section: Section, root: Path) -> str | None:
    inline = section.string("system_prompt", None)
    file_name = section.file_path("system_prompt_file", None)
    if inline is not None and file_name is not None:
        section.problem("system_prompt_file", "set system_prompt or system_prompt_file, not both")
        return None
    if inline is not None:
        return inline.strip()
    if file_name is None:
        return None
    target = root / file_name
    try:
        return read_text(target, max_bytes=MAX_FILE_BYTES)
    except FileNotFoundError:
        reason = "no such file"
    except YamlError as exc:
        line = f" (line {exc.problem.line})" if exc.problem.line else ""
        reason = f"{exc.problem.message}{line}"
    section.problem("system_prompt_file", f"{target}: {reason}", "E-RUN-009")
    return None


def _read_compaction(section: Section | None, root: Path) -> Compaction:
    if section is None:
        return Compaction()
    threshold = section.number("threshold", Compaction.threshold, check=lambda v: 0 < v <= 1,
                               expectation="a fraction in (0, 1]")
    model = section.string("model", Compaction.model)
    prompt = _read_system_prompt(section, root)
    dump = section.boolean("dump_summaries", Compaction.dump_summaries)
    section.finish()
    return Compaction(threshold=threshold, model=model, system_prompt=prompt,
                      dump_summaries=dump)


def _read_retry(section: Section | None) -> Retry:
    if section is None:
        return Retry()
    retry = Retry(
        max_attempts=section.integer("max_attempts", Retry.max_attempts, minimum=1),
        initial_backoff_ms=section.integer("initial_backoff_ms", Retry.initial_backoff_ms,
                                           minimum=0),
        max_backoff_ms=section.integer("max_backoff_ms", Retry.max_backoff_ms, minimum=0),
    )
    section.finish()
    return retry


def _read_lifecycle(section: Section | None) -> Lifecycle:
    if section is None:
        return Lifecycle()
    lifecycle = Lifecycle(
        task_acceptance=section.choice("task_acceptance", Lifecycle.task_acceptance,
                                       TASK_ACCEPTANCES),
        after_task=section.choice("after_task", Lifecycle.after_task, AFTER_TASKS),
        queue_depth=section.integer("queue_depth", Lifecycle.queue_depth, minimum=1),
        input_timeout_secs=section.number("input_timeout_secs", Lifecycle.input_timeout_secs,
                                          check=lambda v: v > 0,
                                          expectation="a number of seconds > 0"),
        conversation=section.choice("conversation", Lifecycle.conversation, CONVERSATIONS),
        max_task_reopens=section.integer("max_task_reopens", Lifecycle.max_task_reopens,
                                         minimum=0),
        shell_grace_secs=section.number("shell_grace_secs", Lifecycle.shell_grace_secs,
                                        check=lambda v: v >= 0,
                                        expectation="a number of seconds >= 0"),
        delegation_deadline_secs=section.number(
            "delegation_deadline_secs", Lifecycle.delegation_deadline_secs,
            check=lambda v: v > 0, expectation="a number of seconds > 0"),
    )
    section.finish()
    return lifecycle


def _read_trace(section: Section | None) -> TraceSettings:
    if section is None:
        return TraceSettings()
    capture = section.choice("capture", TraceSettings.capture, CAPTURES)
    if section.has("include_tool_output") and section.boolean("include_tool_output", False):
        capture = "content"  # the retired alias
    retain = _read_trace_retain(section)
    section.finish()
    return TraceSettings(capture=capture, retain=retain)


def _read_trace_retain(section: Section) -> TraceRetain | None:
    """`trace.retain`: `max_sessions` (>= 1) and `max_age` (a duration); an empty block
    bounds nothing."""
    retain = section.section("retain")
    if retain is None:
        return None
    max_sessions = retain.integer("max_sessions", TraceRetain.max_sessions, minimum=1)
    max_age = _duration(retain, "max_age")
    retain.finish()
    return TraceRetain(max_sessions=max_sessions, max_age_seconds=max_age)
