"""The one card parser (tui/core/a2a/card.py): every card Murmur has served, and the two that the
door client, the probe and delegation used to read three ways, give one answer each — and the
client, the probe and delegation all read that answer from it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.door_fake import SESSION, FakeDoor
from tui.core.a2a.card import DOOR_WORDS, Generation, parse_card
from tui.core.errors import DoorError

URL = "http://127.0.0.1:1"


def v1_card(version: str, binding: str | None = "JSONRPC") -> dict[str, Any]:
    interface: dict[str, Any] = {"url": URL, "protocolVersion": version}
    if binding is not None:
        interface["protocolBinding"] = binding
    return {"name": "demo", "version": "0.1.0", "supportedInterfaces": [interface],
            "capabilities": {"streaming": True, "extensions": [
                {"uri": "https://docs.murmur.nexus/reference/agent-card/#murmur-capsule-v1",
                 "params": {"sessionId": SESSION}}]}}


def v04_card(methods: list[str]) -> dict[str, Any]:
    return {"name": "demo", "version": "0.1.0", "url": "localhost:1", "session_id": SESSION,
            "capabilities": {"tools": [], "shell": False, "network": False, "streaming": True,
                             "cancellation": True},
            "serves": {"methods": methods, "planes": []}}


V02_CARD = {"name": "demo", "version": "0.2.0", "url": "localhost:1",
            "capabilities": {"tools": [], "shell": False, "network": False, "streaming": True}}


@pytest.mark.parametrize(("card", "generation", "session"), [
    # the three cards the old readers disagreed on
    (v1_card("0.3.0"), "B", SESSION),  # was B (client) / refused (delegation) / "1.0" (probe)
    (v04_card(["SendMessage", "GetTask"]), "C", SESSION),  # was A / C / "legacy"
    (v04_card(["message/send", "tasks/get"]), "A", SESSION),
    # every generation as Murmur serves it
    (V02_CARD, "A", None),
    (v1_card("0.3"), "B", SESSION),
    (v1_card("1.0"), "C", SESSION),
    (v1_card("1.0.1"), "C", SESSION),
    (v1_card("0.3", binding=None), "B", SESSION),  # A2A 0.3's default binding is JSONRPC
    (FakeDoor("A").card(), "A", None),
    (FakeDoor("A", previous=True).card(), "A", SESSION),
    (FakeDoor("B").card(), "B", SESSION),
    (FakeDoor("C").card(), "C", SESSION),
    (FakeDoor("C", token="t").card(), "C", None),  # an authenticated door hides its session
    (FakeDoor("C", token="t").card(extended=True), "C", SESSION),
])
def test_each_card_has_one_generation(card: dict[str, Any], generation: Generation,
                                      session: str | None) -> None:
    parsed = parse_card(card, URL)
    assert (parsed.generation, parsed.session_id) == (generation, session)
    assert DOOR_WORDS[parsed.generation] in ("legacy", "0.3", "1.0")


def test_a_card_served_by_a_door_with_v1_methods_is_spoken_to_in_v1() -> None:
    parsed = parse_card(v04_card(["SendMessage", "GetTask", "stream/watch"]), URL)
    assert parsed.methods == ("SendMessage", "GetTask", "stream/watch")


@pytest.mark.parametrize(("card", "words"), [
    ([], "not a JSON object"),
    ({"version": "1"}, "without a name and version"),
    ({"name": "x", "version": "1"}, "neither supportedInterfaces nor url"),
    ({"name": "x", "version": "1", "supportedInterfaces": {}}, "is not a list"),
    (v1_card("2.0"), "speaks '2.0'"),
    (v1_card("1.0", binding="GRPC"), "speaks no JSONRPC interface"),
    ({"name": "x", "version": "1", "supportedInterfaces": []}, "speaks no JSONRPC interface"),
])
def test_a_card_no_generation_fits_is_named(card: Any, words: str) -> None:
    with pytest.raises(DoorError, match=words) as raised:
        parse_card(card, URL)
    assert URL in raised.value.text


def test_only_the_card_parser_reads_a_cards_protocol() -> None:
    """No second reader can drift: outside the parser, only the door murmur-tui serves (which
    writes its own card) names a card's interfaces."""
    from pathlib import Path

    import tui

    root = Path(tui.__file__).parent
    readers = sorted(str(path.relative_to(root)) for path in root.rglob("*.py")
                     if "supportedInterfaces" in path.read_text(encoding="utf-8"))
    assert readers == ["core/a2a/card.py", "core/door/card.py"]
