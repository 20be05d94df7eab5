"""The base of every event: the stamp (`session_id`, a per-session `seq`, a timestamp in Unix
milliseconds, filled by the stream that delivers it) and the JSON form (`to_dict()`: the fields
plus `"event": <class name>`). Each event class registers itself by name for
`vocabulary.event_from_dict`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

JsonObject = dict[str, Any]


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class Event:
    session_id: str = ""  # the stamp: filled by the stream that delivers the event
    seq: int = 0
    ts_ms: int = 0

    registry: ClassVar[dict[str, type[Event]]] = {}
    # fields that hold no text from outside by construction (ids the session minted or
    # redacted when it read them, hex digests): the stream does not scan them
    unredacted: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        Event.registry[cls.__name__] = cls

    # One __eq__, __hash__ and __repr__ for every event, as a dataclass would write them: the
    # dataclass decorator writing them again for each class costs start-up time.
    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.session_id, self.seq))

    def __repr__(self) -> str:
        values = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items())
        return f"{type(self).__qualname__}({values})"

    @property
    def event_type(self) -> str:
        return type(self).__name__

    def to_dict(self) -> JsonObject:
        data: JsonObject = {"event": self.event_type}
        for item in fields(self):
            data[item.name] = getattr(self, item.name)
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, default=_json_default)


def _json_default(value: Any) -> Any:
    if isinstance(value, (tuple, frozenset, set)):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return str(value)
