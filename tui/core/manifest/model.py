"""A capsule as murmur-tui runs it: the typed, validated form of `murmur.yaml` (spec §1).

Every field's default here is the default a manifest that leaves the key out gets; the readers
(tui/core/manifest/reader.py) take it from these classes rather than writing it again. A key
with a closed set of values has a `Literal` type, and its tuple of choices is that type's
`get_args`, so what is allowed and what is checked cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from tui.core.errors import Problem
from tui.core.frozen import Frozen

MANIFEST_NAME = "murmur.yaml"
MIB = 1024 * 1024

Runtime = Literal["tool", "driver", "hook", "skill"]
BuiltinDriver = Literal["scripted", "openai", "anthropic"]
HttpBuiltin = Literal["openai", "anthropic"]
Overflow = Literal["drop", "block"]  # a hook's queue when it is full
Transport = Literal["http", "process"]  # inference.transport; murmur-tui runs only http
TaskAcceptance = Literal["none", "single", "queue"]
AfterTask = Literal["exit", "sleep"]
Conversation = Literal["stateless", "threaded"]
Capture = Literal["none", "meta", "content"]
AuthScheme = Literal["bearer"]  # network.authentication.scheme
# A door credential's scopes: the door's method names, and the operator file plane.
DoorScope = Literal["SendMessage", "SendStreamingMessage", "stream/watch", "GetTask",
                    "CancelTask", "session/stop", "resources/files"]

RUNTIMES: tuple[Runtime, ...] = get_args(Runtime)
BUILTIN_DRIVERS: tuple[BuiltinDriver, ...] = get_args(BuiltinDriver)
HTTP_BUILTINS: tuple[HttpBuiltin, ...] = get_args(HttpBuiltin)
OVERFLOWS: tuple[Overflow, ...] = get_args(Overflow)
TRANSPORTS: tuple[Transport, ...] = get_args(Transport)
TASK_ACCEPTANCES: tuple[TaskAcceptance, ...] = get_args(TaskAcceptance)
AFTER_TASKS: tuple[AfterTask, ...] = get_args(AfterTask)
CONVERSATIONS: tuple[Conversation, ...] = get_args(Conversation)
CAPTURES: tuple[Capture, ...] = get_args(Capture)
AUTH_SCHEMES: tuple[AuthScheme, ...] = get_args(AuthScheme)
DOOR_SCOPES: tuple[DoorScope, ...] = get_args(DoorScope)
# A2A 0.3 method names an older door's scopes used, and the 1.0 name each became.
A2A_03_SCOPES: Mapping[str, DoorScope] = {
    "message/send": "SendMessage", "message/stream": "SendStreamingMessage",
    "tasks/get": "GetTask", "tasks/cancel": "CancelTask"}
OPERATOR = "operator"  # the credential every authenticated door mints, with every scope

KEY_REFERENCE = re.compile(r"^\$\{([A-Z_][A-Z0-9_]*)\}$")  # api_key: ${NAME}
INTERPRETERS = frozenset({"bash", "sh", "zsh", "fish", "dash", "ksh"})


@dataclass(frozen=True, repr=False, eq=False)
class Limits(Frozen):
    memory_bytes: int = 512 * MIB
    table_elements: int = 100_000
    instances: int = 1000
    deadline_seconds: float | None = None  # None: 600 s for tools and drivers, 30 s for hooks


@dataclass(frozen=True, repr=False, eq=False)
class Capabilities(Frozen):
    """A capability block: the capsule-wide ceiling, or one artifact entry's grant."""

    network_allow: tuple[str, ...] = ()
    network_declared: bool = False  # `network.allow` was given (an empty one: no network)
    filesystem_scope: str | None = None
    filesystem_read_only: tuple[str, ...] = ()
    shell_allow: tuple[str, ...] = ()
    shell_strip_env: tuple[str, ...] = ()  # more name patterns never passed (as Murmur's)
    env_allow: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    limits_declared: bool = False  # an entry without a limits block inherits the capsule's
    conversation_read: bool = False
    task_io_read: bool = False
    # `spawn.allow` (capsule-wide only): the capsules `delegate-task` may start — installed
    # artifacts by name, or capsule folders relative to the capsule (a path with a `/`)
    spawn_allow: tuple[str, ...] = ()


