"""A provider that echoes the key — raw, base64, URL-encoded, hex — in error bodies, in a
malformed stream and inside a successful answer: no form of it reaches any file the session
wrote, stdout or stderr. Real HTTP on loopback, the real command line."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.conftest import run_cli
from tests.providers.server import Handler, Provider, openai_answer, openai_call

KEY = "sk-leak/Zq8+w9x7Yb3Kd9Pq2Lm5=end"


def echo_forms() -> dict[str, str]:
    """Every way the provider writes the key back."""
    data = KEY.encode()
    return {"raw": KEY, "url": quote(KEY, safe=""), "hex": binascii.hexlify(data).decode(),
            "b64": base64.b64encode(data).decode(),
            "b64-bearer": base64.b64encode(b"Bearer " + data).decode(),
            "b64url-x": base64.urlsafe_b64encode(b"x" + data).decode()}


def searched_forms(secret: str = KEY) -> dict[str, str]:
    """What must not appear anywhere: each form of `secret`, or its middle (base64 of the key
    inside a longer text keeps only the characters that depend on the key's bytes alone)."""
    forms = {"raw": secret, "url": quote(secret, safe=""), "hex": secret.encode().hex(),
             "HEX": secret.encode().hex().upper(), "json": json.dumps(secret)[1:-1]}
    for prefix in (b"", b"x", b"xy", b"Bearer "):
        for name, encode in (("b64", base64.b64encode), ("b64url", base64.urlsafe_b64encode)):
            encoded = encode(prefix + secret.encode()).decode()
            forms[f"{name}+{len(prefix)}"] = encoded[(len(prefix) + 2) // 3 * 4 + 4:-8]
    return forms


def everything_written(*roots: Path) -> dict[str, str]:
    return {str(path): path.read_text(encoding="utf-8", errors="replace")
            for root in roots for path in root.rglob("*")
            if path.is_file() and path.name != "config.yaml"
            and path.suffix not in (".wasm", ".cwasm")}


def assert_no_leak(texts: dict[str, str]) -> None:
    found = [(name, where) for where, text in texts.items()
             for name, form in searched_forms().items() if form in text]
    assert found == []


def echo_status(status: int) -> Callable[[Handler], None]:
    forms = echo_forms()
    return lambda h: h.status(status, {"error": {"message": f"bad key {forms['raw']}; "
                                                 f"b64 {forms['b64']} / {forms['b64-bearer']}; "
                                                 f"url {forms['url']}; hex {forms['hex']}"}},
                              {"x-echo": KEY})


def malformed_stream(handler: Handler) -> None:
    forms = echo_forms()
    handler.sse(iter([f"data: {{\"choices\": [{{\"delta\": {{\"content\": \"{KEY[:6]}",
                      f"{KEY[6:]} {forms['b64url-x']}\"}}]\n\n", "data: {broken " + KEY + "\n\n"]))


def scenarios(config: Path) -> dict[str, list[Callable[[Handler], None]]]:
    return {
        # retried twice, then a streamed answer holding the key in every form, in pieces
        "retried-then-echoed": [echo_status(429), echo_status(500),
                                openai_answer(" ".join(echo_forms().values()), pieces=7)],
        "bad-request": [echo_status(400)],
        "rejected-key": [echo_status(401)],
        "malformed-stream": [malformed_stream],
        # a shell command prints config.yaml (the user's own file, keys and all)
        "shell-reads-config": [
            openai_call("c1", "bash", [json.dumps({"command": f"cat {config}"})]),
            openai_answer("done")],
    }


@pytest.mark.parametrize("scenario", sorted(scenarios(Path())))
@pytest.mark.parametrize("output", ["--json", "human"])
def test_no_form_of_the_key_leaves_the_session(scenario: str, output: str, provider: Provider,
                                               tmp_path: Path, murmur_home: Path) -> None:
    murmur_home.mkdir(parents=True, exist_ok=True)
    config = murmur_home / "config.yaml"
    provider.replies = scenarios(config)[scenario]
    config.write_text(f"credentials:\n  LEAK_KEY: '{KEY}'\n")
    config.chmod(0o600)
    root = tmp_path / "capsule"
    root.mkdir()
    (root / "murmur.yaml").write_text(
        "name: leak-test\nversion: '1'\nartifacts:\n"
        "  - name: model\n    runtime: driver\n    builtin: openai\n"
        f"    gateway:\n      endpoint: {provider.url}/v1\n      api_key: ${{LEAK_KEY}}\n"
        "capabilities:\n  shell:\n    allow: [bash]\n"
        "inference:\n  model: test-model\n  max_turns: 3\n"
        "  retry: {max_attempts: 3, initial_backoff_ms: 5, max_backoff_ms: 20}\n"
        "  driver:\n    artifact: model\n")
    mode = ("--json",) if output == "--json" else ()
    done = run_cli("launch", str(root), "--headless", *mode, "--task", "hello", timeout=120)
    assert done.returncode in (0, 1), done.stderr
    assert provider.seen and all(s.headers["authorization"] == f"Bearer {KEY}"
                                 for s in provider.seen)
    texts = everything_written(murmur_home, root)
    assert any(name.endswith("trace.jsonl") for name in texts)
    assert any(name.endswith("conversation.jsonl") for name in texts)
    texts["stdout"], texts["stderr"] = done.stdout, done.stderr
    assert_no_leak(texts)
    assert "[redacted]" in "\n".join(texts.values())


def test_a_literal_key_in_the_manifest_stays_out_of_the_workdir_copy(
        provider: Provider, tmp_path: Path, murmur_home: Path) -> None:
    provider.replies = [openai_answer(f"the key was {KEY}")]
    root = tmp_path / "capsule"
    root.mkdir()
    (root / "murmur.yaml").write_text(
        "name: literal-key\nversion: '1'\nartifacts:\n"
        "  - name: model\n    runtime: driver\n    builtin: openai\n"
        f"    gateway:\n      endpoint: {provider.url}/v1\n      api_key: '{KEY}'\n"
        "inference:\n  model: test-model\n  driver:\n    artifact: model\n")
    done = run_cli("launch", str(root), "--headless", "--task", "hi", timeout=120)
    assert done.returncode == 0, done.stderr
    assert "W-SEC-027" in done.stdout + done.stderr or "literal key" in done.stderr
    copies = list(root.glob("workdir/*/murmur.yaml"))
    assert copies and "api_key: '[redacted]'" in copies[0].read_text()
    texts = {k: v for k, v in everything_written(murmur_home, root).items()
             if k != str(root / "murmur.yaml")}
    texts["stdout"], texts["stderr"] = done.stdout, done.stderr
    assert_no_leak(texts)
