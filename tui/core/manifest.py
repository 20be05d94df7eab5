"""`murmur.yaml` -> a typed, validated `Capsule` (spec §1).

Unknown keys are warned (`W-SEC-019`), never refused. A wrong type, a missing required key, a
bad record store or YAML murmur-tui will not read (tui/core/located_yaml.py) refuses the
manifest with `ManifestError`, whose every line names the file, the line and the key path.
Everything a session would otherwise refuse at setup (a built-in driver's `config`, paths) is
checked here, so it is located too. Keys Murmur defines but murmur-tui does not act on are
accepted silently (docs/manifest.md lists them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.core.located_yaml import (
    MAX_FILE_BYTES,
    Problem,
    Report,
    YamlError,
    describe,
    load,
    read_text,
)
from tui.core.secrets import credential_shaped, remember
from tui.core.segments import segment_problem
from tui.core.yaml_section import Section, path_problem

MANIFEST_NAME = "murmur.yaml"
MIB = 1024 * 1024
RUNTIMES = ("tool", "driver", "hook", "skill")
BUILTIN_DRIVERS = ("scripted", "openai", "anthropic")
HTTP_BUILTINS = ("openai", "anthropic")
INTERPRETERS = frozenset({"bash", "sh", "zsh", "fish", "dash", "ksh"})
_ARTIFACT_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$")
_BINARY_NAME = re.compile(r"^[A-Za-z0-9._+-]+$")
_DURATION = re.compile(r"^([0-9]{1,9})([smhd])$")
_DURATION_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
KEY_REFERENCE = re.compile(r"^\$\{([A-Z_][A-Z0-9_]*)\}$")  # api_key: ${NAME}
MAX_KEY_CHARS = 4096  # a literal api_key longer than this is no provider's key

# Keys Murmur defines that murmur-tui reads no further (accepted without a warning).
_INERT_TOP = ("mur_version", "network", "observability", "exports", "control",
              "runtime", "implementation", "execution", "requires_files", "description",
              "input_schema", "upstream_auth", "binding", "execution_mode", "commit_policy")
_INERT_CAPABILITIES = ("peer_fetch", "resources", "containment", "plan", "spawn", "state",
                       "task_io")


class ManifestError(Exception):
    """The manifest was refused. `problems` each name file, line and key path."""

    def __init__(self, problems: list[Problem], warnings: list[Problem] | None = None) -> None:
        self.problems = problems
        self.warnings = warnings or []
        super().__init__("\n".join(str(problem) for problem in problems))


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = 512 * MIB
    table_elements: int = 100_000
    instances: int = 1000
    deadline_seconds: float | None = None  # None: 600 s for tools and drivers, 30 s for hooks


@dataclass(frozen=True)
class Capabilities:
    """A capability block: the capsule-wide ceiling, or one artifact entry's grant."""

    network_allow: tuple[str, ...] = ()
    filesystem_scope: str | None = None
    filesystem_read_only: tuple[str, ...] = ()
    shell_allow: tuple[str, ...] = ()
    shell_strip_env: tuple[str, ...] = ()  # more name patterns never passed (as Murmur's)
    env_allow: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    limits_declared: bool = False  # an entry without a limits block inherits the capsule's
    conversation_read: bool = False
    task_io_read: bool = False


@dataclass(frozen=True)
class Gateway:
    endpoint: str
    api_key: str | None = None
    keyless: bool = False
    upstream_auth: tuple[str, str] | None = None  # (header, value with {key}); None: default


@dataclass(frozen=True)
class HttpSettings:
    """`config` of a `builtin: openai|anthropic` driver entry."""

    stream: bool = True
    read_timeout_s: float = 300.0


@dataclass(frozen=True)
class Artifact:
    name: str
    version: str | None
    runtime: str
    line: int | None
    source: str | None = None
    builtin: str | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    gateway: Gateway | None = None
    capabilities: Capabilities | None = None  # None: no block declared
    on_overflow: str = "drop"
    http: HttpSettings | None = None  # a built-in HTTP driver's settings


@dataclass(frozen=True)
class Compaction:
    threshold: float = 0.98
    model: str | None = None
    system_prompt: str | None = None
    dump_summaries: bool = False


@dataclass(frozen=True)
class Retry:
    max_attempts: int = 3
    initial_backoff_ms: int = 500
    max_backoff_ms: int = 8000


