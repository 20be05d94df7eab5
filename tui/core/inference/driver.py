"""The driver interface every kind of driver implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from tui.core.cancel import CancelToken


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


class Driver(Protocol):
    name: str

    def complete(self, request: dict[str, Any], stream: StreamSink,
                 cancel: CancelToken) -> DriverReply: ...

    def close(self) -> None: ...
