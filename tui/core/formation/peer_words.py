"""A peer member's output as the launcher shows it: the member runs with `--json` (its first
line is the readiness line the launcher reads), and in the launcher's human mode each event it
writes after that is worded as `launch --headless` words it — streamed text as it comes, calls,
answers, the task's end —, every line prefixed `[<member>] `. `--json` launchers pass the JSON
lines on as they are, prefixed the same way. A line that is not one of murmur-tui's events
(anything else a member prints) is passed on as it is."""

from __future__ import annotations

import json
from collections.abc import Callable

from tui.core.events.vocabulary import event_from_dict
from tui.core.headless import HumanPrinter

Say = Callable[[str], None]


class _Prefixed:
    """A text stream that hands each whole line on, prefixed with the member's name."""

    def __init__(self, name: str, say: Say) -> None:
        self._prefix = f"[{name}] "
        self._say = say
        self._partial = ""

    def write(self, text: str) -> int:
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            self._say(self._prefix + line)
        return len(text)

    def flush(self) -> None:
        """Whole lines only: a streamed line is handed on when it ends."""

    def close(self) -> None:
        if self._partial:
            self._say(self._prefix + self._partial)
            self._partial = ""


class PeerWords:
    def __init__(self, name: str, say: Say, words: bool = True) -> None:
        self._stream = _Prefixed(name, say)
        self._printer = HumanPrinter(self._stream, self._stream)  # type: ignore[arg-type]
        self._words = words

    def line(self, raw: str) -> None:
        if self._words:
            try:
                data = json.loads(raw)
                event = event_from_dict(data) if isinstance(data, dict) else None
            except (ValueError, TypeError):
                event = None
            if event is not None:
                self._printer.emit(event)
                return
        self._stream.write(raw + "\n")

    def close(self) -> None:
        self._stream.close()
