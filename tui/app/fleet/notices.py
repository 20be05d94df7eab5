"""The fleet's notifications (no Textual here): a session that starts needing the user is told
on the terminal (`Beacon`: its notification sequence, the bell, `murmur-tui · 1 needs you`),
on the desktop and to the webhook (`Outbound`), as `notify:` in fleet.yaml says. The fleet
tells each question once (`FleetApp.told_questions`), and each stall and death once
(tui/app/fleet/lifeline.py `alarms`); the title follows the count every redraw, so a question
answered elsewhere shows as answered there."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from tui.app.fleet.model import FleetSession, RemoteQuestion
from tui.core.notify.beacon import Beacon
from tui.core.notify.outbound import HEADLINES, Notice, NoticeEvent, Outbound, now_rfc3339
from tui.core.notify.settings import load_notify
from tui.core.text.printable import printable


def notice_of(session: FleetSession, question: RemoteQuestion) -> Notice:
    """What is told of `question`; `asked_at` is the wall clock less how long it has waited
    (`asked_at` is a monotonic stamp)."""
    waited = max(0.0, time.monotonic() - question.asked_at)
    asked = datetime.fromtimestamp(time.time() - waited, UTC)
    name = getattr(session, "name", None) or None  # a session's name, where it has one
    return Notice(session.session_id, session.capsule, question.prompt,
                  asked.isoformat(timespec="seconds").replace("+00:00", "Z"), name)


class FleetNotices:
    def __init__(self, home: Path, write: Callable[[str], object],
                 problem: Callable[[str], None], env: Mapping[str, str] | None = None) -> None:
        settings = load_notify(home)
        self.problems = list(settings.problems)
        environ = os.environ if env is None else env
        self.beacon = Beacon(write, environ,
                             enabled=settings.terminal)
        self.outbound = Outbound(settings, environ, problem)

    def asked(self, session: FleetSession, question: RemoteQuestion,
              sessions: Iterable[FleetSession]) -> None:
        notice = notice_of(session, question)
        self.beacon.asked(notice, needing(sessions))
        self.outbound.send(notice)

    def alarm(self, session: FleetSession, event: NoticeEvent, why: str,
              sessions: Iterable[FleetSession]) -> str:
        """`session` stalled or died (`why`): told as a question is; the line the screen
        shows of it."""
        notice = Notice(session.session_id, session.capsule, why, now_rfc3339(),
                        session.name or None, event)
        self.beacon.asked(notice, needing(sessions))
        self.outbound.send(notice)
        who = printable(session.name) or printable(session.capsule) or "a session"
        return f"{who} ({session.session_id}) {HEADLINES[event]}: {printable(why)}"

    def waiting(self, sessions: Iterable[FleetSession]) -> None:
        self.beacon.waiting(needing(sessions))

    def close(self) -> None:
        self.beacon.close()


def needing(sessions: Iterable[FleetSession]) -> int:
    return sum(session.group == "needs" for session in sessions)