@dataclass(frozen=True)
class Inference:
    model: str
    driver_artifact: str
    driver_config: Mapping[str, Any] = field(default_factory=dict)
    max_turns: int = 10
    max_tokens: int = 8192
    max_session_tokens: int | None = None
    system_prompt: str | None = None
    compaction: Compaction = field(default_factory=Compaction)
    retry: Retry = field(default_factory=Retry)
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Retain:
    max_messages: int | None = None
    max_age_seconds: int | None = None


@dataclass(frozen=True)
class Context:
    max_tokens: int | None = None
    record: bool = True
    record_store: str | None = None
    retain: Retain | None = None
    images_max_bytes: int = 5 * MIB
    seed_budget: float = 0.10


@dataclass(frozen=True)
class Lifecycle:
    task_acceptance: str = "single"
    after_task: str = "exit"
    queue_depth: int = 1
    input_timeout_secs: float | None = None
    conversation: str = "stateless"
    max_task_reopens: int = 1
    shell_grace_secs: float = 10


@dataclass(frozen=True)
class TraceSettings:
    capture: str = "meta"


@dataclass(frozen=True)
class Capsule:
    name: str
    version: str
    manifest_path: Path
    artifacts: tuple[Artifact, ...] = ()
    capabilities: Capabilities = field(default_factory=Capabilities)
    context: Context = field(default_factory=Context)
    inference: Inference | None = None
    lifecycle: Lifecycle = field(default_factory=Lifecycle)
    trace: TraceSettings = field(default_factory=TraceSettings)
    warnings: tuple[Problem, ...] = ()

    @property
    def root(self) -> Path:
        return self.manifest_path.parent

    @property
    def record_store(self) -> str:
        return self.context.record_store or self.name

    def artifact(self, name: str) -> Artifact | None:
        return next((entry for entry in self.artifacts if entry.name == name), None)

    @property
    def driver(self) -> Artifact | None:
        return self.artifact(self.inference.driver_artifact) if self.inference else None


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
    report = Report(path)
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
    artifacts = tuple(_read_artifact(item) for item in top.items("artifacts"))
    _check_unique_names(top, artifacts)
    capabilities = _read_capabilities(top.section("capabilities"), capsule_wide=True)
    context = _read_context(top.section("context"))
    inference = _read_inference(top.section("inference"), path.parent)
    lifecycle = _read_lifecycle(top.section("lifecycle"))
    trace = _read_trace(top.section("trace"))
    top.finish()
    if inference is not None:
        _check_driver(top, inference, artifacts)
    if name and (problem := segment_problem(name)):
        names_record = context.record and context.record_store is None
        top.problem("name", f"{describe(name)} {problem}, so it cannot name the capsule's "
                    "folder under $MURMUR_HOME/workdirs" + (
                        " nor its conversation record (context.record_store would name that)"
                        if names_record else ""), "E-CAP-011" if names_record else None)
    return Capsule(
        name=name, version=version, manifest_path=path, artifacts=artifacts,
        capabilities=capabilities, context=context, inference=inference,
        lifecycle=lifecycle, trace=trace, warnings=tuple(top.report.warnings),
    )


def _check_unique_names(top: Section, artifacts: tuple[Artifact, ...]) -> None:
    seen: set[str] = set()
    for entry in artifacts:
        if entry.name and entry.name in seen:
            top.report.problem(entry.line, "artifacts", f"{describe(entry.name)} is declared "
                               "twice")
        seen.add(entry.name)


def _check_driver(top: Section, inference: Inference, artifacts: tuple[Artifact, ...]) -> None:
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
    elif entry.builtin is None and entry.gateway is None:
        top.report.problem(entry.line, f"artifacts[{entry.name}].gateway",
                           "a WebAssembly driver needs a gateway: block with an endpoint")
    elif entry.builtin in HTTP_BUILTINS and entry.gateway is None:
        top.report.problem(entry.line, f"artifacts[{entry.name}].gateway",
                           f"builtin: {entry.builtin} needs a gateway: block with the provider's "
                           "endpoint and api_key")


