"""A view that already scrolls grows without laying the screen out again: only its scrollbar
changes (a layout re-renders every widget on the screen, the dearest part of a busy frame)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.conftest import leave_prompt
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.widgets.row_list import RowList


async def test_a_scrolling_list_grows_with_its_scrollbar_alone(
        murmur_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(140, 40)) as pilot:
        await leave_prompt(pilot)  # out of the prompt: the Shell pane
        await pilot.press("2")
        shell = app.supervisor.shell
        for n in range(200):
            shell.add(f"r{n}", [f"line {n}"])
        await wait_until(pilot, lambda: shell.drawn and shell.virtual_size.height == 200
                       and shell.show_vertical_scrollbar)
        layouts: list[RowList] = []
        refresh = RowList.refresh

        def counting(self: RowList, *regions: object, layout: bool = False,
                     **kwargs: object) -> object:
            if layout:
                layouts.append(self)
            return refresh(self, *regions, layout=layout, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(RowList, "refresh", counting)
        for n in range(200, 260):
            shell.add(f"r{n}", [f"line {n}"])
        await wait_until(pilot, lambda: shell.drawn and shell.virtual_size.height == 260)
        await pilot.pause()  # a layout, were one coming, would have come by now
        assert layouts == []  # the list kept its size: no screen layout
        assert shell.vertical_scrollbar.window_virtual_size == 260  # the thumb knows
        assert shell.scroll_y == shell.max_scroll_y  # and it still follows the newest row
        assert "line 259" in "".join(
            segment.text for y in range(shell.size.height)
            for segment in shell.render_line(y))
