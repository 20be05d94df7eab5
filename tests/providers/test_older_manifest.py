"""A capsule written for Murmur v0.2.0 — the provider under `inference:` as `endpoint` and
`api_key` (snap:v0.2.0 `README.md`, `runtime_manifest.rs`) — launches headless unchanged against a
provider on loopback: the key reaches the provider through the gateway its newer form describes
(murmur-runtime.md §1.5, §4.4), and the launch says which form it read it as."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli
from tests.providers.server import Provider, openai_answer

KEY = "sk-v020-3e4f5a6b7c8d"


def test_a_v020_manifest_launches_headless_with_the_warning_shown(
        provider: Provider, tmp_path: Path, murmur_home: Path) -> None:
    murmur_home.mkdir(parents=True)
    (murmur_home / "config.yaml").write_text(f"credentials:\n  PROVIDER_KEY: {KEY}\n")
    root = tmp_path / "v020"
    root.mkdir()
    (root / "murmur.yaml").write_text(
        "name: v020-capsule\nversion: '1.0.0'\nartifacts:\n"
        "  - name: model\n    runtime: driver\n    builtin: openai\n"
        "inference:\n  transport: http\n"
        f"  endpoint: {provider.url}\n  api_key: ${{PROVIDER_KEY}}\n"
        "  model: test-model\n  driver:\n    artifact: model\n")
    provider.replies = [openai_answer("Pong from an old capsule.")]
    done = run_cli("launch", str(root), "--headless", "--task", "Ping?")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Pong from an old capsule." in done.stdout
    shown = done.stdout + done.stderr
    assert "W-MAN-GATEWAY" in shown and "artifacts[model].gateway.endpoint" in shown
    assert [seen.headers.get("authorization") for seen in provider.seen] == [f"Bearer {KEY}"]
    assert KEY not in shown