def _read_artifact(item: Section) -> Artifact:
    name = item.string("name", "", required=True)
    if name and not _ARTIFACT_NAME.match(name):
        item.problem("name", f"{describe(name)} is not an artifact name (lowercase letters, "
                     "digits and '-', at most 100, not starting or ending with '-')")
    runtime = item.choice("runtime", "tool", RUNTIMES)
    source = item.file_path("source", None)
    builtin = item.string("builtin", None)
    if builtin is not None:
        if builtin not in BUILTIN_DRIVERS:
            item.problem("builtin", f"{describe(builtin)} is not a built-in driver "
                         f"(built-in: {', '.join(BUILTIN_DRIVERS)})")
        if runtime != "driver":
            item.problem("builtin", "only a runtime: driver entry can be built in")
    version = item.string("version", None, required=source is None and builtin is None)
    config = item.mapping("config")
    if config:
        size = len(json.dumps(config, separators=(",", ":"), ensure_ascii=False).encode())
        if size > 65536:
            item.problem("config", f"is {size} bytes as JSON; the limit is 65536", "E-CAP-010")
    http = None
    refused_config = config is None and item.raw("config") is not None and item.has("config")
    if builtin in BUILTIN_DRIVERS and runtime == "driver" and not refused_config:
        http = _read_builtin_config(item, builtin, config or {})
    gateway = _read_gateway(item.section("gateway"))
    caps_section = item.section("capabilities")
    capabilities = (
        _read_capabilities(caps_section, capsule_wide=False, hook=runtime == "hook")
        if caps_section is not None else None
    )
    on_overflow = item.choice("on_overflow", "drop", ("drop", "block"))
    item.mark_known("local_source", "prompt_payload")
    item.finish()
    return Artifact(
        name=name, version=version, runtime=runtime, line=item.line, source=source,
        builtin=builtin, config=config or {}, gateway=gateway, capabilities=capabilities,
        on_overflow=on_overflow, http=http,
    )


def _read_builtin_config(item: Section, builtin: str, data: dict[str, Any]) -> HttpSettings | None:
    """A built-in driver's `config`, checked here so a bad value names its line: the HTTP
    drivers' `stream` and `read_timeout_s`, the scripted driver's script and pacing."""
    config = Section(item.report, item.key_path("config"), data, item.node_of("config"),
                     item.line_of("config"))
    settings = None
    if builtin in HTTP_BUILTINS:
        settings = HttpSettings(
            stream=config.boolean("stream", True),
            read_timeout_s=config.number("read_timeout_s", 300.0, check=lambda v: v > 0,
                                         expectation="a number of seconds > 0"))
    else:
        config.file_path("script", None, required=True)
        config.integer("chunk_chars", 8, minimum=1)
        config.number("chars_per_second", 0.0, check=lambda v: v >= 0,
                      expectation="a number >= 0")
        config.file_path("requests_log", None)
    config.finish()
    return settings


def _read_gateway(section: Section | None) -> Gateway | None:
    if section is None:
        return None
    endpoint = section.string("endpoint", "", required=True)
    if endpoint and (problem := endpoint_problem(endpoint)):
        section.problem("endpoint", problem, "E-MAN-003")
    api_key = section.string("api_key", None)
    if api_key is not None and not KEY_REFERENCE.match(api_key):
        if len(api_key) > MAX_KEY_CHARS:
            section.problem("api_key", f"is {len(api_key)} characters long; no provider key "
                            f"is longer than {MAX_KEY_CHARS}")
            api_key = None
        else:
            remember(api_key)  # a literal key: redacted from every output from the start
    keyless = section.boolean("keyless", False)
    upstream: tuple[str, str] | None = None
    if (auth := section.section("upstream_auth")) is not None:
        header = auth.string("header", "", required=True)
        value = auth.string("value", "{key}")
        if "{key}" not in value:
            auth.problem("value", "must contain {key}, where the key goes")
        auth.finish()
        upstream = (header, value)
    section.finish()
    return Gateway(endpoint=endpoint, api_key=api_key, keyless=keyless, upstream_auth=upstream)


def endpoint_problem(endpoint: str) -> str | None:
    """Why a gateway endpoint is refused (spec §4.4), or None: https to any host, http only to
    loopback; no user info, no ${…}, no query or fragment."""
    from urllib.parse import urlsplit

    if "${" in endpoint:
        return "must not contain ${…} (keys go in api_key)"
    try:
        parts = urlsplit(endpoint)
        _ = parts.port
    except ValueError as exc:
        return f"{describe(endpoint)} is not a valid URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{describe(endpoint)} is not an http(s) URL"
    if parts.username or parts.password:
        return "must not carry a user or password (keys go in api_key)"
    if parts.query or parts.fragment:
        return "must not have a query or a fragment"
    if parts.scheme == "http" and parts.hostname not in ("localhost", "127.0.0.1", "::1"):
        return f"http is allowed only to loopback (localhost, 127.0.0.1, ::1), not {parts.hostname}"
    return None


