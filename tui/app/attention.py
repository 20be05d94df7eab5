"""Getting the user's attention when the session needs them and they are looking elsewhere.

`Attention.notify(kind, text)` is the one way the app says "a question (or an approval) waits"
or "the task ended". What it does depends on `notify:` in `$MURMUR_HOME/tui/config.yaml`
(`auto`, the default, `osc`, `bell` or `off`) and on whether the user is *present* — the
terminal has focus (Textual's AppFocus / AppBlur, from the terminal's focus reports) and the
supervisor screen is the one showing (a dialog over it counts; the browser does not):

- away: a desktop notification through the terminal (OSC 9, or OSC 777 where that is the
  terminal's protocol) or the bell, and the terminal's title (`? capsule — question`,
  `✓ capsule — done`, `✗ capsule — failed`);
- present: a waiting question or approval still rings the bell and sets the title (the dialog
  is in front of the user); an ended task changes nothing.

A question's title stays until nothing of its kind waits (`settled`); an ended task's until the
user is back (`returned`). The title is saved on the terminal's title stack (XTWINOPS 22/23)
before the first change and restored from it; `close` restores it when the app ends.

Every piece of text that reaches the terminal is redacted and made printable: a capsule's name
or a tool's question cannot carry an escape sequence, a BEL or a C1 control into the output.
Writes go through a `Terminal` (the app's driver), never to stdout directly.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, get_args

from tui.app.naming import session_name
from tui.core.events import vocabulary as ev
from tui.core.text.printable import printable
from tui.core.text.secrets import redact

Mode = Literal["auto", "osc", "bell", "off"]
Kind = Literal["question", "approval", "done", "failed"]
Flavour = Literal["osc9", "osc777"]
MODES: tuple[Mode, ...] = get_args(Mode)
WAITING: tuple[Kind, ...] = ("question", "approval")
MAX_TEXT = 200  # characters of a notification's body
MAX_NAME = 60  # characters of the capsule name in a title
APP = "murmur-tui"

_MARKS: dict[Kind, str] = {"question": "?", "approval": "?", "done": "✓", "failed": "✗"}
_WORDS: dict[Kind, str] = {"question": "question", "approval": "approval", "done": "done",
                           "failed": "failed"}
# Terminals known to show a desktop notification for an OSC sequence, and which one.
_BY_PROGRAM: dict[str, Flavour] = {"iTerm.app": "osc9", "WezTerm": "osc777",
                                   "ghostty": "osc777"}
_BY_TERM: tuple[tuple[str, Flavour], ...] = (("xterm-kitty", "osc9"), ("xterm-ghostty", "osc777"),
                                             ("foot", "osc777"), ("rxvt-unicode", "osc777"))
SAVE_TITLE = "\x1b[22;2t"
RESTORE_TITLE = "\x1b[23;2t"


class Terminal(Protocol):
    """Where the sequences go: the app's output."""

    def write_terminal(self, data: str) -> None: ...

    def bell(self) -> None: ...


def osc_flavour(env: Mapping[str, str]) -> Flavour | None:
    """The notification sequence this terminal is known to support, or None (unknown, or
    behind tmux / screen, which drop sequences they do not know)."""
    term = env.get("TERM", "")
    if env.get("TMUX") or term.startswith(("screen", "tmux")):
        return None
    program = _BY_PROGRAM.get(env.get("TERM_PROGRAM", ""))
    if program is not None:
        return program
    if env.get("KITTY_WINDOW_ID"):
        return "osc9"
    return next((flavour for prefix, flavour in _BY_TERM if term.startswith(prefix)), None)


def clean(text: str, limit: int) -> str:
    """Text safe inside an escape sequence: no key, no control character, one line, at most
    `limit` characters."""
    shown = printable(redact(text), keep_newlines=False)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


@dataclass
class Settings:
    mode: Mode = "auto"
    problems: list[str] = field(default_factory=list)


def config_path(home: Path) -> Path:
    return home / "tui" / "config.yaml"


def load_settings(home: Path) -> Settings:
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

    def __init__(self, terminal: Terminal, mode: Mode = "auto",
                 present: Callable[[], bool] = lambda: True,
                 env: Mapping[str, str] | None = None) -> None:
        self.terminal = terminal
        self.mode = mode
        self.present = present
        self.flavour = osc_flavour(os.environ if env is None else env)
        self.capsule = ""  # the session's name, else its capsule's: in the title
        self.name_of: Callable[[str], str] = lambda sid: session_name(terminal, sid)
        self.waiting: dict[Kind, str] = {}
        self.ended: Kind | None = None
        self.title: str | None = None  # the title murmur-tui set, None when restored
        self._saved = False

    # -- the API ------------------------------------------------------------------------------
    def notify(self, kind: Kind, text: str) -> None:
        """Something needs the user: a question or an approval waits (`text` says what), or the
        task ended (`done` / `failed`)."""
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
                case ev.TaskEnded():
                    if event.exit_status == "ok":
                        self.notify("done", event.result)
                    else:
                        self.notify("failed", f"the task ended {event.exit_status}")

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
        heading = self._heading(kind)
        body = clean(text, MAX_TEXT)
        if use == "osc777":
            sequence = f"\x1b]777;notify;{heading.replace(';', ',')};{body}\x07"
        else:
            sequence = f"\x1b]9;{heading}: {body}\x07" if body else f"\x1b]9;{heading}\x07"
        self.terminal.write_terminal(sequence)

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
