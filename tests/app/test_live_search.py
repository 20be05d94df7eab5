"""The browser's search runs as the query is typed (once typing pauses), keeps the focus in
the field, follows each change, and clears with the field; Enter still runs it at once."""

from __future__ import annotations

from pathlib import Path

from tests.fakes import write_conversation as make
from tests.waits import wait_until
from tui.app.browser.app import BrowserApp
from tui.app.browser.conversations import ConversationsScreen
from tui.app.browser.search import SearchScreen
from tui.core.chat import user_message
from tui.core.record.catalog import Conversation, scan, search_all


def status(search: SearchScreen) -> str:
    return str(search.status.render())


async def test_hits_come_as_the_query_is_typed(murmur_home: Path) -> None:
    make(murmur_home, "r", "one", [user_message("the needle is here"),
                                   user_message("a needlework class")], mtime=2000)
    make(murmur_home, "r", "two", [user_message("another needle")], mtime=1000)
    app = BrowserApp(murmur_home)
    async with app.run_test(size=(120, 30)) as pilot:
        assert isinstance(app.screen, ConversationsScreen)
        await pilot.press("slash")
        search = app.screen
        assert isinstance(search, SearchScreen)
        await pilot.press(*"needle")  # no Enter
        await wait_until(pilot, lambda: status(search) ==
                         "3 matches for 'needle' in 2 conversations — Enter opens one")
        assert [row.shown()[1] for row in search.hits.rows] == ["one", "one", "two"]
        assert search.query_input.has_focus  # typing goes on where it was
        await pilot.press(*"work")
        await wait_until(pilot, lambda: status(search) ==
                         "1 match for 'needlework' in 2 conversations — Enter opens one")
        assert [row.shown()[3] for row in search.hits.rows] == ["a needlework class"]
        await pilot.press(*"x")
        await wait_until(pilot, lambda: status(search).startswith("0 matches for 'needleworkx'"))
        assert search.hits.row_count == 0
        for _ in "needleworkx":
            await pilot.press("backspace")
        await wait_until(pilot, lambda: status(search) == "" and search.hits.row_count == 0)
        await pilot.press(*"another", "enter")  # Enter: at once, and to the hits
        await wait_until(pilot, lambda: status(search).startswith("1 match for 'another'"))
        assert search.hits.has_focus


def test_a_search_a_newer_query_replaced_stops_between_lines(murmur_home: Path) -> None:
    make(murmur_home, "r", "big", [user_message(f"needle {n}") for n in range(5000)])
    conversations: list[Conversation] = scan(murmur_home)
    asked = 0

    def stop() -> bool:
        nonlocal asked
        asked += 1
        return asked > 2

    assert len(list(search_all(conversations, "needle"))) == 5000
    hits = list(search_all(conversations, "needle", stop))
    assert hits == []  # the record's hits come when it is read whole: it was not
