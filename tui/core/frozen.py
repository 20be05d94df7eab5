"""`==`, `hash()` and `repr()` written once for frozen dataclasses, as the dataclass decorator
would write them for each class: a class declared `@dataclass(frozen=True, repr=False,
eq=False)` that inherits `Frozen` behaves the same and costs start-up time once, not per class.
"""

from __future__ import annotations


class Frozen:
    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((type(self).__name__, *self.__dict__.values()))

    def __repr__(self) -> str:
        values = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items())
        return f"{type(self).__qualname__}({values})"