def _read_capabilities(
    section: Section | None, *, capsule_wide: bool, hook: bool = False
) -> Capabilities:
    if section is None:
        return Capabilities()
    network_allow: tuple[str, ...] = ()
    if (network := section.section("network")) is not None:
        network_allow = network.strings("allow") or ()
        network.mark_known("unix_sockets")
        network.finish()
    scope, read_only = _read_filesystem(section.section("filesystem"))
    shell_allow: tuple[str, ...] = ()
    strip_env: tuple[str, ...] = ()
    if (shell := section.section("shell")) is not None:
        shell_allow = shell.strings("allow", allow_empty=False) or ()
        for binary in shell_allow:
            if not _BINARY_NAME.match(binary):
                shell.problem("allow", f"{describe(binary)} is not a bare binary name")
        strip_env = shell.strings("strip_env") or ()
        shell.mark_known("baseline_env", "interpreter_runtime", "staged_runtime")
        shell.finish()
    env_allow: tuple[str, ...] = ()
    if (env := section.section("env")) is not None:
        env_allow = env.strings("allow") or ()
        for variable in env_allow:
            if credential_shaped(variable):
                env.warn("allow", f"{describe(variable)} looks like a credential; murmur-tui "
                         "never passes such a variable to a component or a shell command, even "
                         "when allowed by name (docs/security.md)", "W-SEC-024")
        env.finish()
    limits = _read_limits(section.section("limits"))
    conversation_read = _read_grant(section, "conversation", capsule_wide=capsule_wide, hook=hook)
    task_io_read = _read_grant(section, "task_io", capsule_wide=capsule_wide, hook=hook)
    section.mark_known(*_INERT_CAPABILITIES)
    section.finish()
    return Capabilities(
        network_allow=network_allow, filesystem_scope=scope, filesystem_read_only=read_only,
        shell_allow=shell_allow, shell_strip_env=strip_env, env_allow=env_allow, limits=limits,
        limits_declared=section.has("limits"),
        conversation_read=conversation_read, task_io_read=task_io_read,
    )


def _read_filesystem(section: Section | None) -> tuple[str | None, tuple[str, ...]]:
    if section is None:
        return None, ()
    scope = section.file_path("scope", None)
    if scope is not None and (scope.startswith("/") or ".." in Path(scope).parts):
        section.problem("scope", f"{describe(scope)} must be a relative path under the "
                        "workdir (no '..', not absolute)", "E-CAP-002")
        scope = None
    read_only = section.strings("read_only") or ()
    for entry in read_only:
        if problem := path_problem(entry):
            section.problem("read_only", f"{describe(entry)} {problem}")
            read_only = ()
            break
    section.mark_known("workdir_exec")
    section.finish()
    return scope, read_only


def _read_grant(section: Section, key: str, *, capsule_wide: bool, hook: bool) -> bool:
    block = section.section(key)
    if block is None:
        return False
    granted = bool(block.boolean("read", False, required=hook))
    block.finish()
    if capsule_wide and key == "conversation":
        section.warn(key, "capabilities.conversation is inert capsule-wide; grant "
                     "conversation.read on the hook's artifacts entry", "W-SEC-016")
        return False
    return granted


def _read_limits(section: Section | None) -> Limits:
    if section is None:
        return Limits()
    limits = Limits(
        memory_bytes=section.integer("memory_bytes", 512 * MIB, minimum=1),
        table_elements=section.integer("table_elements", 100_000, minimum=1),
        instances=section.integer("instances", 1000, minimum=1),
        deadline_seconds=section.number(
            "deadline_seconds", None, check=lambda v: v > 0, expectation="a number > 0"),
    )
    section.finish()
    return limits


def _read_context(section: Section | None) -> Context:
    if section is None:
        return Context()
    max_tokens = section.integer("max_tokens", None, minimum=1)
    record = _read_on_off(section, "record")
    record_store = section.string("record_store", None)
    if record_store is not None and (problem := segment_problem(record_store)):
        section.problem("record_store", f"{describe(record_store)} {problem}", "E-CAP-011")
    retain = _read_retain(section)
    images_max_bytes = 5 * MIB
    if (images := section.section("images")) is not None:
        images_max_bytes = images.integer("max_bytes", 5 * MIB, minimum=1)
        images.finish()
    seed_budget = section.number("seed_budget", 0.10, check=lambda v: 0 <= v <= 1,
                                 expectation="a fraction between 0 and 1")
    section.mark_known("seed_overflow_margin")
    section.finish()
    return Context(max_tokens=max_tokens, record=record, record_store=record_store,
                   retain=retain, images_max_bytes=images_max_bytes, seed_budget=seed_budget)


