"""Every exception murmur-tui raises, under one base (`MurmurTuiError`), one module a family:
`base` (the base, `Where`, `Problem`), `control` (control flow: canceled, timed out, trap,
reconnect), `inputs` (what is read: capsules, config, files, traces), `calls` (what is called:
drivers, components, tools, doors). Import them from here: `from tui.core.errors import X`.
"""

from tui.core.errors.base import MurmurTuiError, Problem, Where
from tui.core.errors.calls import (
    AddressNotHeld,
    AttachError,
    ComponentLoadError,
    DelegationError,
    DoorCause,
    DoorError,
    DriverError,
    GatewayRefused,
    GuestFailure,
    IncompatibleComponent,
    MalformedComponent,
    MalformedResponse,
    NoAnswer,
    ProbeRefused,
    ProviderError,
    RecordError,
    RunningDirError,
    RunningSessionError,
    SessionNotFound,
    ShellRefused,
    WatchRefused,
)
from tui.core.errors.control import (
    ControlFlow,
    ReconnectWatch,
    StopOnCancel,
    StopOnInputTimeout,
    TrapGuest,
)
from tui.core.errors.inputs import (
    ApprovalConfigError,
    BadJsonSyntax,
    CalleeUnknown,
    CannotResume,
    ContextInUse,
    ConversationReadError,
    CredentialError,
    FileRefused,
    JournalUnreadable,
    LaunchError,
    LockError,
    ManifestError,
    NetworkAllowError,
    NotAFile,
    NotJson,
    RosterShapeError,
    ScaffoldError,
    SeatError,
    ThemeError,
    TraceFormatError,
    TraceNotFound,
    TraceWriteError,
    YamlError,
    YamlRefusal,
)

__all__ = [
    "AddressNotHeld", "ApprovalConfigError", "AttachError", "BadJsonSyntax", "CalleeUnknown",
    "CannotResume", "ComponentLoadError", "ContextInUse", "ControlFlow", "ConversationReadError",
    "CredentialError", "DelegationError", "DoorCause", "DoorError", "DriverError", "FileRefused",
    "GatewayRefused", "GuestFailure", "IncompatibleComponent", "JournalUnreadable",
    "LaunchError", "LockError", "MalformedComponent", "MalformedResponse", "ManifestError",
    "MurmurTuiError", "NetworkAllowError", "NoAnswer", "NotAFile", "NotJson", "ProbeRefused",
    "Problem", "ProviderError", "ReconnectWatch", "RecordError", "RosterShapeError",
    "RunningDirError", "RunningSessionError", "ScaffoldError", "SeatError", "SessionNotFound",
    "ShellRefused",
    "StopOnCancel",
    "StopOnInputTimeout", "ThemeError",
    "TraceFormatError", "TraceNotFound", "TraceWriteError", "TrapGuest", "WatchRefused", "Where",
    "YamlError", "YamlRefusal",
]
