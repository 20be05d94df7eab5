"""`r` / `R` in the browser: which session continues a conversation, and whether its capsule can
run it again — checked before the browser lets go, so a refusal is a toast, not a crash."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tui.app.browser.requests import ResumeConversation
from tui.core.errors import CannotResume, MurmurTuiError
from tui.core.record.catalog import Conversation
from tui.core.record.indexed import by_conversation
from tui.core.session_index import Entry, Resume, ResumeMode, index_path
from tui.core.text.printable import printable

if TYPE_CHECKING:
    from tui.core.loop.launch import LaunchOptions
    from tui.core.manifest.model import Capsule
    from tui.core.tools.approvals import Mode, Setup


def request(home: Path, conversation: Conversation, mode: ResumeMode) -> ResumeConversation:
    """What to resume for `conversation`: its newest session in the index, read now (a session
    may have ended since the list was drawn); CannotResume saying why when nothing can."""
    sessions = by_conversation(home).get(conversation.key)
    if sessions is None:
        shown = printable(conversation.key, keep_newlines=False)
        raise CannotResume(f"{shown}: no murmur-tui session in {index_path(home)} "
                           "wrote this conversation (Murmur's mur, or a session older than "
                           "the index), so there is no session to resume")
    entry = sessions.latest
    capsule(entry, mode)
    return ResumeConversation(entry, mode)


def capsule(entry: Entry, mode: ResumeMode) -> Capsule:
    """The capsule that ran `entry`, loaded; CannotResume when it is gone, is refused, or no
    longer matches the session."""
    from tui.core.loop.setup import resumable
    from tui.core.manifest.reader import load_capsule

    where = Path(entry.capsule_path)
    if not where.exists():
        raise CannotResume(f"the capsule {entry.capsule_name!r} that ran session "
                           f"{entry.session_id} is gone: {where} does not exist")
    try:
        loaded = load_capsule(where)
        resumable(loaded, Resume(entry, mode))
    except MurmurTuiError as exc:
        raise CannotResume(f"session {entry.session_id} cannot be resumed with {where}:\n"
                           f"{exc}") from None
    if mode == "compact" and not any(a.runtime == "hook" for a in loaded.artifacts):
        raise CannotResume(f"{where}: R resumes through the capsule's on-compaction hook, and "
                           f"{entry.capsule_name!r} has no hook (r resumes the whole "
                           "conversation)")
    return loaded


def follow_up(wanted: ResumeConversation, home: Path, approve: Mode | None
              ) -> tuple[Capsule, LaunchOptions, Setup | None]:
    """What the supervisor's follow-up session for `wanted` is built from, as `launch --resume`
    builds it: the capsule, the options, and approvals in the mode the previous session had
    (`approve`: None, none were on). CannotResume when the capsule went away or changed."""
    from tui.core.loop.launch import LaunchOptions
    from tui.core.tools.approvals import prepare

    loaded = capsule(wanted.entry, wanted.mode)
    setup = prepare(approve or "off", home, loaded.manifest_path, loaded.name)
    return loaded, LaunchOptions(resume=Resume(wanted.entry, wanted.mode), home=home), setup
