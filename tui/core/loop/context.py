"""The context: the messages the model is sent, as the record keeps them and as the driver sees
them, with their ids, their hashes, the token counter over them and a driver's held
continuation (seed 001, spec §4.2).

An image a tool attached is held as the record holds it — a reference to its stored bytes
(`attachments.py`) — and becomes base64 only in what is handed on (`sent`): a request, a
message counted or hashed for the first time. So the bytes of every image in the context are
not kept in memory for as long as the image stays in it (four 5 MiB images were 27 MiB of
base64, held all session).

A threaded context reloaded from its record starts as a window on the record's bytes
(`record/window.py`), read when something first needs it (after `TaskStarted`); from then on
the context holds each message once, in its payload form. `messages` (as the record holds them:
for a compaction hook, a rebuilt turn) parses the window's again from their lines."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Protocol, overload

from tui.core.chat import Message, compact_json, for_payload
from tui.core.inference.driver import DriverReply
from tui.core.loop import continuation
from tui.core.record.window import RecordWindow
from tui.core.text import tokens


class RecordSink(Protocol):
    def append(self, message: Message) -> object: ...


class ImageStore(Protocol):
    def payload_block(self, block: dict[str, Any]) -> dict[str, Any]: ...


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Context:
    """Messages in order. `append` adds one (and writes it to the record unless it came from
    the record); `replace` swaps the whole list (a compaction); `load` starts an empty context
    on a record's window."""

    def __init__(self, images: ImageStore, record: RecordSink | None = None,
                 hashes: bool = False, context_id: str | None = None,
                 head: dict[str, Any] | None = None) -> None:
        self._window: RecordWindow | None = None  # the reloaded messages
        self._settled = True  # False: the window's ids and payload are not in the lists yet
        self._messages: list[Message] = []  # those appended (after the window's)
        self._ids: list[str] = []  # every message's: the window's, then the appended
        self._payload: list[Message] = []  # parallel to _ids: as the driver sees them
        self.head = head or {}  # the request without its messages: what counts are over
        self._counter: tokens.PayloadCounter | None = None
        self.held: continuation.Held | None = None  # a stateful driver's state
        self.context_id = context_id
        self._images = images
        self._record = record
        self._hashes = hashes  # trace capture `content`: message_shas are written
        self._shas: dict[str, str] = {}

    def fresh(self) -> Context:
        """An empty context with the same settings (a stateless session's next task)."""
        return Context(self._images, self._record, self._hashes, self.context_id, self.head)

    def load(self, window: RecordWindow) -> None:
        """The context starts with the record's messages (read when first needed)."""
        assert self._window is None and not self._messages, "a context loads once, empty"
        self._window, self._settled = window, False

    def _settle(self) -> None:
        if not self._settled and self._window is not None:
            self._settled = True
            self._ids = self._window.ids + self._ids
            self._payload = self._window.payloads + self._payload

    @property
    def messages(self) -> list[Message]:
        """Every message as the record holds it (the window's parsed again now: a compaction
        hook or a rebuilt turn reads them all)."""
        if self._window is None:
            return self._messages
        return self._window.messages() + self._messages

    @property
    def ids(self) -> list[str]:
        self._settle()
        return self._ids

    @property
    def payload(self) -> list[Message]:
        """The messages as the driver sees them, images by reference."""
        self._settle()
        return self._payload

    def append(self, message: Message, record: bool = True) -> None:
        self._messages.append(message)
        self._ids.append(str(message["id"]))  # before the window settles: after its ids
        self._payload.append(for_payload(message))
        if record and self._record is not None:
            self._record.append(message)

    def replace(self, messages: list[Message]) -> None:
        """The context becomes `messages` (each appended to the record); the token counter
        forgets what left, and a held continuation is dropped (the next turn resends all)."""
        self._window, self._settled = None, True
        self._messages, self._ids, self._payload = [], [], []
        for message in messages:
            self.append(message)
        if self._counter is not None:
            self._counter.forget(set(self._ids))
        self.held = None

    @property
    def counter(self) -> tokens.PayloadCounter:
        """The token counter over `head` and the messages, built at the first count (a script
        capsule's session may never count)."""
        if self._counter is None:
            self._counter = tokens.PayloadCounter(self.head)
        return self._counter

    def count(self, upto: int | None = None) -> int:
        """Tokens of the payload messages (the first `upto` of them)."""
        if upto is None:
            return self.counter.count(self.sent(), self.ids) if self.payload else 0
        return self.counter.count(self.sent()[:upto], self.ids[:upto])

    def sent(self, messages: Sequence[Message] | None = None) -> Sent:
        """The payload (or `messages`, payload messages) as the driver receives it, each
        message made on reading (its images as base64); the counter and the hashes read only
        the messages new to them."""
        return Sent(self.payload if messages is None else messages, self._images)

    def message_shas(self) -> tuple[str, ...]:
        """sha256 of each payload message (trace `message_shas`, written under capture
        `content`), computed once per message."""
        if not self._hashes:
            return ()
        shas = []
        sent = self.sent()
        for index, message_id in enumerate(self.ids):
            known = self._shas.get(message_id)
            if known is None:
                known = self._shas[message_id] = sha(compact_json(sent[index]))
            shas.append(known)
        return tuple(shas)

    # -- continuation -----------------------------------------------------------------------
    def request(self, head: dict[str, Any], messages: Sequence[Message]) -> dict[str, Any]:
        """The driver request over `messages` (payload messages): incremental under a held
        continuation; the images of the messages it carries as base64."""
        request = continuation.request(head, list(messages), self.context_id, self.held)
        request["messages"] = [sendable(message, self._images)
                               for message in request["messages"]]
        return request

    def after_reply(self, reply: DriverReply, sent: int) -> None:
        self.held = continuation.after_reply(reply, self.context_id, sent)

    def drop_continuation(self) -> None:
        self.held = None


def sendable(message: Message, images: ImageStore) -> Message:
    """`message` as a driver receives it: a tool message's stored images as base64 blocks
    (a new message; one without images is returned as it is)."""
    content = message.get("content")
    if message.get("role") != "tool" or not isinstance(content, list) or not any(
            isinstance(block, dict) and block.get("type") == "image" for block in content):
        return message
    return {**message, "content": [images.payload_block(block)
                                   if isinstance(block, dict) and block.get("type") == "image"
                                   else block for block in content]}


class Sent(Sequence[Message]):
    """Payload messages read as sent: each made (its images read and encoded) when it is
    read, and let go after."""

    def __init__(self, payload: Sequence[Message], images: ImageStore) -> None:
        self._payload = payload
        self._images = images

    def __len__(self) -> int:
        return len(self._payload)

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> Sent: ...

    def __getitem__(self, index: int | slice) -> Message | Sent:
        if isinstance(index, slice):
            return Sent(self._payload[index], self._images)
        return sendable(self._payload[index], self._images)
