"""Headless Chromium (Debian's `chromium`), driven over its DevTools protocol with aiohttp's
websocket client: open a page, read the terminal's text, click a cell, type.

textual-serve's page draws the terminal with xterm.js on a canvas, so its text is not in the
DOM. The page's script is handed to the browser with one line added (through the protocol's
`Fetch` domain, in the browser only): the xterm.js `Terminal` it creates is kept as
`window.__fleetTerminal`, whose buffer the tests read — exactly the characters on screen."""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = os.environ.get("MURMUR_TEST_CHROMIUM", "/usr/bin/chromium")
OPENED = "this.terminal.open(e)"  # where textual.js opens its xterm.js terminal
KEPT = f"{OPENED},window.__fleetTerminal=this.terminal"
SCREEN = """(() => { const t = window.__fleetTerminal; if (!t) return null;
  const b = t.buffer.active, rows = [];
  for (let y = 0; y < t.rows; y++) { const l = b.getLine(b.viewportY + y);
    rows.push(l ? l.translateToString(true) : ""); }
  return rows.join("\\n"); })()"""
CELL = """(() => { const t = window.__fleetTerminal;
  const r = t.element.querySelector(".xterm-screen").getBoundingClientRect();
  return [r.left, r.top, r.width / t.cols, r.height / t.rows]; })()"""


def chromium_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not (os.access(CHROMIUM, os.X_OK) or shutil.which(CHROMIUM)):
        return f"no Chromium at {CHROMIUM} (Debian's chromium package; .ci/run installs it)"
    return None


class Page:
    """One browser tab, over its DevTools websocket."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self.socket = socket
        self.ids = itertools.count(1)
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.socket:
            data = json.loads(message.data)
            if "id" in data and data["id"] in self.waiting:
                self.waiting.pop(data["id"]).set_result(data)
            elif data.get("method") == "Fetch.requestPaused":
                asyncio.get_running_loop().create_task(self._patch(data["params"]))

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        number = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[number] = future
        await self.socket.send_json({"id": number, "method": method, "params": params})
        reply = await asyncio.wait_for(future, 30)
        if "error" in reply:
            raise AssertionError(f"{method}: {reply['error']}")
        return dict(reply.get("result", {}))

    async def _patch(self, paused: dict[str, Any]) -> None:
        body = await self.call("Fetch.getResponseBody", requestId=paused["requestId"])
        text = base64.b64decode(body["body"]).decode() if body.get("base64Encoded") \
            else body["body"]
        assert text.count(OPENED) == 1, "textual.js no longer opens its terminal as expected"
        await self.call("Fetch.fulfillRequest", requestId=paused["requestId"],
                        responseCode=200, body=base64.b64encode(
                            text.replace(OPENED, KEPT).encode()).decode(),
                        responseHeaders=[{"name": "Content-Type",
                                          "value": "application/javascript"}])

    async def open(self, url: str) -> None:
        await self.call("Fetch.enable", patterns=[
            {"urlPattern": "*textual.js*", "requestStage": "Response"}])
        await self.call("Page.enable")
        await self.call("Page.navigate", url=url)

    async def evaluate(self, expression: str) -> Any:
        reply = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return reply.get("result", {}).get("value")

    async def screen(self) -> str:
        """The terminal's text, row by row ("" before the page has one)."""
        return str(await self.evaluate(SCREEN) or "")

    async def until(self, condition: Callable[[str], object], what: str,
                    within: float = 30) -> str:
        """The screen's text once `condition` holds of it."""
        ends = time.monotonic() + within
        shown = ""
        while time.monotonic() < ends:
            shown = await self.screen()
            if condition(shown):
                return shown
            await asyncio.sleep(0.1)
        raise AssertionError(f"the page never showed {what}; it shows:\n{shown}")

    async def click_text(self, text: str) -> None:
        """A left click on the first cell of `text` on the screen."""
        rows = (await self.screen()).splitlines()
        y = next(index for index, row in enumerate(rows) if text in row)
        x = rows[y].index(text)
        left, top, width, height = await self.evaluate(CELL)
        at = {"x": left + (x + 0.5) * width, "y": top + (y + 0.5) * height}
        await self.call("Input.dispatchMouseEvent", type="mouseMoved", **at)
        for kind in ("mousePressed", "mouseReleased"):
            await self.call("Input.dispatchMouseEvent", type=kind, button="left",
                            clickCount=1, **at)

    async def type(self, text: str) -> None:
        await self.call("Input.insertText", text=text)

    async def press(self, key: str) -> None:
        """Enter or Escape, as a real key press."""
        code = {"Enter": 13, "Escape": 27}[key]
        for kind in ("keyDown", "keyUp"):
            await self.call("Input.dispatchKeyEvent", type=kind, key=key, code=key,
                            windowsVirtualKeyCode=code, nativeVirtualKeyCode=code,
                            **({"text": "\r"} if key == "Enter" and kind == "keyDown" else {}))

    async def close(self) -> None:
        self.reader.cancel()
        await self.socket.close()


class Chromium:
    """A headless Chromium of its own profile; `page()` opens a tab."""

    def __init__(self, profile: Path) -> None:
        self.profile = profile
        self.process = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--window-size=1280,800", "--remote-debugging-port=0",
             f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.http = aiohttp.ClientSession()

    async def port(self) -> int:
        active = self.profile / "DevToolsActivePort"
        ends = time.monotonic() + 30
        while time.monotonic() < ends:
            if active.exists() and active.read_text().strip():
                return int(active.read_text().split()[0])
            assert self.process.poll() is None, "Chromium ended before it listened"
            await asyncio.sleep(0.05)
        raise AssertionError("Chromium never opened its DevTools port")

    async def page(self) -> Page:
        port = await self.port()
        async with self.http.put(f"http://127.0.0.1:{port}/json/new?about:blank") as reply:
            target = await reply.json()
        socket = await self.http.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0)
        return Page(socket)

    async def close(self) -> None:
        await self.http.close()
        self.process.kill()
        self.process.wait(30)
