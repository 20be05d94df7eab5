"""A WebAssembly driver built with componentize-py that does HTTP itself (wasi:http) reaches the
provider only through the credential gateway: the provider sees the key, the component never
does, and a provider that fails for a moment is retried by the host."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.conftest import read_jsonl, run_cli
from tests.e2e.test_language_guests import env_for, guest
from tests.providers.server import Provider

pytestmark = pytest.mark.slow

KEY = "sk-wasm-9c8b7a6f5e"


def answer(text: str, calls: list[dict[str, object]] | None = None) -> dict[str, object]:
    message: dict[str, object] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    return {"choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop",
                         "message": message}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 4}}


def http_capsule(tmp_path: Path, home: Path, wasm: Path, provider: Provider,
                 extra: str = "") -> Path:
    """A capsule whose driver is the componentize-py HTTP driver, its key in config.yaml."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(f"credentials:\n  WASM_KEY: {KEY}\n")
    root = tmp_path / "capsule"
    root.mkdir()
    (root / "murmur.yaml").write_text(
        "name: wasm-http\nversion: '1'\nartifacts:\n"
        f"  - name: py-http-driver\n    runtime: driver\n    source: {wasm}\n"
        f"    gateway:\n      endpoint: {provider.url}/v1\n      api_key: ${{WASM_KEY}}\n"
        + extra +
        "inference:\n  model: test-model\n  max_turns: 4\n"
        "  retry: {max_attempts: 3, initial_backoff_ms: 10, max_backoff_ms: 100}\n"
        "  driver:\n    artifact: py-http-driver\n")
    return root


