"""The driver interface every kind of driver implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias

from tui.core.cancel import CancelToken
from tui.core.errors import MurmurTuiError


class StreamSink(Protocol):
    """Where a driver sends text and thinking while the answer arrives."""

    def text(self, chunk: str) -> None: ...

    def thinking(self, chunk: str) -> None: ...


class NullStream:
    def text(self, chunk: str) -> None:
        return None

    def thinking(self, chunk: str) -> None:
        return None


@dataclass(frozen=True)
class DriverReply:
    """What `murmur:tool/run` returned: `status` passed|failed|error, the response in `data`."""

    status: str
    data: str | None
    summary: str | None = None
    metadata: tuple[tuple[str, str], ...] = ()

    def meta(self, key: str) -> str | None:
        """The first value of a metadata key; an empty value means undeclared."""
        for name, value in self.metadata:
            if name == key:
                return value or None
        return None

    @property
    def error_text(self) -> str:
        return self.data or self.summary or "driver returned no data"


# The task_failed causes a driver's failure can carry (spec §2).
DriverCause: TypeAlias = Literal["driver_error", "malformed_response", "credential_rejected",
                              "runtime_error"]


class DriverError(MurmurTuiError):
    """The driver could not be called or did not answer (task_failed cause `driver_error`)."""

    default_code = "E-DRIVER"

    def __init__(self, message: str, cause: DriverCause = "driver_error",
                 provider_status: int | None = None) -> None:
        super().__init__(message)
        self.cause = cause
        self.provider_status = provider_status


class ProviderError(MurmurTuiError):
    """A provider's stream reported an error, or broke, after it had answered: transient."""

    default_code = "E-PROVIDER"


class InferenceCanceled(Exception):
    """The session was canceled while the driver ran."""


class Driver(Protocol):
    name: str

    def complete(self, request: dict[str, Any], stream: StreamSink,
                 cancel: CancelToken) -> DriverReply: ...

    def close(self) -> None: ...
