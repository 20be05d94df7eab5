"""Telling a waiting question beyond the terminal: a desktop notification (`notify-send`) and
a webhook (an HTTP POST). Each runs on its own short-lived thread with a timeout, so nothing
here ever holds the screen; a failure is reported once (`problem`) until one succeeds again.

The webhook's JSON body is the notice and nothing more — session, name (when there is one),
capsule, question, asked_at; for a stall or a death, `event` (`stalled` / `gone`), `why` and
`at` instead of the question — redacted, so no key or token from a question can leave in it,
and no credential of murmur-tui's is ever added. `body: text` sends the same as one plain
line with a `Title` header instead, as ntfy-style services show it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal
from urllib.parse import urlsplit

from tui.core.notify.settings import NotifySettings
from tui.core.notify.terminal import clean

WEBHOOK_TIMEOUT = 3.0  # seconds an HTTP POST may take
DESKTOP_TIMEOUT = 5.0  # seconds notify-send may take
MAX_QUESTION = 500  # characters of a question sent out
MAX_LINE = 200  # characters of a desktop notification's body
log = logging.getLogger("murmur_tui.notify")
log.addHandler(logging.NullHandler())  # never Python's last-resort stderr under the screen


NoticeEvent = Literal["asks", "stalled", "gone"]
HEADLINES: dict[NoticeEvent, str] = {"asks": "asks", "stalled": "stalled?", "gone": "is gone"}


@dataclass(frozen=True)
class Notice:
    """A session that started needing the user: it asks `question` (`event` asks), or it
    stalled or its process is gone, `question` then saying why, `asked_at` when told."""

    session: str
    capsule: str
    question: str
    asked_at: str  # RFC 3339, UTC
    name: str | None = None
    event: NoticeEvent = "asks"

    def who(self) -> str:
        """The session as a person names it: `name (ses_…)`, or `capsule (ses_…)`."""
        label = self.name or self.capsule
        return f"{label} ({self.session})" if label else self.session

    def headline(self) -> str:
        """`build-bot (ses_…) asks`, `… stalled?`, `… is gone`."""
        return f"{self.who()} {HEADLINES[self.event]}"

    def body(self) -> dict[str, str]:
        out = {"session": clean(self.session, 100)}
        if self.name:
            out["name"] = clean(self.name, 100)
        out["capsule"] = clean(self.capsule, 100)
        if self.event == "asks":
            out.update(question=clean(self.question, MAX_QUESTION), asked_at=self.asked_at)
        else:
            out.update(event=self.event, why=clean(self.question, MAX_QUESTION),
                       at=self.asked_at)
        return out


def now_rfc3339() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def desktop_present(env: Mapping[str, str]) -> bool:
    """A desktop to notify: a display or a D-Bus session bus, and notify-send on PATH."""
    session = env.get("DISPLAY") or env.get("WAYLAND_DISPLAY") or \
        env.get("DBUS_SESSION_BUS_ADDRESS")
    return bool(session) and shutil.which("notify-send", path=env.get("PATH")) is not None


class Outbound:
    """Sends each notice where the settings say. `problem` receives one line per failing
    channel (once, until it works again) — the screen shows it as a notice."""

    def __init__(self, settings: NotifySettings, env: Mapping[str, str] | None = None,
                 problem: Callable[[str], None] = lambda text: None) -> None:
        self.settings = settings
        self.env = dict(os.environ if env is None else env)
        self.problem = problem
        self.desktop = settings.desktop and desktop_present(self.env)
        self._failing: set[str] = set()
        self._lock = threading.Lock()

    def send(self, notice: Notice) -> list[threading.Thread]:
        """Start the sends; the threads are returned (a test may join them)."""
        jobs: list[Callable[[], None]] = []
        if self.desktop:
            jobs.append(lambda: self._desktop(notice))
        if self.settings.webhook:
            jobs.append(lambda: self._webhook(notice))
        threads = [threading.Thread(target=job, name="murmur-notify", daemon=True)
                   for job in jobs]
        for thread in threads:
            thread.start()
        return threads

    def _desktop(self, notice: Notice) -> None:
        program = shutil.which("notify-send", path=self.env.get("PATH")) or "notify-send"
        command = [program, "--app-name=murmur-tui", "--", f"{clean(notice.who(), 120)} "
                   f"{HEADLINES[notice.event]}", clean(notice.question, MAX_LINE)]
        try:
            done = subprocess.run(command, env=self.env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  timeout=DESKTOP_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            self._failed("desktop", f"notify-send failed: {type(exc).__name__}")
            return
        if done.returncode != 0:
            self._failed("desktop", f"notify-send ended with exit status {done.returncode}")
        else:
            self._worked("desktop")

    def _webhook(self, notice: Notice) -> None:
        url = self.settings.webhook or ""
        host = urlsplit(url).hostname or "?"
        if self.settings.body == "text":
            data = f"{clean(notice.who(), 120)} {HEADLINES[notice.event]}: " \
                   f"{clean(notice.question, MAX_QUESTION)}"
            payload = data.encode()
            headers = {"Content-Type": "text/plain; charset=utf-8",
                       "Title": f"murmur-tui: {clean(notice.who(), 120)} needs you"
                       .encode("ascii", "replace").decode()}
        else:
            payload = json.dumps(notice.body(), ensure_ascii=False).encode()
            headers = {"Content-Type": "application/json"}
        request = urllib.request.Request(url, data=payload, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=WEBHOOK_TIMEOUT) as answer:
                answer.read(4096)
        except urllib.error.HTTPError as exc:
            self._failed("webhook", f"the webhook at {host} answered HTTP {exc.code}")
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "reason", None) or type(exc).__name__
            self._failed("webhook", f"the webhook at {host} could not be reached: "
                         f"{clean(str(reason), 120)}")
        else:
            self._worked("webhook")

    def _failed(self, channel: str, text: str) -> None:
        with self._lock:
            if channel in self._failing:
                return
            self._failing.add(channel)
        log.warning("%s", text)
        self.problem(text)

    def _worked(self, channel: str) -> None:
        with self._lock:
            self._failing.discard(channel)
