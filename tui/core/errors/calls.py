"""Errors in what murmur-tui calls: drivers and providers, components, the person, tools,
doors, peers and the records of running sessions."""

from __future__ import annotations

from typing import Literal

from tui.core.errors.base import MurmurTuiError, scrubbed
from tui.core.events.kinds import DriverCause, GuestFailureKind


# -- inference --------------------------------------------------------------------------------
class DriverError(MurmurTuiError):
    """The driver could not be called or did not answer (task_failed with its `cause`)."""

    default_code = "E-DRIVER"

    def __init__(self, message: str, cause: DriverCause = "driver_error",
                 provider_status: int | None = None) -> None:
        super().__init__(message)
        self.cause: DriverCause = cause
        self.provider_status = provider_status


class ProviderError(MurmurTuiError):
    """A provider's stream reported an error, or broke, after it had answered: transient."""

    default_code = "E-PROVIDER"


class MalformedResponse(MurmurTuiError):
    """The response is not a §4.3 object (task_failed cause `malformed_response`)."""

    default_code = "E-RESPONSE"


class GatewayRefused(MurmurTuiError):
    """A request the inference gateway will not forward: its HTTP `status` and `reason`."""

    default_code = "E-GATEWAY"

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


# -- components -------------------------------------------------------------------------------
class ComponentLoadError(MurmurTuiError):
    """The file is not a component wasmtime can compile; the message names it."""

    default_code = "E-COMPONENT"


class MalformedComponent(MurmurTuiError):
    """A component's binary could not be walked to count what it defines."""

    default_code = "E-COMPONENT"


class IncompatibleComponent(MurmurTuiError):
    """The component cannot be run in this role; the message says why and what to do."""

    default_code = "E-COMPONENT-VERSION"


class GuestFailure(MurmurTuiError):
    """The component trapped, ran out of time or memory, could not start or was canceled."""

    default_code = "E-COMPONENT-RUN"

    def __init__(self, kind: GuestFailureKind, reason: str) -> None:
        super().__init__(reason)
        self.kind: GuestFailureKind = kind
        self.reason = reason


# -- asking the person and running tools ------------------------------------------------------
class NoAnswer(MurmurTuiError):
    """No answer can come (no --answer left and stdin closed, or the screen went away)."""

    default_code = "E-NO-ANSWER"


class ShellRefused(MurmurTuiError):
    """The call never ran (bad input, binary not allowed or not found): an error result."""

    default_code = "E-SHELL"


# -- doors, peers and running sessions --------------------------------------------------------
# What went wrong at a door: no answer in time; no connection; the connection broke; an answer
# over the limit; a refusal (401/403); another HTTP status; a body that is not JSON; a JSON-RPC
# error; an answer of the wrong shape (not a card, not a task, neither result nor error).
DoorCause = Literal["timeout", "connect", "broken", "too-large", "refused", "status", "not-json",
                    "rpc", "shape"]


class DoorError(MurmurTuiError):
    """A door refused a request, answered with an error, or could not be reached. The text
    names the door's address and what was refused."""

    default_code = "E-DOOR"

    def __init__(self, text: str, *, status: int | None = None, reason: str | None = None,
                 rpc_code: int | None = None, cause: DoorCause = "shape") -> None:
        super().__init__(scrubbed(text))  # names the door and what it refused, redacted
        self.status = status  # the HTTP status of a refusal (401, 403, …)
        self.reason = reason  # Murmur's refusal code: unauthenticated, invalid_token, …
        self.rpc_code = rpc_code  # a JSON-RPC error's code
        self.cause = cause


class WatchRefused(MurmurTuiError):
    """The door refused the watch of its stream: no reconnect will change that."""

    default_code = "E-DOOR"


class DelegationError(MurmurTuiError):
    """A task could not be sent to a peer; the text names the peer."""

    default_code = "E-A2A"


class AttachError(MurmurTuiError):
    """A running session that cannot be attached to; the text says which and why."""

    default_code = "E-ATTACH"


class SessionNotFound(MurmurTuiError):
    """A session address that names no running session, or names several (Murmur's E-RUN-022);
    the text says which address and where it was looked for."""

    default_code = "E-RUN-022"


class RunningDirError(MurmurTuiError):
    """`$MURMUR_HOME/running` exists and cannot be listed (Murmur's E-RUN-028)."""

    default_code = "E-RUN-028"


class RunningSessionError(MurmurTuiError):
    """A running session that has not what was asked of it: a token it did not mint (Murmur's
    E-RUN-048 / E-RUN-049). An address that names no running session is SessionNotFound."""

    default_code = "E-RUN-048"


class RecordError(MurmurTuiError):
    """A record file that is not a running record; `where` names the file (and key)."""

    default_code = "E-RUN-RECORD"


class ProbeRefused(MurmurTuiError):
    """A door answered a probe with a refusal or something that is not its card."""

    default_code = "E-DOOR"


class AddressNotHeld(MurmurTuiError):
    """Why a door's address cannot be tied to its session's process, in words for a person."""

    default_code = "E-RUN-ADDRESS"


# -- the fleet's hosts (tui/core/hosts) ------------------------------------------------------
class HostCommandFailed(MurmurTuiError):
    """A host's command (its discovery, its token command) that could not run, ran too long,
    printed too much or failed: the text names the program and why, never what it printed."""

    default_code = "E-HOST"


class ListingRefused(HostCommandFailed):
    """What a host's discovery printed is not a listing of sessions (never quoted)."""


class HostTokenRefused(MurmurTuiError):
    """A host's token that could not be had, or is not one: from where and why, never a byte
    of it."""

    default_code = "E-HOST"


class HostEntryRefused(MurmurTuiError):
    """One host of fleet.yaml's `hosts:`, or one `--host`, that is not one: which key and why,
    never its value."""

    default_code = "E-HOST"
