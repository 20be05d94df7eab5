"""The reloaded part of a threaded context: the record's bytes, read when first needed.

A threaded session's first task starts on the whole conversation its record holds, and the
task can start before any of it is read. So the window keeps the record's bytes as they were
when the task began and nothing else until something asks (the first count, the first
request). Then it `settle`s: each line is parsed once, to know which are chat messages; what is
kept is their ids, their offsets and their payload form (what the driver is sent, every turn).
The messages as the record holds them (with `id`, `source_id`, `fence`) are not kept beside
their payload: a compaction hook or a rebuilt turn that needs them gets them parsed again from
their lines.

What the window reads is what the record held at reload (the session's own messages are
appended to the context, and to the record, after it). A message reads exactly as the whole
parse gave it: `role` first (payload pieces are counted from `role`), its id redacted (the
trace lists ids unscanned), an id minted once for a message the record gave none."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from pathlib import Path
from typing import cast

from tui.core import ids as id_maker
from tui.core.chat import Message, RecordLine, chat_shape_problem, for_payload
from tui.core.errors import ConversationReadError, Where
from tui.core.record.reader import RecordReader, parse_message_line
from tui.core.text.secrets import redact

Warn = Callable[[str], None]


class RecordWindow:
    """The record's chat messages, read from its bytes on demand (`settle` first)."""

    def __init__(self, path: Path, reader: RecordReader, warn: Warn,
                 recorded: Callable[[list[str]], None] | None) -> None:
        self.path = path
        self._reader = reader
        self._warn = warn
        self._recorded = recorded
        self._data = b""
        self._starts = array("q")
        self._ends = array("q")
        self._ids: list[str] = []
        self._settled = False
        self._payloads: list[Message] = []  # parallel to _ids
        try:  # the bytes as the task found them: what is appended later is the session's own
            self._data = path.read_bytes()
        except FileNotFoundError:
            self._settled = True
        except OSError as exc:
            raise ConversationReadError(f"unavailable: {exc.strerror or exc}",
                                        where=Where(path)) from None

    def settle(self) -> None:
        """Find the chat messages among the record's lines (once): a line that is not a
        message is reported through the reader, a message that is not a chat message is left
        out and said so, and the ids of those kept are marked as on disk."""
        if self._settled:
            return
        self._settled = True
        skipped: list[int] = []
        left_out: list[str] = []
        messages = 0
        data, start = self._data, 0
        number = 0
        while start <= len(data):
            end = data.find(b"\n", start)
            end = len(data) if end < 0 else end
            number += 1
            raw = data[start:end]
            message = parse_message_line(raw)
            if message is None:
                if raw.strip():
                    skipped.append(number)
            else:
                messages += 1
                problem = chat_shape_problem(message)
                if problem is None:
                    self._starts.append(start)
                    self._ends.append(end)
                    self._ids.append(redact(str(message["id"])) if "id" in message
                                     else id_maker.message_id())
                    self._payloads.append(for_payload(_role_first(message)))
                else:
                    left_out.append(f"message {messages}: {problem}")
            start = end + 1
        if skipped:
            self._reader.report_skipped(self.path, skipped[0])
        if left_out:
            self._warn(f"{self.path}: {len(left_out)} of {messages} messages are not chat "
                       "messages and were left out of the context "
                       f"({left_out[0]})")
        if self._recorded is not None:  # None: the record is read, not written
            self._recorded(self._ids)

    def __len__(self) -> int:
        self.settle()
        return len(self._ids)

    @property
    def ids(self) -> list[str]:
        self.settle()
        return self._ids

    def message(self, index: int) -> Message:
        """The `index`th chat message, parsed from its line now."""
        self.settle()
        parsed = parse_message_line(self._data[self._starts[index]:self._ends[index]])
        assert parsed is not None  # it parsed at `settle`, and the bytes are the same
        message = _role_first(parsed)
        message["id"] = self._ids[index]
        return message

    @property
    def payloads(self) -> list[Message]:
        """The chat messages as the driver sees them (images by reference)."""
        self.settle()
        return self._payloads

    def messages(self) -> list[Message]:
        return [self.message(index) for index in range(len(self))]


def _role_first(message: RecordLine) -> Message:
    """A line `chat_shape_problem` passed, `role` first (Murmur's order)."""
    if next(iter(message)) == "role":
        return cast(Message, message)
    ordered = {"role": message["role"]}
    ordered.update((k, v) for k, v in message.items() if k != "role")
    return cast(Message, ordered)