def test_a_wasm_http_driver_runs_through_the_gateway(provider: Provider, tmp_path: Path,
                                                     murmur_home: Path) -> None:
    wasm = guest("py_http_driver")
    provider.replies = [
        lambda h: h.status(503, {"error": {"message": "warming up"}}),
        lambda h: h.status(200, answer("", [{"id": "c1", "type": "function", "function": {
            "name": "bash", "arguments": '{"command": "echo from-wasm"}'}}])),
        lambda h: h.status(200, answer("The wasm driver is done.")),
    ]
    root = http_capsule(tmp_path, murmur_home, wasm, provider,
                        "capabilities:\n  shell:\n    allow: [bash]\n")
    done = run_cli("launch", str(root), "--headless", "--task", "say hello",
                   env=env_for(murmur_home), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "The wasm driver is done." in done.stdout
    assert "↻ model call failed (503)" in done.stdout
    assert "$ echo from-wasm" in done.stdout
    # the provider saw the key — and never what the component sent instead
    assert [s.headers.get("authorization") for s in provider.seen] == [f"Bearer {KEY}"] * 3
    assert [s.path for s in provider.seen] == ["/v1/chat/completions"] * 3
    assert provider.seen[2].body["messages"][-1]["role"] == "tool"
    # the component's environment held the gateway's address and no key
    workdir = next((root / "workdir").iterdir()) if (root / "workdir").exists() else None
    logs = list(murmur_home.rglob("py-http-driver.log"))
    if workdir is not None:
        logs += list(workdir.rglob("py-http-driver.log"))
    log = "\n".join(path.read_text() for path in logs)
    assert "MURMUR_INFERENCE_ENDPOINT" in log and "127.0.0.1" in log
    assert KEY not in log
    written = "\n".join(p.read_text(errors="replace") for base in (murmur_home, root)
                        for p in base.rglob("*") if p.is_file() and p.name != "config.yaml"
                        and p.suffix not in (".wasm", ".cwasm"))
    assert KEY not in written
    traces = list(murmur_home.rglob("trace.jsonl")) + list(root.rglob("trace.jsonl"))
    assert traces and read_jsonl(traces[0])[-1]["exit_status"] == "ok"


def test_a_provider_echoing_the_key_never_hands_it_to_the_component(
        provider: Provider, tmp_path: Path, murmur_home: Path) -> None:
    """The gateway redacts every answer it relays: an error body and a successful answer that
    echo the key reach the component — and so the record, the trace and the output — with
    `[redacted]` in its place."""
    wasm = guest("py_http_driver")
    encoded = base64.b64encode(f"Bearer {KEY}".encode()).decode()
    provider.replies = [
        lambda h: h.status(500, {"error": {"message": f"key {KEY} / {encoded}"}}),
        lambda h: h.status(200, answer(f"echo {KEY} {quote(KEY, safe='')} {encoded}")),
    ]
    root = http_capsule(tmp_path, murmur_home, wasm, provider)
    done = run_cli("launch", str(root), "--headless", "--task", "echo", env=env_for(murmur_home),
                   timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "echo [redacted]" in done.stdout
    written = [done.stdout, done.stderr] + [
        p.read_text(errors="replace") for base in (murmur_home, root) for p in base.rglob("*")
        if p.is_file() and p.name != "config.yaml" and p.suffix not in (".wasm", ".cwasm")]
    for form in (KEY, quote(KEY, safe=""), encoded[12:-4]):
        assert not any(form in text for text in written)


def test_the_drivers_own_manifest_places_the_key_unless_the_capsule_says(
        provider: Provider, tmp_path: Path, murmur_home: Path) -> None:
    """`upstream_auth` in the driver artifact's own murmur.yaml (spec §1.3) tells the gateway
    which header carries the key; the capsule's `gateway.upstream_auth` overrides it."""
    folder = tmp_path / "driver"
    folder.mkdir()
    shutil.copy(guest("py_http_driver"), folder / "py-http-driver.wasm")
    (folder / "murmur.yaml").write_text(
        "name: py-http-driver\nversion: 1.0.0\nruntime: driver\n"
        "upstream_auth:\n  header: X-Api-Key\n  value: '{key}'\n")
    provider.replies = [lambda h: h.status(200, answer("placed by the driver"))]
    root = http_capsule(tmp_path, murmur_home, folder, provider)
    done = run_cli("launch", str(root), "--headless", "--task", "hi", env=env_for(murmur_home),
                   timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    (seen,) = provider.seen
    assert seen.headers.get("x-api-key") == KEY and "authorization" not in seen.headers

    provider.seen.clear()
    provider.replies = [lambda h: h.status(200, answer("placed by the capsule"))]
    shutil.rmtree(root)
    root = http_capsule(tmp_path, murmur_home, folder, provider)
    manifest = (root / "murmur.yaml").read_text().replace(
        "      api_key: ${WASM_KEY}\n",
        "      api_key: ${WASM_KEY}\n      upstream_auth: {header: Authorization, "
        "value: 'Token {key}'}\n")
    (root / "murmur.yaml").write_text(manifest)
    done = run_cli("launch", str(root), "--headless", "--task", "hi", env=env_for(murmur_home),
                   timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    (seen,) = provider.seen
    assert seen.headers.get("authorization") == f"Token {KEY}"
    assert "x-api-key" not in seen.headers


def test_a_bad_upstream_auth_in_the_drivers_manifest_refuses_the_launch(
        provider: Provider, tmp_path: Path, murmur_home: Path) -> None:
    folder = tmp_path / "driver"
    folder.mkdir()
    shutil.copy(guest("py_http_driver"), folder / "py-http-driver.wasm")
    (folder / "murmur.yaml").write_text(
        "name: py-http-driver\nversion: 1.0.0\nruntime: driver\n"
        "upstream_auth:\n  header: X-Api-Key\n  value: 'no key here'\n")
    root = http_capsule(tmp_path, murmur_home, folder, provider)
    done = run_cli("launch", str(root), "--headless", "--task", "hi", env=env_for(murmur_home),
                   timeout=600)
    assert done.returncode == 2
    assert f"{folder / 'murmur.yaml'}:4: upstream_auth.value: must contain {{key}}" \
        in done.stderr
    assert provider.seen == []
