"""The conversation browser, driven with Pilot over real record files."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from tests.app.conftest import leave_prompt
from tests.fakes import write_conversation as make
from tests.waits import wait_until
from tui.app.browser.app import BrowserApp
from tui.app.browser.conversation import ConversationScreen
from tui.app.browser.conversations import ConversationsScreen
from tui.app.browser.search import SearchScreen
from tui.core.chat import assistant_message, tool_message, user_message
from tui.core.record.writer import RecordWriter


def strict_json(line: str) -> Any:
    """A line as any JSON reader reads it: no NaN or Infinity."""
    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    return json.loads(line, parse_constant=refuse)


def texts(screen: ConversationScreen) -> str:
    return "\n".join(screen.view.plain_lines)


async def test_the_list_filters_as_you_type_and_opens(murmur_home: Path) -> None:
    make(murmur_home, "alpha", "ctx_a", [user_message("first task about cats")], mtime=1000)
    make(murmur_home, "beta", "ctx_b", [user_message("second task about dogs")], mtime=2000)
    app = BrowserApp(murmur_home)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ConversationsScreen)
        await wait_until(pilot, lambda: screen.rows.row_count == 2)
        assert [r.shown()[2] for r in screen.rows.rows] == ["ctx_b", "ctx_a"]
        await wait_until(pilot, lambda: all(r.shown()[3] == "1" for r in screen.rows.rows))
        assert screen.rows.rows[0].shown()[8] == "second task about dogs"
        screen.filter_input.focus()
        await pilot.press(*"cats")
        await wait_until(pilot, lambda: [r.shown()[2] for r in screen.rows.rows] == ["ctx_a"])
        assert [r.shown()[2] for r in screen.rows.rows] == ["ctx_a"]
        assert str(screen.status.render()).startswith("1 of 2 conversations")
        screen.rows.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        opened = app.screen
        assert isinstance(opened, ConversationScreen)
        assert "first task about cats" in texts(opened)
        await pilot.pause()  # whatever else the Enter would open is in by now
        # one Enter opens one conversation: Esc goes straight back to the list
        assert [type(s).__name__ for s in app.screen_stack][1:] == ["ConversationsScreen",
                                                                    "ConversationScreen"]
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationsScreen))


async def test_a_conversation_pages_to_its_oldest_message(murmur_home: Path) -> None:
    make(murmur_home, "r", "big", [user_message(f"message number {n}") for n in range(230)])
    app = BrowserApp(murmur_home, record="r", context="big")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ConversationScreen)
        view = screen.view
        assert len(view.entries) == 50
        assert view.entries[0].message["content"][0]["text"] == "message number 229"
        await wait_until(pilot, lambda: screen.total == (230, 0))

        def oldest_page_in() -> bool:  # scrolled down until the oldest page is in
            view.scroll_end(animate=False, immediate=True)
            return view.complete

        await wait_until(pilot, oldest_page_in)
        assert view.complete and len(view.entries) == 230
        assert view.entries[-1].message["content"][0]["text"] == "message number 0"
        assert "— the start of the conversation —" in texts(screen)


async def test_tool_results_attachments_and_bad_lines(murmur_home: Path) -> None:
    path = make(murmur_home, "r", "c", [
        user_message("go"),
        assistant_message([{"type": "tool_call", "id": "t9", "name": "grep",
                            "input": {"pattern": "x"}}]),
        tool_message("t9", True, "<untrusted-content source=tool:grep>\nno match\n"
                     "</untrusted-content>", "tool:grep",
                     ({"type": "image", "source": {"type": "sha256",
                                                   "media_type": "image/png",
                                                   "sha256": "ab" * 32}},)),
    ])
    content = path.read_text()
    path.write_text('{"type":"murmur.record","capsule":"x"}\n' + content +
                    'not json\n{"role":"user","content":[{"ty')
    app = BrowserApp(murmur_home, record="r", context="c")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ConversationScreen)
        await wait_until(pilot, lambda: screen.total is not None)
        shown = texts(screen)
        assert "result of grep  t9  ✗ error" in shown
        assert "untrusted-content" not in shown and "no match" in shown  # the fence is off
        assert "[image image/png abababababab" in shown
        assert "→ call grep  t9" in shown
        header = str(screen.header.render())
        assert "3 messages" in header and "3 lines skipped" in header


async def test_messages_appended_while_open_appear_on_top(murmur_home: Path) -> None:
    path = make(murmur_home, "r", "live", [user_message(f"m{n}") for n in range(5)])
    app = BrowserApp(murmur_home, record="r", context="live")
    async with app.run_test(size=(120, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, ConversationScreen)
        writer = RecordWriter(murmur_home, path, lambda _: None)
        writer.append(user_message("appended by a running session"))
        await wait_until(pilot, lambda: len(screen.view.entries) == 6)
        assert screen.view.entries[0].message["content"][0]["text"] == \
            "appended by a running session"
        # scrolled away: a marker counts what arrived
        for n in range(40):
            writer.append(user_message(f"more {n}"))
        await wait_until(pilot, lambda: len(screen.view.entries) == 46)
        # laid out: the view scrolls (before its scrollbar shows, scroll_end does nothing)
        await wait_until(pilot, lambda: screen.view.allow_vertical_scroll)
        screen.view.scroll_end(animate=False, immediate=True)
        await wait_until(pilot, lambda: screen.view.scroll_y > 0)  # away, for sure
        writer.append(user_message("while away"))
        await wait_until(pilot, lambda: screen.view.unseen_new == 1)
        await wait_until(pilot, lambda: screen.marker.display and
                       "1 new" in str(screen.marker.render()))
        writer.close()


async def test_the_list_shows_a_record_written_while_it_is_open(murmur_home: Path) -> None:
    """Whether the watch was set up before the record came or not (a loaded machine)."""
    make(murmur_home, "r", "first", [user_message("one")])
    app = BrowserApp(murmur_home)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, ConversationsScreen)
        await wait_until(pilot, lambda: screen.rows.row_count == 1)
        make(murmur_home, "r", "second", [user_message("two")])
        await wait_until(pilot, lambda: screen.rows.row_count == 2)
        assert screen.rows.rows[0].shown()[2] == "second"
        make(murmur_home, "r", "third", [user_message("three")])  # the watch, surely
        await wait_until(pilot, lambda: screen.rows.row_count == 3)
        assert screen.rows.rows[0].shown()[2] == "third"


async def test_search_in_one_and_in_every_record_opens_at_the_hit(murmur_home: Path) -> None:
    make(murmur_home, "r", "one", [user_message(f"filler {n}") for n in range(120)] +
         [user_message("the needle is here")] + [user_message("after") for _ in range(5)],
         mtime=2000)
    make(murmur_home, "r", "two", [user_message("another needle")], mtime=1000)
    app = BrowserApp(murmur_home)
    async with app.run_test(size=(150, 40)) as pilot:
        assert isinstance(app.screen, ConversationsScreen)
        await pilot.press("slash")
        search = app.screen
        assert isinstance(search, SearchScreen)
        await pilot.press(*"needle", "enter")
        await wait_until(pilot, lambda: "matches for" in str(search.status.render()))
        assert [r.shown()[1] for r in search.hits.rows] == ["one", "two"]
        assert search.hits.cursor == 0  # the newest hit is the one highlighted
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        opened = app.screen
        assert isinstance(opened, ConversationScreen)
        await wait_until(pilot, lambda: bool(opened.view.entries))
        assert opened.view.anchored
        assert opened.view.entries[0].message["content"][0]["text"] == "the needle is here"
        await pilot.press("n")  # newer messages, read forwards from the hit
        assert opened.view.entries[0].message["content"][0]["text"] == "after"
        # the second scope: this conversation only
        await pilot.press("slash")
        inner = app.screen
        assert isinstance(inner, SearchScreen) and inner.within is not None
        await pilot.press(*"filler 7", "enter")
        await wait_until(pilot, lambda: "matches for" in str(inner.status.render()))
        assert {r.shown()[1] for r in inner.hits.rows} == {"one"}
        assert len(inner.hits.rows) == 11  # filler 7, 70..79


async def test_export_to_markdown_and_jsonl(murmur_home: Path, tmp_path: Path) -> None:
    make(murmur_home, "r", "c", [user_message("export me"),
                                 assistant_message([{"type": "text", "text": "done"}])])
    app = BrowserApp(murmur_home, record="r", context="c")
    async with app.run_test(size=(120, 30)) as pilot:
        for name in ("out.md", "out.jsonl"):
            await pilot.press("e")
            await wait_until(pilot, lambda: bool(app.screen.query("#export-path")))
            field = app.screen.query_one("#export-path")
            target = tmp_path / name
            field.value = str(target)  # type: ignore[attr-defined]
            await pilot.press("enter")
            await wait_until(pilot, lambda: target.exists()  # noqa: B023 - awaited here
                             and isinstance(app.screen, ConversationScreen))
    assert "export me" in (tmp_path / "out.md").read_text()
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    assert [json.loads(line)["role"] for line in lines] == ["user", "assistant"]
    assert {p.name for p in os.scandir(tmp_path)} == {"murmur-home", "out.jsonl", "out.md"}


async def test_the_supervisor_opens_the_browser(murmur_home: Path) -> None:
    from tui.app.app import SupervisorApp

    make(murmur_home, "r", "c", [user_message("hello")])
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(140, 30)) as pilot:
        await leave_prompt(pilot)  # out of the prompt, where b is text
        await pilot.press("b")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationsScreen))
        assert isinstance(app.screen, ConversationsScreen)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.supervisor)
        assert app.screen is app.supervisor
        # `b` again while the browser is open goes back to its list, never a second browser
        await pilot.press("b")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationsScreen))
        listing = app.screen
        assert isinstance(listing, ConversationsScreen)
        await wait_until(pilot, lambda: listing.rows.row_count == 1)
        listing.rows.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        await pilot.press("b")
        await wait_until(pilot, lambda: app.screen is listing)
        assert app.screen is listing
        assert sum(isinstance(s, ConversationsScreen) for s in app.screen_stack) == 1


def test_browse_refuses_without_a_terminal(murmur_home: Path) -> None:
    from tests.conftest import run_cli

    result = run_cli("browse", env={"MURMUR_HOME": str(murmur_home)})
    assert result.returncode == 2 and "needs a terminal" in result.stderr


# -- hostile records -------------------------------------------------------------------------
HOSTILE_TEXT = "before \x1b]0;owned\x07 \x1b[2J\x1b[H \u009b31m \x00 after"
BIG_TEXT = "big answer " + "y" * 6_000_000


def hostile_record(home: Path, record: str = "r", context: str = "hostile") -> Path:
    """A record with every kind of line a careless or hostile writer can leave; ten of its
    lines are messages, five are not, and the last has no newline."""
    lines: list[bytes] = [
        b'{"type":"murmur.record","capsule":"x"}',
        json.dumps(user_message(HOSTILE_TEXT)).encode(),
        json.dumps({"role": "assistant", "content": 42, "id": "msg_number"}).encode(),
        json.dumps({"role": "assistant", "content": {"not": "a list"}}).encode(),
        json.dumps({"role": "user", "content": [1, "two", None, [3]]}).encode(),
        json.dumps({"role": "tool", "tool_call_id": {"an": "object"}, "is_error": "yes",
                    "content": [{"type": "image", "source": "a string source"},
                                {"type": "image", "source": {"sha256": 7}}]}).encode(),
        json.dumps({"role": "r" * 100_000, "content": [{"type": "text", "text": "huge role"}],
                    "id": {"deep": ["id"]}}).encode(),
        b'{"role":"user","content":[{"type":"text","text":"lone \\ud800 surrogate"}]}',
        b'{"role":"user","content":' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"role":"user","content":[{"type":"text","text":"bad \xff\xfe utf-8"}]}',
        b'{"role":"user","content":[{"type":"text","text":"raw \x00 nul"}]}',
        json.dumps({"role": "assistant", "content": [
            {"type": "tool_call", "id": "t1", "name": {"x": 1}, "input": "not an object"},
            {"type": "thinking", "text": ["a", "list"]}, {"type": "mystery", "x": 1}]}).encode(),
        json.dumps({"role": "user", "content": [{"type": "text", "text": "\u0000\u001b[5m"}],
                    "id": "msg_ffffffffffffffffffffffffffffffff"}).encode(),
        json.dumps(assistant_message([{"type": "text", "text": BIG_TEXT}])).encode(),
        json.dumps({"role": "user", "content": "the last word"}).encode(),
    ]
    path = home / "conversations" / record / context / "conversation.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n".join(lines))
    return path


def terminal_output(app: BrowserApp) -> str:
    """What the app would write to the terminal for its whole screen."""
    update = app.screen._compositor.render_full_update()
    return update.render_segments(app.console)


def foreign_controls(output: str) -> list[str]:
    """Control characters in terminal output other than Textual's own cursor moves and
    colours (CSI ... m / H)."""
    rest = re.sub(r"\x1b\[[0-9;]*[mH]", "", output)
    return sorted({repr(ch) for ch in rest if ch != "\n" and not ch.isprintable()})


async def test_a_hostile_record_is_shown_safely_and_exports_valid_files(
        murmur_home: Path, tmp_path: Path) -> None:
    hostile_record(murmur_home)
    app = BrowserApp(murmur_home, record="r", context="hostile")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ConversationScreen)
        await wait_until(pilot, lambda: screen.total is not None)
        view = screen.view
        assert screen.total == (10, 5)
        header = str(screen.header.render())
        assert "10 messages" in header and "5 lines skipped" in header
        # newest first: the last line, which no newline ends, is a message
        assert view.entries[0].message["content"] == "the last word"
        assert foreign_controls(terminal_output(app)) == []
        # the 6 MB message: drawn up to the view's limit, and said so
        shown = texts(screen)
        assert "big answer" in shown and "… cut here: its record line is 6,000," in shown
        assert len(view.plain_lines) < 1000

        def oldest_page_in() -> bool:  # scrolled down until the oldest page is in
            if "— the start of the conversation —" in texts(screen):
                return True
            view.scroll_end(animate=False, immediate=True)
            return False

        await wait_until(pilot, oldest_page_in)
        shown = texts(screen)
        assert "before ␛]0;owned␇ ␛[2J␛[H <U+009B>31m ␀ after" in shown
        assert "␀␛[5m" in shown
        assert "42" in shown and '{"not":"a list"}' in shown and '"two"' in shown
        assert "[image a string source]" in shown and "[image ? 7]" in shown
        assert 'result of tool  {"an":"object"}' in shown  # is_error "yes" is not True
        assert "✗ error" not in shown
        assert "r" * 79 + "…" in shown and "r" * 81 not in shown and "huge role" in shown
        assert '→ call {"x":1}  t1' in shown and '"not an object"' in shown
        for bad in ("lone", "surrogate", "bad ", "raw "):
            assert bad not in shown
        view.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        for y in range(0, view.max_scroll_y + 1, 30):
            view.scroll_to(y=y, animate=False, immediate=True)
            await pilot.pause()  # the screen is drawn at `y`
            assert foreign_controls(terminal_output(app)) == [], y
        for name in ("hostile.md", "hostile.jsonl"):
            await pilot.press("e")
            await wait_until(pilot, lambda: bool(app.screen.query("#export-path")))
            field = app.screen.query_one("#export-path")
            field.value = str(tmp_path / name)  # type: ignore[attr-defined]
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))
    exported = [strict_json(line) for line in
                (tmp_path / "hostile.jsonl").read_bytes().decode("utf-8").splitlines()]
    assert len(exported) == 10 and exported[-1]["content"] == "the last word"
    assert exported[0]["content"][0]["text"] == HOSTILE_TEXT  # kept, escaped
    markdown = (tmp_path / "hostile.md").read_bytes().decode("utf-8")
    assert "the last word" in markdown and BIG_TEXT in markdown  # the export is whole
    assert "before ␛]0;owned␇ ␛[2J␛[H <U+009B>31m ␀ after" in markdown
    assert [ch for ch in markdown if not ch.isprintable() and ch not in "\n"] == []


async def test_the_list_draws_hostile_names_and_previews_safely(murmur_home: Path) -> None:
    hostile_record(murmur_home, record="evil\x1b[2Jstore", context="ctx\x07one")
    make(murmur_home, "r", "plain", [user_message("Größe 大きい first \x1b[31mred")])
    app = BrowserApp(murmur_home)
    async with app.run_test(size=(160, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, ConversationsScreen)
        await wait_until(pilot, lambda: screen.rows.row_count == 2)
        await wait_until(pilot, lambda: all(r.shown()[3] != "…" for r in screen.rows.rows))
        await pilot.pause()  # and drawn
        output = terminal_output(app)
        assert foreign_controls(output) == []
        assert "evil␛[2Jstore" in output and "ctx␇one" in output
        assert "Größe 大きい first ␛[31mred" in output
        rows = {r.shown()[2]: r.shown() for r in screen.rows.rows}
        assert rows["ctx\x07one"][3] == "10"
        # the hostile record's first user message is the one with escape sequences
        assert rows["ctx\x07one"][8].startswith("before ␛]0;owned␇")


async def test_enter_in_the_filter_opens_the_match_and_esc_or_q_quit_standalone(
        murmur_home: Path) -> None:
    make(murmur_home, "alpha", "ctx_a", [user_message("about cats")], mtime=1000)
    make(murmur_home, "beta", "ctx_b", [user_message("about dogs")], mtime=2000)
    app = BrowserApp(murmur_home)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ConversationsScreen)
        await wait_until(pilot, lambda: screen.rows.row_count == 2)
        screen.filter_input.focus()
        await pilot.press(*"cats", "enter")  # one Enter: the match opens
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        assert "about cats" in texts(app.screen)  # type: ignore[arg-type]
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen)
        await pilot.press("escape")  # clears the filter
        await wait_until(pilot, lambda: screen.filter_input.value == "")
        assert screen.filter_input.value == "" and app.is_running
        await pilot.press("escape")  # nothing to clear, nothing to go back to: quit
        await wait_until(pilot, lambda: not app.is_running)
    again = BrowserApp(murmur_home)
    async with again.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(again.screen, ConversationsScreen)
                         and again.screen.filter_input.has_focus)
        await pilot.press("q")  # typed into the filter, which has the focus
        await wait_until(pilot, lambda: isinstance(again.screen, ConversationsScreen)
                         and again.screen.filter_input.value == "q")
        listing = again.screen
        assert isinstance(listing, ConversationsScreen)
        assert listing.filter_input.value == "q" and again.is_running
        await pilot.press("escape", "tab", "q")  # on the list, `q` quits
        await wait_until(pilot, lambda: not again.is_running)


async def test_the_browser_opens_with_the_filter_focused_and_arrows_move_the_list(
        murmur_home: Path) -> None:
    for n, topic in enumerate(("cats", "cats and mice", "dogs")):
        make(murmur_home, "r", f"ctx_{n}", [user_message(f"about {topic}")], mtime=1000 + n)
    app = BrowserApp(murmur_home)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ConversationsScreen)
        await wait_until(pilot, lambda: screen.rows.row_count == 3)
        assert screen.filter_input.has_focus
        await pilot.press(*"cats")  # no click, no Tab: the keys filter
        await wait_until(pilot, lambda: screen.rows.row_count == 2)
        assert screen.rows.highlighted == "r/ctx_1"  # the newest match
        await pilot.press("down")  # moves the list, the filter keeps the focus and its text
        assert screen.rows.highlighted == "r/ctx_0"
        assert screen.filter_input.has_focus and screen.filter_input.value == "cats"
        await pilot.press("up", "down", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        assert "about cats" in texts(app.screen)  # type: ignore[arg-type]
        assert "mice" not in texts(app.screen)  # type: ignore[arg-type]
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen)
        assert screen.filter_input.has_focus  # back where the reader left it
        await pilot.press("ctrl+f")  # search every record from the filter
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen))
