"""Themes: the bundled three, --theme, switching, user themes, hot reload, broken files."""

from __future__ import annotations

from pathlib import Path

from tests.app.conftest import keep_notes
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.themes import load_theme, user_theme_dir
from tui.core.errors import ThemeError
from tui.core.fs.paths import bundled

MINE = "name: mine\ndark: true\nprimary: '#112233'\nbackground: '#000000'\n"


def test_three_bundled_themes_parse() -> None:
    names = {load_theme(path).name for path in bundled("themes").glob("*.yaml")}
    assert {"murmur-dark", "murmur-light", "murmur-high-contrast"} <= names
    assert load_theme(bundled("themes") / "murmur-light.yaml").dark is False


def test_a_broken_theme_file_names_the_problem(tmp_path: Path) -> None:
    for text, problem in (("name: x\nprimary: notacolor\n", "primary: 'notacolor' is not"),
                          ("name: x\n", "primary (a color) is required"),
                          ("- a list\n", "a theme is a mapping"),
                          ("name: [unclosed\n", "not valid YAML")):
        path = tmp_path / "t.yaml"
        path.write_text(text)
        try:
            load_theme(path)
        except ThemeError as exc:
            assert str(path) in str(exc) and problem in str(exc)
        else:
            raise AssertionError(f"{text!r} was accepted")


def test_a_hostile_theme_file_is_refused_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    for text, line, problem in (
            ("name: x\nprimary: '#112233'\nprimary: '#000000'\n", 3, "first at line 2"),
            ("name: x\nprimary: \"#11\x1b[2J\"\n", 2, "control character"),
            ("name: x\nprimary: &p [*p]\n", 2, "circular alias"),
            ("name: x\nprimary: !!python/name:os.system ''\n", 2, "is not allowed"),
            ("name: x\nprimary: !!binary aGk=\n", 2, "is not a color"),
            ("name: x\nvariables: " + "[" * 500 + "]" * 500 + "\n", 2, "deeper than"),
            ("name: x\ndark: maybe\nprimary: '#112233'\n", 2, "true or false")):
        path.write_text(text)
        try:
            load_theme(path)
        except ThemeError as exc:
            assert str(exc).startswith(f"{path}:{line}:") and problem in str(exc), str(exc)
        else:
            raise AssertionError(f"{text!r} was accepted")


async def test_default_and_requested_themes(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(100, 30)):
        assert app.theme == "murmur-dark"
    light = SupervisorApp(murmur_home, theme="murmur-light")
    async with light.run_test(size=(100, 30)):
        assert light.theme == "murmur-light"


async def test_the_command_palette_switches_theme(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(100, 30)) as pilot:
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        for title in ("Cancel the running turn", "Answer the waiting question",
                      "Copy the result", "Jump to latest", "Help"):
            assert title in commands
        commands["Theme: murmur-high-contrast"].callback()
        await wait_until(pilot, lambda: app.theme == "murmur-high-contrast")
        assert app.theme == "murmur-high-contrast"


async def test_a_broken_user_theme_is_reported_and_the_app_keeps_its_theme(
        murmur_home: Path) -> None:
    folder = user_theme_dir(murmur_home)
    folder.mkdir(parents=True)
    (folder / "broken.yaml").write_text("name: broken\nprimary: 12\n")
    app = SupervisorApp(murmur_home, theme="broken")
    said = keep_notes(app)  # from the start: the note is shown while the app starts
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: any("broken.yaml" in note and "is not a color" in note
                                          for note in said))
        assert app.theme == "murmur-dark"


async def test_user_themes_are_loaded_and_reloaded_when_edited(murmur_home: Path) -> None:
    folder = user_theme_dir(murmur_home)
    folder.mkdir(parents=True)
    theme_file = folder / "mine.yaml"
    theme_file.write_text(MINE)
    app = SupervisorApp(murmur_home, theme="mine")
    said = keep_notes(app)
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.theme == "mine"
        assert app.get_theme("mine").primary == "#112233"  # type: ignore[union-attr]
        await wait_until(pilot, lambda: app.themes.watched)
        theme_file.write_text(MINE.replace("#112233", "#445566"))
        await wait_until(pilot, lambda: app.get_theme("mine").primary == "#445566")  # type: ignore[union-attr]
        assert app.theme == "mine"
        theme_file.write_text("name: mine\nprimary: [oops\n")
        await wait_until(pilot, lambda: any("mine.yaml" in n and "not valid YAML" in n
                                          for n in said))
        assert app.theme == "mine"
        assert app.get_theme("mine").primary == "#445566"  # type: ignore[union-attr]
        (folder / "fresh.yaml").write_text(MINE.replace("mine", "fresh"))
        await wait_until(pilot, lambda: "fresh" in app.available_themes)