@dataclass(frozen=True, repr=False, eq=False)
class Gateway(Frozen):
    endpoint: str
    api_key: str | None = None
    keyless: bool = False
    upstream_auth: tuple[str, str] | None = None  # (header, value with {key}); None: default


@dataclass(frozen=True, repr=False, eq=False)
class HttpSettings(Frozen):
    """`config` of a `builtin: openai|anthropic` driver entry."""

    stream: bool = True
    read_timeout_s: float = 300.0


@dataclass(frozen=True, repr=False, eq=False)
class Artifact(Frozen):
    name: str
    version: str | None
    runtime: Runtime
    line: int | None
    source: str | None = None
    builtin: BuiltinDriver | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    gateway: Gateway | None = None
    capabilities: Capabilities | None = None  # None: no block declared
    on_overflow: Overflow = "drop"
    http: HttpSettings | None = None  # a built-in HTTP driver's settings


@dataclass(frozen=True, repr=False, eq=False)
class Compaction(Frozen):
    threshold: float = 0.98
    model: str | None = None
    system_prompt: str | None = None
    dump_summaries: bool = False


@dataclass(frozen=True, repr=False, eq=False)
class Retry(Frozen):
    max_attempts: int = 3
    initial_backoff_ms: int = 500
    max_backoff_ms: int = 8000


@dataclass(frozen=True, repr=False, eq=False)
class Inference(Frozen):
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


@dataclass(frozen=True, repr=False, eq=False)
class Retain(Frozen):
    max_messages: int | None = None
    max_age_seconds: int | None = None


@dataclass(frozen=True, repr=False, eq=False)
class ContextSettings(Frozen):
    max_tokens: int | None = None
    record: bool = True
    record_store: str | None = None
    retain: Retain | None = None
    images_max_bytes: int = 5 * MIB
    seed_budget: float = 0.10


@dataclass(frozen=True, repr=False, eq=False)
class Lifecycle(Frozen):
    task_acceptance: TaskAcceptance = "single"
    after_task: AfterTask = "exit"
    queue_depth: int = 1
    input_timeout_secs: float | None = None
    conversation: Conversation = "stateless"
    max_task_reopens: int = 1
    shell_grace_secs: float = 10.0
    delegation_deadline_secs: float = 600.0  # a delegation (and a call-member call) at most


@dataclass(frozen=True, repr=False, eq=False)
class TraceRetain(Frozen):
    """`trace.retain`: murmur-tui applies it to a formation's directories
    (tui/core/formation/retention.py); None: no bound."""

    max_sessions: int | None = None
    max_age_seconds: int | None = None


@dataclass(frozen=True, repr=False, eq=False)
class TraceSettings(Frozen):
    capture: Capture = "meta"
    retain: TraceRetain | None = None


@dataclass(frozen=True, repr=False, eq=False)
class DoorCredential(Frozen):
    """One `network.authentication.credentials` entry: a name and the scopes its token gets."""

    name: str
    scopes: tuple[DoorScope, ...] = ()


@dataclass(frozen=True, repr=False, eq=False)
class Authentication(Frozen):
    """`network.authentication`: the door takes bearer tokens (an `operator` token with every
    scope, and one per declared credential)."""

    scheme: AuthScheme = "bearer"
    credentials: tuple[DoorCredential, ...] = ()


@dataclass(frozen=True, repr=False, eq=False)
class Network(Frozen):
    authentication: Authentication | None = None  # None: a public door (on loopback)


@dataclass(frozen=True, repr=False, eq=False)
class Exports(Frozen):
    peer_tasks_accept: bool = False  # `exports.peer_tasks.accept`: serves peer capsules' tasks


@dataclass(frozen=True, repr=False, eq=False)
class Capsule(Frozen):
    name: str
    version: str
    manifest_path: Path
    artifacts: tuple[Artifact, ...] = ()
    capabilities: Capabilities = field(default_factory=Capabilities)
    context: ContextSettings = field(default_factory=ContextSettings)
    inference: Inference | None = None
    lifecycle: Lifecycle = field(default_factory=Lifecycle)
    trace: TraceSettings = field(default_factory=TraceSettings)
    network: Network = field(default_factory=Network)
    exports: Exports = field(default_factory=Exports)
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
