"""The Tools pane: every tool of the session, one row each — name, kind, effect, replay,
whether its contract was declared, derived or is built in, the fingerprint's first 12 hex
digits and its capabilities (short names) — and the highlighted tool's whole contract and
fingerprint below. Read from the session's `tools/contracts.json` when it starts.

A widget a screen places: its own layout stays in `DEFAULT_CSS`, which that screen can
override; screens keep theirs in `.tcss` files beside them."""

from __future__ import annotations

from pathlib import Path

from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from tui.app.widgets.contracts_file import MAX_TOOLS, ToolEntry, read_contracts
from tui.app.widgets.row_list import Row, RowList
from tui.core.text.printable import printable

# capabilities as a row shows them (the detail names them in full)
SHORT = {"environment.read": "env.r", "environment.write": "env.w", "filesystem.read": "fs.r",
         "filesystem.write": "fs.w", "network.access": "net", "process.execute": "exec",
         "secrets.read": "secrets"}
KINDS = {"wasm": "WebAssembly tool",
         "shell": "shell binary, allowed by capabilities.shell.allow", "skill": "skill"}
SOURCES = {
    "declared": "declared in the tool's own murmur.yaml (x-murmur-tui.contract)",
    "derived": "derived: the tool declares none, so it is worked out from what the capsule "
               "grants it (read-only + safe only when nothing granted can change the world)",
    "built-in": "built in: fixed for every tool of this kind",
}
REPLAYS = {
    "safe": "running it again is harmless: retried once after a definitive failure, re-run "
            "on resume",
    "idempotent": "running it again has the effect of once: retried once after a definitive "
                  "failure, re-run on resume",
    "unsafe": "it must not run twice: never retried, not re-run on resume",
}


def short_capabilities(caps: tuple[str, ...]) -> str:
    """`filesystem.read, filesystem.write` as `fs.rw`, and so on; unknown names as they are."""
    names = [SHORT.get(cap, cap) for cap in caps]
    for area in ("env", "fs"):
        if f"{area}.r" in names and f"{area}.w" in names:
            names[names.index(f"{area}.r")] = f"{area}.rw"
            names.remove(f"{area}.w")
    return " ".join(names) or "none"


class ToolsPane(Vertical):
    """tool, kind, effect, replay, contract, fingerprint, capabilities; the highlighted tool's
    contract whole underneath."""

    DEFAULT_CSS = """
    ToolsPane .list-header { height: 1; color: $text-muted; text-style: bold; }
    /* a few tools leave the room to the detail; many take up to half the pane */
    ToolsPane RowList { height: auto; min-height: 2; max-height: 50%; }
    ToolsPane #tool-detail-scroll { height: 1fr; border-top: solid $panel; }
    ToolsPane #tool-detail { padding: 0 1; }
    """
    COLUMNS = (("tool", 12), ("kind", 5), ("effect", 9), ("replay", 10), ("contract", 8),
               ("fingerprint", 12), ("capabilities", 16))  # 80 cells in all: a row fits 80 columns

    def __init__(self) -> None:
        super().__init__()
        self.rows = RowList(self.COLUMNS, MAX_TOOLS, id="tool-list")
        self.detail = Static("The session has not started: no tools yet.", id="tool-detail",
                             markup=False)
        self.tools: dict[str, ToolEntry] = {}
        self.source: Path | None = None
        self.detail_text = ""

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(self.rows.header(), classes="list-header", markup=False)
        yield self.rows
        with VerticalScroll(id="tool-detail-scroll"):
            yield self.detail

    def read_contracts(self, path: Path) -> None:
        """The session's tools (a new session's replace the last one's)."""
        self.source = path
        entries = read_contracts(path)
        if isinstance(entries, str):
            self.tools = {}
            self.rows.replace([])
            self._say(f"No tools to show. {entries}")
            return
        self.tools = {entry.name: entry for entry in entries}
        self.rows.replace([Row(entry.name, _cells(entry)) for entry in entries],
                          keep=self.rows.highlighted)
        if not entries:
            self._say(f"The session has no tools ({path}).")
            return
        key = self.rows.highlighted
        self._show(key if key is not None else entries[0].name)

    def on_row_list_highlighted(self, message: RowList.Highlighted) -> None:
        self._show(message.key)

    def _show(self, name: str) -> None:
        entry = self.tools.get(name)
        if entry is None:
            return
        parts = [f"{entry.name} — {KINDS.get(entry.kind, entry.kind)}", "",
                 f"contract: {SOURCES.get(entry.source, entry.source)}",
                 f"effect: {entry.effect}",
                 f"replay: {entry.replay}" + (f" — {REPLAYS[entry.replay]}"
                                              if entry.replay in REPLAYS else ""),
                 "capabilities:" + ("" if entry.capabilities else " none")]
        parts += [f"  {cap}" for cap in entry.capabilities]
        parts += ["", f"fingerprint: sha256 {entry.fingerprint}",
                  "  over the component, description, input schema, effect, replay and "
                  "sorted capabilities"]
        if self.source is not None:
            parts += ["", f"from {self.source}"]
        self._say("\n".join(parts))

    def _say(self, text: str) -> None:
        self.detail_text = printable(text)
        self.detail.update(self.detail_text)


def _cells(entry: ToolEntry) -> list[str]:
    return [entry.name, entry.kind, entry.effect, entry.replay, entry.source,
            entry.fingerprint[:12], short_capabilities(entry.capabilities)]

