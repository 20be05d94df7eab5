"""Getting the user's attention when the session needs them and they are looking elsewhere.

`Attention.notify(kind, text)` is the one way the app says "a question (or an approval) waits"
or "the task ended". What it does depends on `notify:` in `$MURMUR_HOME/tui/config.yaml`
(`auto`, the default, `osc`, `bell` or `off`) and on whether the user is *present* — the
terminal has focus (Textual's AppFocus / AppBlur, from the terminal's focus reports) and the
supervisor screen is the one showing (a dialog over it counts; the browser does not):

- away: a desktop notification through the terminal (OSC 9, OSC 777 or OSC 99, as the
  terminal takes it: tui/core/notify/terminal.py) or the bell, and the terminal's title
  (`? capsule — question`, `✓ capsule — done`, `✗ capsule — failed`);
- present: a waiting question or approval still rings the bell and sets the title (the dialog
  is in front of the user); an ended task changes nothing.

A question's title stays until nothing of its kind waits (`settled`); an ended task's until the
user is back (`returned`). The title is saved on the terminal's title stack (XTWINOPS 22/23)
before the first change and restored from it; `close` restores it when the app ends.

Every piece of text that reaches the terminal is redacted and made printable: a capsule's name
or a tool's question cannot carry an escape sequence, a BEL or a C1 control into the output.
Writes go through a `Terminal` (the app's driver), never to stdout directly. A question or an
approval that starts waiting is also sent where fleet.yaml's `notify:` says (a desktop
notification, a webhook: tui/core/notify/outbound.py), whatever the user's presence.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, get_args

from tui.app.naming import session_name
from tui.core.events import vocabulary as ev
from tui.core.notify.outbound import Notice, Outbound, now_rfc3339
from tui.core.notify.settings import NotifySettings, load_notify
from tui.core.notify.terminal import Flavour, clean, notification, osc_flavour

Mode = Literal["auto", "osc", "bell", "off"]
Kind = Literal["question", "approval", "done", "failed"]
MODES: tuple[Mode, ...] = get_args(Mode)
WAITING: tuple[Kind, ...] = ("question", "approval")
MAX_TEXT = 200  # characters of a notification's body
MAX_NAME = 60  # characters of the capsule name in a title
APP = "murmur-tui"

_MARKS: dict[Kind, str] = {"question": "?", "approval": "?", "done": "✓", "failed": "✗"}
_WORDS: dict[Kind, str] = {"question": "question", "approval": "approval", "done": "done",
                           "failed": "failed"}
SAVE_TITLE = "\x1b[22;2t"
RESTORE_TITLE = "\x1b[23;2t"


class Terminal(Protocol):
    """Where the sequences go: the app's output."""

    def write_terminal(self, data: str) -> None: ...

    def bell(self) -> None: ...

    def warn_from_thread(self, text: str) -> None: ...


@dataclass
class Settings:
    mode: Mode = "auto"
    problems: list[str] = field(default_factory=list)
    reach: NotifySettings = field(default_factory=NotifySettings)  # fleet.yaml's `notify:`


def config_path(home: Path) -> Path:
    return home / "tui" / "config.yaml"


def load_settings(home: Path) -> Settings:
    """`notify:` of config.yaml (the terminal's notifications) and of fleet.yaml (where else a
    waiting question is told; `terminal: false` there turns the terminal's off too)."""
    settings = _load_mode(home)
    reach = load_notify(home)
    settings.reach = reach
    settings.problems.extend(reach.problems)
    if not reach.terminal:
        settings.mode = "off"
    return settings


def _load_mode(home: Path) -> Settings:
    """`notify:` from `$MURMUR_HOME/tui/config.yaml` (other keys belong to other readers). A
    missing file is the default; a bad one is reported (file, line, key) and the default kept."""
    from tui.core.errors import YamlError
    from tui.core.manifest.located_yaml import read
    from tui.core.manifest.problems import ProblemReport
    from tui.core.manifest.yaml_section import Section

    file = config_path(home)
    try:
        data, node = read(file)
    except FileNotFoundError:
        return Settings()
    except YamlError as exc:
        return Settings(problems=[f"{exc}; notifications use notify: auto"])
    if data is None:
        return Settings()
    if not isinstance(data, dict):
        return Settings(problems=[f"{file}: expected a mapping of settings; notifications use "
                                  "notify: auto"])
    if data.get("notify") is False:  # `notify: off` unquoted: YAML 1.1 reads it as false
        return Settings("off")
    report = ProblemReport(file)
    mode = Section(report, "", data, node).choice("notify", "auto", MODES)
    return Settings(mode, [f"{problem}; using auto" for problem in report.problems])


