"""The credential gateway, driven over real HTTP as a WebAssembly driver drives it: the key goes
in, whatever auth the component sent comes out, answers stream through unbuffered."""

from __future__ import annotations

import base64
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.providers.server import Handler, Provider
from tui.core.inference.credentials import Credentials
from tui.core.inference.gateway import CredentialGateway
from tui.core.manifest.model import Gateway

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


def raw_request(gw: CredentialGateway, request_line: str, headers: str = "") -> tuple[int, str]:
    """Send one request exactly as written (no client library tidying it up)."""
    host, port = "127.0.0.1", int(gw.endpoint.split(":")[2].split("/")[0])
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(f"{request_line} HTTP/1.1\r\nHost: {host}:{port}\r\n{headers}"
                     "Content-Length: 2\r\nConnection: close\r\n\r\n{}".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.decode("utf-8", "replace").partition("\r\n\r\n")
    return int(head.split()[1]), body


def test_the_key_goes_only_to_the_configured_upstream(provider: Provider,
                                                      murmur_home: Path) -> None:
    """Absolute-form targets, `@host`, dot segments (plain and encoded), a missing or wrong
    secret and a lying Host header never reach anyone but the upstream, and only the well-formed
    request reaches it."""
    elsewhere = Provider().start()
    elsewhere.replies = [lambda h: h.status(200, {"stolen": True})] * 20
    provider.replies = [lambda h: h.status(200, {"ok": True})] * 20
    gw = gateway(provider, murmur_home)
    secret_path = "/" + gw.endpoint.split("/", 3)[3]  # /<secret>/v1
    far = elsewhere.url.removeprefix("http://")
    try:
        refused = {
            f"POST {elsewhere.url}/x": 400,
            f"POST @{far}/x": 400,
            f"POST //{far}/x": 403,
            f"POST {secret_path}/../../x": 400,
            f"POST {secret_path}/%2e%2e/x": 400,
            f"POST {secret_path}/a%2fb": 400,
            f"POST {secret_path}/@{far}/x": 400,
            f"POST {secret_path}//x": 400,
            "POST /v1/chat/completions": 403,
            "POST /wrong-secret/v1/chat/completions": 403,
            f"CONNECT {far}": 501,
        }
        for line, status in refused.items():
            assert raw_request(gw, line)[0] == status, line
        assert provider.seen == [] and elsewhere.seen == []
        status, body = raw_request(gw, f"POST {secret_path}/chat/completions",
                                   f"Host: {far}\r\nX-Forwarded-Host: {far}\r\n")
        assert status == 200 and json.loads(body) == {"ok": True}
    finally:
        gw.close()
        elsewhere.stop()
    assert elsewhere.seen == []
    assert [s.path for s in provider.seen] == ["/v1/chat/completions"]
    assert provider.seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert provider.seen[0].headers["host"] == provider.url.removeprefix("http://")


def test_the_secret_is_per_gateway(provider: Provider, murmur_home: Path) -> None:
    one, two = gateway(provider, murmur_home), gateway(provider, murmur_home)
    try:
        assert one.secret != two.secret and len(one.secret) >= 32
        borrowed = two.endpoint.split("/", 3)[3]  # another gateway's secret and path
        assert raw_request(one, f"POST /{borrowed}/chat/completions")[0] == 403
    finally:
        one.close()
        two.close()
    assert provider.seen == []


def test_an_echoed_key_never_reaches_the_component(provider: Provider,
                                                   murmur_home: Path) -> None:
    """Whatever the status, streamed or whole, in the body or a header, raw or encoded."""
    encoded = base64.b64encode(f"Bearer {KEY}".encode()).decode()
    frames = [f"data: {{\"echo\": \"{KEY[:5]}", f"{KEY[5:]}\"}}\n\n", f"data: {encoded}\n\n"]
    provider.replies = [
        lambda h: h.status(400, {"error": {"message": f"bad key {KEY} ({quote(KEY)})"}}),
        lambda h: h.status(429, {"error": encoded}, {"x-echo": KEY}),
        lambda h: h.status(200, {"answer": f"your key is {KEY}"}),
        lambda h: h.sse(iter(frames)),
    ]
    gw = gateway(provider, murmur_home)
    texts = []
    try:
        for _ in range(3):
            answer = httpx.post(gw.endpoint + "/chat/completions", json={})
            texts.append(answer.text + json.dumps(dict(answer.headers)))
        with httpx.stream("POST", gw.endpoint + "/chat/completions", json={}) as streamed:
            texts.append("".join(streamed.iter_text()))
    finally:
        gw.close()
    seen = "\n".join(texts)
    assert "[redacted]" in seen
    for form in (KEY, quote(KEY, safe=""), base64.b64encode(KEY.encode()).decode()[:-4],
                 encoded[12:-4]):
        assert form not in seen


def test_a_hostile_request_is_refused_without_a_traceback(provider: Provider, murmur_home: Path,
                                                          capfd: pytest.CaptureFixture[str]
                                                          ) -> None:
    gw = gateway(provider, murmur_home)
    secret_path = "/" + gw.endpoint.split("/", 3)[3]
    try:
        host, port = "127.0.0.1", int(gw.endpoint.split(":")[2].split("/")[0])
        for headers in ("Content-Length: nope\r\n", "Content-Length: 99999999999\r\n",
                        "Transfer-Encoding: chunked\r\n"):
            with socket.create_connection((host, port), timeout=10) as sock:
                sock.sendall(f"POST {secret_path}/x HTTP/1.1\r\nHost: h\r\n{headers}\r\n"
                             "zz\r\n".encode())
                status = sock.recv(65536).decode().split()[1]
            assert status in ("400", "413")
    finally:
        gw.close()
    assert "Traceback" not in capfd.readouterr().err and provider.seen == []