def _read_on_off(section: Section, key: str) -> bool:
    value = section.raw(key)
    if value is True or value == "on" or not section.has(key):
        return True
    if value is False or value == "off":
        return False
    section.problem(key, f"expected on or off, got {describe(value)}")
    return True


def _read_retain(section: Section) -> Retain | None:
    retain = section.section("retain")
    if retain is None:
        return None
    max_messages = retain.integer("max_messages", None, minimum=1)
    max_age: int | None = None
    raw_age = retain.raw("max_age")
    if isinstance(raw_age, str) and (match := _DURATION.match(raw_age)):
        max_age = int(match.group(1)) * _DURATION_SECONDS[match.group(2)]
    elif retain.has("max_age"):
        retain.problem("max_age", f"expected a duration like 30d, 12h, 90m or 45s; got "
                       f"{describe(raw_age)}")
    if not retain.data:
        section.problem("retain", "must set max_messages or max_age (an empty block means "
                        "nothing; remove it to keep every message)")
    retain.finish()
    return Retain(max_messages=max_messages, max_age_seconds=max_age)


def _read_inference(section: Section | None, root: Path) -> Inference | None:
    if section is None:
        return None
    for removed in ("endpoint", "api_key"):
        if section.has(removed):
            section.raw(removed)
            section.problem(removed, "was removed from inference:; set gateway.* on the "
                            "driver's artifacts: entry", "E-MAN-003")
    transport = section.choice("transport", "http", ("http", "process"))
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
        max_turns=section.integer("max_turns", 10, minimum=1),
        max_tokens=section.integer("max_tokens", 8192, minimum=1),
        max_session_tokens=section.integer("max_session_tokens", None, minimum=1),
        system_prompt=prompt,
        compaction=_read_compaction(section.section("compaction"), root),
        retry=_read_retry(section.section("retry")),
        params=section.mapping("params") or {},
    )
    section.mark_known("provider", "alternates", "tool_refresh", "system_prompt_artifact",
                       "max_task_reopens")
    section.finish()
    return inference


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
    threshold = section.number("threshold", 0.98, check=lambda v: 0 < v <= 1,
                               expectation="a fraction in (0, 1]")
    model = section.string("model", None)
    prompt = _read_system_prompt(section, root)
    dump = section.boolean("dump_summaries", False)
    section.finish()
    return Compaction(threshold=threshold, model=model, system_prompt=prompt,
                      dump_summaries=dump)


def _read_retry(section: Section | None) -> Retry:
    if section is None:
        return Retry()
    retry = Retry(
        max_attempts=section.integer("max_attempts", 3, minimum=1),
        initial_backoff_ms=section.integer("initial_backoff_ms", 500, minimum=0),
        max_backoff_ms=section.integer("max_backoff_ms", 8000, minimum=0),
    )
    section.finish()
    return retry


def _read_lifecycle(section: Section | None) -> Lifecycle:
    if section is None:
        return Lifecycle()
    lifecycle = Lifecycle(
        task_acceptance=section.choice("task_acceptance", "single", ("none", "single", "queue")),
        after_task=section.choice("after_task", "exit", ("exit", "sleep")),
        queue_depth=section.integer("queue_depth", 1, minimum=1),
        input_timeout_secs=section.number("input_timeout_secs", None, check=lambda v: v > 0,
                                          expectation="a number of seconds > 0"),
        conversation=section.choice("conversation", "stateless", ("stateless", "threaded")),
        max_task_reopens=section.integer("max_task_reopens", 1, minimum=0),
        shell_grace_secs=section.number("shell_grace_secs", 10.0, check=lambda v: v > 0,
                                        expectation="a number of seconds > 0"),
    )
    section.mark_known("delegation_deadline_secs")
    section.finish()
    return lifecycle


def _read_trace(section: Section | None) -> TraceSettings:
    if section is None:
        return TraceSettings()
    capture = section.choice("capture", "meta", ("none", "meta", "content"))
    if section.has("include_tool_output") and section.boolean("include_tool_output", False):
        capture = "content"  # the retired alias
    section.mark_known("retain")
    section.finish()
    return TraceSettings(capture=capture)
