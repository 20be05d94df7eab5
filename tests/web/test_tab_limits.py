"""The web fleet's limits are each link's own: the read-only link's holders can open at most
MAX_TABS pages, and the operator's full link still opens one; a page asking for more than
1000 × 1000 cells is given the default size. Real aiohttp on loopback, in this process."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from tui.web.server import MAX_TABS, Links, WebFleet, _size

WATCH = "w" * 43


class OpenPage:
    """A read-only link's page the server counts as open."""

    link = "watch"


async def test_the_read_only_links_pages_cannot_take_the_full_links(
        murmur_home: Path) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.setblocking(False)
    fleet = WebFleet(sock, Links(None, WATCH))
    fleet.tabs.update(OpenPage() for _ in range(MAX_TABS))  # type: ignore[misc]
    runner = web.AppRunner(fleet.application(), access_log=None, handle_signals=False)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    here = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        async with aiohttp.ClientSession() as client:
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await client.ws_connect(f"{here}/{WATCH}/ws")
            assert refused.value.status == 503
            async with client.ws_connect(f"{here}/ws?width=100000000&height=30") as page:
                tab: Any = next(tab for tab in fleet.tabs if tab.link == "full")
                assert not page.closed
            await asyncio.wait_for(_gone(fleet, tab), 30)  # the page closed: its process ends
    finally:
        await runner.cleanup()
        sock.close()


async def _gone(fleet: WebFleet, tab: object) -> None:
    while tab in fleet.tabs:  # noqa: ASYNC110 - the server's handler takes it out
        await asyncio.sleep(0.05)


@pytest.mark.parametrize(("asked", "given"), [
    ("120", 120), ("1000", 1000), ("1001", 80), ("100000000", 80), ("0", 80), ("-5", 80),
    ("wide", 80), (None, 80)])
def test_a_page_size_beyond_1000_cells_is_the_default(asked: str | None, given: int) -> None:
    assert _size(asked, 80) == given
