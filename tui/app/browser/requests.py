"""What a browser screen asks of the app it runs in. Screens post these; the app that hosts
the browser (`AppBase`, tui/app/browser/host.py) pushes the screen asked for, so no screen
module imports another."""

from __future__ import annotations

from textual.message import Message

from tui.core.record.backward import Located
from tui.core.record.catalog import Conversation
from tui.core.session_index import Entry, ResumeMode


class OpenConversation(Message):
    """Show one conversation, from its newest message or from `anchor` (a search hit)."""

    def __init__(self, conversation: Conversation, anchor: Located | None = None) -> None:
        super().__init__()
        self.conversation = conversation
        self.anchor = anchor


class OpenSearch(Message):
    """Search every record, or only `within` (Tab switches between the two)."""

    def __init__(self, within: list[Conversation] | None = None) -> None:
        super().__init__()
        self.within = within


class OpenExport(Message):
    """Write one conversation to a file."""

    def __init__(self, conversation: Conversation) -> None:
        super().__init__()
        self.conversation = conversation


class ContinueConversation(Message):
    """`r` / `R` on a conversation: the host checks it can be resumed (a toast says why not)
    and answers with `ResumeConversation`."""

    def __init__(self, conversation: Conversation, mode: ResumeMode) -> None:
        super().__init__()
        self.conversation = conversation
        self.mode = mode


class ResumeConversation(Message):
    """`r` / `R`: continue a conversation in a follow-up session resumed from `entry` (its
    newest session), whole (`full`) or through the capsule's on-compaction hook (`compact`).
    The standalone browser exits with it as its result; the supervisor starts the session."""

    def __init__(self, entry: Entry, mode: ResumeMode = "full") -> None:
        super().__init__()
        self.entry = entry
        self.mode = mode
