"""The credential gateway, driven over real HTTP as a WebAssembly driver drives it: the key goes
in, whatever auth the component sent comes out, answers stream through unbuffered."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.providers.server import Handler, Provider
from tui.core.inference.credentials import Credentials
from tui.core.inference.gateway import CredentialGateway
from tui.core.manifest import Gateway

KEY = "sk-gw-1111aaaa"
ROTATED = "sk-gw-2222bbbb"


def gateway(provider: Provider, home: Path, key: str = KEY,
            **options: object) -> CredentialGateway:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(f"credentials:\n  GW_KEY: {key}\n")
    config = Gateway(endpoint=provider.url + "/v1", api_key="${GW_KEY}", **options)  # type: ignore[arg-type]
    return CredentialGateway("driver", config, Credentials(home))


def test_the_key_replaces_whatever_auth_the_component_sent(provider: Provider,
                                                           murmur_home: Path) -> None:
    provider.replies = [lambda h: h.status(200, {"ok": True})]
    gw = gateway(provider, murmur_home)
    try:
        assert gw.environment()["MURMUR_INFERENCE_ENDPOINT"].endswith("/v1")
        answer = httpx.post(gw.endpoint + "/chat/completions?beta=1", json={"x": 1},
                            headers={"Authorization": "Bearer stolen", "X-Api-Key": "also",
                                     "x-custom": "kept"})
        assert answer.status_code == 200 and answer.json() == {"ok": True}
    finally:
        gw.close()
    seen = provider.seen[0]
    assert seen.path == "/v1/chat/completions?beta=1"
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert "x-api-key" not in seen.headers and seen.headers["x-custom"] == "kept"
    assert seen.body == {"x": 1} and gw.last.status == 200


def test_a_configured_auth_header(provider: Provider, murmur_home: Path) -> None:
    provider.replies = [lambda h: h.status(200, {})]
    gw = gateway(provider, murmur_home, upstream_auth=("X-Api-Key", "{key}"))
    try:
        httpx.post(gw.endpoint + "/messages", json={},
                   headers={"x-api-key": "component-made-this-up"})
    finally:
        gw.close()
    assert provider.seen[0].headers["x-api-key"] == KEY
    assert "authorization" not in provider.seen[0].headers


def test_answers_stream_through_unbuffered(provider: Provider, murmur_home: Path) -> None:
    go_on = threading.Event()

    def slow(handler: Handler) -> None:
        def frames() -> Iterator[str]:
            yield "data: first\n\n"
            go_on.wait(10)  # the rest only once the client has the first frame
            yield "data: second\n\n"

        handler.sse(frames())

    provider.replies = [slow]
    gw = gateway(provider, murmur_home)
    try:
        with httpx.stream("POST", gw.endpoint + "/chat/completions", json={},
                          timeout=httpx.Timeout(5.0)) as response:
            lines = response.iter_lines()
            assert next(lines) == "data: first"  # would wait for go_on if buffered
            go_on.set()
            assert [line for line in lines if line] == ["data: second"]
    finally:
        go_on.set()
        gw.close()


def test_redirects_are_returned_not_followed(provider: Provider, murmur_home: Path) -> None:
    provider.replies = [lambda h: h.status(302, {}, {"location": "https://elsewhere.test/"})]
    gw = gateway(provider, murmur_home)
    try:
        answer = httpx.post(gw.endpoint + "/chat/completions", json={})
    finally:
        gw.close()
    assert answer.status_code == 302 and answer.headers["location"] == "https://elsewhere.test/"
    assert len(provider.seen) == 1


def test_a_401_reads_the_key_again_once(provider: Provider, murmur_home: Path) -> None:
    def rotate(handler: Handler) -> None:
        (murmur_home / "config.yaml").write_text(f"credentials:\n  GW_KEY: {ROTATED}\n")
        handler.status(401, {"error": {"message": "expired"}})

    provider.replies = [rotate, lambda h: h.status(200, {"ok": 1})]
    gw = gateway(provider, murmur_home)
    try:
        answer = httpx.post(gw.endpoint + "/chat/completions", json={"n": 1})
    finally:
        gw.close()
    assert answer.status_code == 200 and gw.last.rejected is None
    assert [s.headers["authorization"] for s in provider.seen] == [
        f"Bearer {KEY}", f"Bearer {ROTATED}"]
    assert provider.seen[0].body == provider.seen[1].body


def test_an_unchanged_rejected_key_is_recorded_and_never_echoed(provider: Provider,
                                                                murmur_home: Path) -> None:
    provider.replies = [lambda h: h.status(401, {"error": {"message": f"bad key {KEY}"}})]
    gw = gateway(provider, murmur_home)
    try:
        answer = httpx.post(gw.endpoint + "/chat/completions", json={})
    finally:
        gw.close()
    assert answer.status_code == 401 and gw.last.rejected is not None
    assert KEY not in answer.text and "[redacted]" in answer.text
    assert len(provider.seen) == 1


def test_an_unreachable_provider_is_a_502_and_a_broken_connection(murmur_home: Path) -> None:
    dead = Provider().start()
    url = dead.url
    dead.stop()
    config = Gateway(endpoint=url, api_key=None, keyless=True)
    gw = CredentialGateway("driver", config, Credentials(murmur_home))
    try:
        answer = httpx.post(gw.endpoint + "/chat/completions", json={})
    finally:
        gw.close()
    assert answer.status_code == 502 and "could not reach" in answer.json()["error"]["message"]
    assert gw.last.forwarded and gw.last.status is None
