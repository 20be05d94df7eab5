"""`notify:` in fleet.yaml: only that key is read, a bad value is named and its default kept."""

from __future__ import annotations

from pathlib import Path

from tui.core.notify.settings import NotifySettings, load_notify
from tui.core.notify.terminal import clean, notification


def write(home: Path, text: str) -> None:
    (home / "tui").mkdir(parents=True, exist_ok=True)
    (home / "tui" / "fleet.yaml").write_text(text)


def test_no_file_and_no_notify_key_are_the_defaults(murmur_home: Path) -> None:
    assert load_notify(murmur_home) == NotifySettings()
    write(murmur_home, "hosts:\n  - name: build-3\n    urls: [http://10.0.0.3:8000]\n")
    settings = load_notify(murmur_home)
    assert settings == NotifySettings() and settings.problems == ()


def test_the_notify_key_is_read_whatever_else_the_file_holds(murmur_home: Path) -> None:
    write(murmur_home, "hosts: []\ngroups: {a: b}\nnotify:\n  webhook: https://ntfy.sh/t\n"
          "  body: text\n  terminal: false\n  desktop: false\n")
    assert load_notify(murmur_home) == NotifySettings("https://ntfy.sh/t", "text", False, False)


def test_bad_values_are_named_and_their_defaults_kept(murmur_home: Path) -> None:
    write(murmur_home, "notify:\n  webhook: ftp://x\n  body: xml\n  terminal: maybe\n"
          "  colour: red\n")
    settings = load_notify(murmur_home)
    assert settings == NotifySettings()
    file = murmur_home / "tui" / "fleet.yaml"
    assert list(settings.problems) == [
        f"{file}: notify.webhook: expected an http:// or https:// URL; no webhook is sent",
        f"{file}: notify.body: expected json or text; using json",
        f"{file}: notify: unknown key colour (known: webhook, body, terminal, desktop)",
        f"{file}: notify.terminal: expected true or false; using true"]


def test_a_file_that_is_not_yaml_is_named_without_quoting_it(murmur_home: Path) -> None:
    write(murmur_home, "notify: [\n  token: sk-secret-value\n")
    settings = load_notify(murmur_home)
    assert settings == NotifySettings()
    assert len(settings.problems) == 1 and "fleet.yaml" in settings.problems[0]
    assert "sk-secret" not in settings.problems[0]
    write(murmur_home, "notify: yes please\n")
    assert "notify: expected a mapping" in load_notify(murmur_home).problems[0]


def test_no_escape_sequence_survives_in_any_notification_flavour() -> None:
    hostile = clean("deploy?\x1b]0;evil\x07\x9b2J\nnow" + "x" * 300, 40)
    assert hostile == "deploy?␛]0;evil␇<U+009B>2J␤nowxxxxxxxxx…" and len(hostile) == 40
    for flavour in ("osc9", "osc777", "osc99"):
        sequence = notification(flavour, "t", hostile)
        inner = sequence.replace("\x1b]9;", "").replace("\x1b]777;", "").replace(
            "\x1b]99;", "").replace("\x1b\\", "").replace("\x07", "")
        assert inner.isprintable()
