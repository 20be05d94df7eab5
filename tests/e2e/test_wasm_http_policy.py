"""wasi:http for script capsules and drivers, each request checked against network.allow: a
capsule's request to a listed host is sent and answered; one to an unlisted host gets
HTTP-request-denied (the capsule goes on) and that server sees nothing; a driver reaches its
own gateway, and no other host unless network.allow names it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import wasmtime

from tests.conftest import run_cli
from tests.guests.build import cache_root
from tui.core.wasm import http_gate

HERE = Path(__file__).resolve().parent.parent / "wasm" / "http"


class Recorder:
    """A loopback HTTP server that answers every GET 200 and keeps the paths it saw."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        seen = self.paths

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:
                seen.append(self.path)
                self.send_response(200)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def authority(self) -> str:
        return f"127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def servers() -> Iterator[tuple[Recorder, Recorder]]:
    allowed, refused = Recorder(), Recorder()
    yield allowed, refused
    allowed.stop()
    refused.stop()


def http_capsule_wasm() -> bytes:
    """The WAT capsule, its error-code cases taken from the gate's own WAT."""
    gate = http_gate.GATE_WAT
    first = gate.index('(case "DNS-timeout")')
    last = gate.index('(case "internal-error" (option string))')
    cases = gate[first:last + len('(case "internal-error" (option string))')]
    text = (HERE / "http_capsule.component.wat").read_text(encoding="utf-8")
    return wasmtime.wat2wasm(text.replace("{ERROR_CASES}", cases))


def launch(root: Path, home: Path, env: dict[str, str]) -> tuple[int, str, Path]:
    work = root.parent / "work"
    done = run_cli("launch", str(root), "--headless", "--workdir", str(work), env={
        "MURMUR_HOME": str(home),
        "MURMUR_COMPILED_CACHE": str(cache_root() / "compiled-host"), **env}, timeout=120)
    return done.returncode, done.stdout + done.stderr, work


def script_capsule(tmp_path: Path, allow: str) -> Path:
    root = tmp_path / "capsule"
    root.mkdir()
    (root / "capsule.wasm").write_bytes(http_capsule_wasm())
    (root / "murmur.yaml").write_text(
        "name: http-capsule\nversion: '1.0.0'\nartifacts: []\ncapabilities:\n"
        "  env:\n    allow: [HTTP_ALLOWED, HTTP_REFUSED]\n" + allow)
    return root


def test_a_script_capsule_reaches_only_the_hosts_network_allow_lists(
        tmp_path: Path, servers: tuple[Recorder, Recorder]) -> None:
    allowed, refused = servers
    root = script_capsule(tmp_path, f"  network:\n    allow: ['http://{allowed.authority}']\n")
    code, output, work = launch(root, tmp_path / "home", {
        "HTTP_ALLOWED": allowed.authority, "HTTP_REFUSED": refused.authority})
    assert code == 0, output
    # the capsule saw HTTP-request-denied for the unlisted host, then status 200 from the
    # listed one; the unlisted server never saw a request
    assert allowed.paths == ["/saw-denied", "/status-200"]
    assert refused.paths == []
    log = next(work.glob(".murmur/ses_*/logs/capsule.log")).read_text(encoding="utf-8")
    assert (f"network policy: 'http://{refused.authority}' not in "
            "capabilities.network.allow") in log


def test_with_no_allow_list_every_request_is_refused_and_the_session_goes_on(
        tmp_path: Path, servers: tuple[Recorder, Recorder]) -> None:
    allowed, refused = servers
    root = script_capsule(tmp_path, "")
    code, output, _ = launch(root, tmp_path / "home", {
        "HTTP_ALLOWED": allowed.authority, "HTTP_REFUSED": refused.authority})
    assert code == 0, output
    assert allowed.paths == [] and refused.paths == []


def test_a_port_the_allow_list_does_not_name_is_refused(
        tmp_path: Path, servers: tuple[Recorder, Recorder]) -> None:
    allowed, refused = servers
    # the same host, another port: refused
    root = script_capsule(tmp_path, f"  network:\n    allow: ['{allowed.authority}']\n")
    code, output, _ = launch(root, tmp_path / "home", {
        "HTTP_ALLOWED": allowed.authority, "HTTP_REFUSED": refused.authority})
    assert code == 0, output
    assert allowed.paths == ["/saw-denied", "/status-200"]
    assert refused.paths == []



