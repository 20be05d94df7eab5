"""`notify:` in `$MURMUR_HOME/tui/fleet.yaml`: where a waiting question is told.

    notify:
      webhook: https://ntfy.sh/my-topic   # an HTTP POST per question (none by default)
      body: json                          # json (default) or text (ntfy-style plain body)
      terminal: true                      # OSC notification, bell and title (default true)
      desktop: true                       # notify-send where there is one (default true)

Only the `notify` key is read: the rest of the file belongs to its other readers. A missing
file is the default; a bad value is named and its default kept — never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

Body = Literal["json", "text"]


@dataclass(frozen=True)
class NotifySettings:
    webhook: str | None = None
    body: Body = "json"
    terminal: bool = True
    desktop: bool = True
    problems: tuple[str, ...] = field(default=(), compare=False)


def fleet_file(home: Path) -> Path:
    return home / "tui" / "fleet.yaml"


def fleet_section(home: Path, key: str, otherwise: str) -> tuple[Any, str | None]:
    """`key` of fleet.yaml (None when the file or the key is missing), or a problem saying
    what is wrong with the file, then `otherwise` (what is done instead). It may hold tokens:
    a problem never quotes it."""
    from tui.core.errors import YamlError
    from tui.core.manifest.located_yaml import read_private

    file = fleet_file(home)
    try:
        data = read_private(file)
    except FileNotFoundError:
        return None, None
    except YamlError as exc:
        return None, f"{exc}; {otherwise}"
    except OSError as exc:
        return None, f"{file}: {exc.strerror}; {otherwise}"
    return (data.get(key) if isinstance(data, dict) else None), None


def load_notify(home: Path) -> NotifySettings:
    file = fleet_file(home)
    section, problem = fleet_section(home, "notify", "notifications use their defaults")
    if problem is not None:
        return NotifySettings(problems=(problem,))
    if section is None:
        return NotifySettings()
    if not isinstance(section, dict):
        return NotifySettings(problems=(f"{file}: notify: expected a mapping (webhook, "
                                        "body, terminal, desktop); using the defaults",))
    return _read(file, section)


def _read(file: Path, section: dict[Any, Any]) -> NotifySettings:
    problems: list[str] = []

    def flag(key: str) -> bool:
        value = section.get(key, True)
        if isinstance(value, bool):
            return value
        problems.append(f"{file}: notify.{key}: expected true or false; using true")
        return True

    webhook = section.get("webhook")
    if webhook is not None and not (isinstance(webhook, str) and
                                    urlsplit(webhook).scheme in ("http", "https") and
                                    urlsplit(webhook).hostname):
        problems.append(f"{file}: notify.webhook: expected an http:// or https:// URL; "
                        "no webhook is sent")
        webhook = None
    body = section.get("body", "json")
    if body not in ("json", "text"):
        problems.append(f"{file}: notify.body: expected json or text; using json")
        body = "json"
    unknown = sorted(str(key) for key in section if key not in
                     ("webhook", "body", "terminal", "desktop"))
    if unknown:
        problems.append(f"{file}: notify: unknown key {', '.join(unknown)} (known: webhook, "
                        "body, terminal, desktop)")
    return NotifySettings(webhook, body, flag("terminal"), flag("desktop"), tuple(problems))
