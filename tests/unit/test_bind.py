"""The places `launch --serve` and `fleet --web` take: HOST:PORT, HOST, :PORT, PORT or nothing,
an IPv6 host in brackets; a port that is not a number from 0 to 65535 is refused naming the
option — digits of another script included (they are not a port, and int() would fail)."""

from __future__ import annotations

import pytest

from tui.core.door import parse_bind
from tui.core.errors import LaunchError, WebRefused


@pytest.mark.parametrize(("text", "place"), [
    (None, ("127.0.0.1", 0)), ("", ("127.0.0.1", 0)), ("8080", ("127.0.0.1", 8080)),
    (":8080", ("127.0.0.1", 8080)), ("0.0.0.0", ("0.0.0.0", 0)),
    ("10.0.0.5:7401", ("10.0.0.5", 7401)), ("[::1]:8080", ("::1", 8080)), ("[::1]", ("::1", 0)),
])
def test_a_place_is_read(text: str | None, place: tuple[str, int]) -> None:
    assert parse_bind(text) == place


@pytest.mark.parametrize("port", ["65536", "²", "٣٠", "x", "-1"])
def test_a_port_that_is_not_one_is_refused_naming_the_option(port: str) -> None:
    with pytest.raises(LaunchError, match=rf"^--serve 127\.0\.0\.1:{port}: the port must be"):
        parse_bind(f"127.0.0.1:{port}")
    with pytest.raises(WebRefused, match=r"^--web "):
        parse_bind(f"127.0.0.1:{port}", "--web", WebRefused)