class Attention:
    """The notifier. `present` says whether the user is looking at the supervisor now."""

    def __init__(self, terminal: Terminal, settings: Mode | Settings = "auto",
                 present: Callable[[], bool] = lambda: True,
                 env: Mapping[str, str] | None = None) -> None:
        self.terminal = terminal
        self.mode = settings.mode if isinstance(settings, Settings) else settings
        reach = settings.reach if isinstance(settings, Settings) else NotifySettings()
        self.outbound = Outbound(reach, env, problem=terminal.warn_from_thread)
        self.session_id = ""
        self.present = present
        self.flavour = osc_flavour(os.environ if env is None else env)
        self.capsule = ""  # the session's name, else its capsule's: in the title
        self.capsule_name = ""  # its capsule's, for the webhook's `capsule`
        self.name_of: Callable[[str], str] = lambda sid: session_name(terminal, sid)
        self.waiting: dict[Kind, str] = {}
        self.ended: Kind | None = None
        self.title: str | None = None  # the title murmur-tui set, None when restored
        self._saved = False

    # -- the API ------------------------------------------------------------------------------
    def notify(self, kind: Kind, text: str) -> None:
        """Something needs the user: a question or an approval waits (`text` says what), or the
        task ended (`done` / `failed`)."""
        if kind in WAITING:  # each question or approval that arrives, told once
            # by the session's name as it is now (a rename since the start counts)
            name = self.name_of(self.session_id) if self.session_id else ""
            self.outbound.send(Notice(self.session_id, self.capsule_name or self.capsule,
                                      text, now_rfc3339(), name or None))
        if self.mode == "off":
            return
        away = not self.present()
        if kind in WAITING:
            self.waiting[kind] = text
        elif away:
            self.ended = kind
        else:
            return
        if away:
            self._alert(kind, text)
        else:
            self.terminal.bell()
        self._show_title()

    def follow(self, batch: list[ev.Event]) -> None:
        """The session's events: a task that ended while the user looks elsewhere is worth
        a notification."""
        for event in batch:
            match event:
                case ev.SessionStarted():  # a session's name stands for it (`--name`)
                    self.capsule = self.name_of(event.session_id) or event.capsule_name
                    self.capsule_name = event.capsule_name
                    self.session_id = event.session_id or self.session_id
                case ev.TaskEnded():
                    if event.exit_status == "ok":
                        self.notify("done", event.result)
                    else:
                        self.notify("failed", f"the task ended {event.exit_status}")

    def attached(self, session_id: str, capsule: str) -> None:
        """The local session the app runs, known before its first event: a question it asks
        may be told before the event that starts it reaches the screen."""
        self.session_id, self.capsule_name = session_id, capsule
        self.capsule = self.name_of(session_id) or capsule

    def renamed(self, name: str) -> None:
        """The session was renamed while the screen is open: the title says the new name."""
        self.capsule = name or self.capsule_name or self.capsule
        if self.title is not None:
            self.title = None  # written again, with the new name
            self._show_title()

    def settled(self, kind: Kind) -> None:
        """Nothing of `kind` waits any more (answered, withdrawn, closed)."""
        if self.waiting.pop(kind, None) is not None:
            self._show_title()

    def returned(self) -> None:
        """The user may be back (focus returned, the supervisor shows again): an ended task's
        title goes once they are."""
        if self.ended is not None and self.present():
            self.ended = None
            self._show_title()

    def close(self) -> None:
        """The app is ending: give the terminal its title back."""
        self.waiting.clear()
        self.ended = None
        self._show_title()

    # -- the terminal -------------------------------------------------------------------------
    def _alert(self, kind: Kind, text: str) -> None:
        use: Flavour | None = self.flavour
        if self.mode == "bell" or (self.mode == "auto" and use is None):
            self.terminal.bell()
            return
        if use is None:  # notify: osc on a terminal not known to support it
            use = "osc9"
        self.terminal.write_terminal(notification(use, self._heading(kind),
                                                  clean(text, MAX_TEXT)))

    def _heading(self, kind: Kind) -> str:
        name = clean(self.capsule, MAX_NAME) or APP
        return f"{_MARKS[kind]} {name} — {_WORDS[kind]}"

    def _wanted_title(self) -> str | None:
        for kind in WAITING:
            if kind in self.waiting:
                return self._heading(kind)
        return self._heading(self.ended) if self.ended is not None else None

    def _show_title(self) -> None:
        wanted = self._wanted_title()
        if wanted == self.title:
            return
        if wanted is None:
            neutral = clean(self.capsule, MAX_NAME)
            # a terminal without a title stack keeps this one instead of a stale question
            self.terminal.write_terminal(
                f"\x1b]2;{neutral + ' — ' if neutral else ''}{APP}\x07")
            if self._saved:
                self.terminal.write_terminal(RESTORE_TITLE)
                self._saved = False
        else:
            if not self._saved:
                self.terminal.write_terminal(SAVE_TITLE)
                self._saved = True
            self.terminal.write_terminal(f"\x1b]2;{wanted}\x07")
        self.title = wanted
