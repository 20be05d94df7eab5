"""Manifests of every Murmur release: Murmur v0.2.0's `inference.endpoint` / `inference.api_key`
(snap:v0.2.0 `README.md` "inference:" block and `crates/murmur-artifact/src/runtime_manifest.rs`
`parse_inference`: endpoint required for `transport: http`, api_key a literal or `${NAME}`, empty
meaning none) is read as the newest form says it — `gateway: {endpoint, api_key}` on the driver's
`artifacts:` entry (murmur-runtime.md §1.5, §4.4; murmur-newest.md §11) — with a warning naming
that form, where current Murmur refuses it (`E-MAN-003`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tui.core.errors import ManifestError
from tui.core.manifest.model import Gateway
from tui.core.manifest.reader import parse_capsule
from tui.core.text.secrets import redact

FILE = Path("/capsules/v020/murmur.yaml")

# Murmur v0.2.0's README capsule, as its users wrote it
V020 = """\
name: my-capsule
version: "1.0.0"

artifacts:
  - name: murmur-driver-anthropic
    version: "1.0.0"
    runtime: driver

capabilities:
  network:
    allow:
      - https://api.anthropic.com

inference:
  transport: http
  endpoint: https://api.anthropic.com
  model: claude-haiku-4-5
  api_key: ${ANTHROPIC_API_KEY}
  driver:
    artifact: murmur-driver-anthropic
"""


def read(text: str) -> tuple[Gateway | None, list[str]]:
    capsule = parse_capsule(FILE, textwrap.dedent(text))
    driver = capsule.driver
    assert driver is not None
    return driver.gateway, [str(w) for w in capsule.warnings]


def refused(text: str) -> ManifestError:
    with pytest.raises(ManifestError) as info:
        parse_capsule(FILE, textwrap.dedent(text))
    return info.value


def test_a_v020_manifest_is_read_as_the_drivers_gateway_with_a_warning() -> None:
    gateway, warnings = read(V020)
    assert gateway is not None
    assert (gateway.endpoint, gateway.api_key, gateway.keyless) == (
        "https://api.anthropic.com", "${ANTHROPIC_API_KEY}", False)
    # Anthropic takes a key in x-api-key, where v0.2.0's anthropic driver put it itself
    assert gateway.upstream_auth == ("x-api-key", "{key}")
    assert warnings == [
        f"{FILE}:16: inference.endpoint: inference.endpoint and inference.api_key are Murmur "
        "v0.2.0's form; read as artifacts[murmur-driver-anthropic].gateway.endpoint and "
        "artifacts[murmur-driver-anthropic].gateway.api_key, the form newer Murmur releases "
        "read (v0.11.0 refuses the older keys with E-MAN-003) [W-MAN-GATEWAY]"]


def test_the_newest_form_reads_the_same_gateway_without_a_warning() -> None:
    newest = V020.replace('    runtime: driver\n', '    runtime: driver\n    gateway:\n'
                          '      endpoint: https://api.anthropic.com\n'
                          '      api_key: ${ANTHROPIC_API_KEY}\n'
                          '      upstream_auth: {header: x-api-key}\n') \
        .replace("  endpoint: https://api.anthropic.com\n  model", "  model") \
        .replace("  api_key: ${ANTHROPIC_API_KEY}\n  driver", "  driver")
    gateway, warnings = read(newest)
    older, _ = read(V020)
    assert gateway == older and warnings == []


def test_no_api_key_is_a_keyless_gateway_and_an_empty_one_too() -> None:
    """v0.2.0 sent no key without one (`api_key` absent or blank)."""
    for text in (V020.replace("  api_key: ${ANTHROPIC_API_KEY}\n", ""),
                 V020.replace("${ANTHROPIC_API_KEY}", '"  "')):
        gateway, _ = read(text)
        assert gateway is not None and (gateway.api_key, gateway.keyless) == (None, True)


def test_a_literal_key_is_kept_and_redacted_from_the_start() -> None:
    key = "sk-ant-v020-literal-4d5e6f7a8b"
    gateway, warnings = read(V020.replace("${ANTHROPIC_API_KEY}", key))
    assert gateway is not None and gateway.api_key == key
    assert key not in "\n".join(warnings) and redact(key) != key


def test_an_openai_endpoint_keeps_the_gateways_bearer_default() -> None:
    text = V020.replace("https://api.anthropic.com", "https://api.openai.com/v1")
    gateway, _ = read(text)
    assert gateway is not None and gateway.upstream_auth is None


def test_both_forms_at_once_are_refused_naming_both() -> None:
    both = V020.replace('    runtime: driver\n', '    runtime: driver\n    gateway:\n'
                        '      endpoint: https://api.anthropic.com\n')
    error = refused(both)
    assert [(p.key, p.code) for p in error.problems] == [("inference.endpoint", "E-MAN-003")]
    assert "artifacts[murmur-driver-anthropic].gateway names one too" in str(error)


def test_an_api_key_without_its_endpoint_is_refused() -> None:
    error = refused(V020.replace("  endpoint: https://api.anthropic.com\n  model", "  model"))
    # and the driver, given no gateway either, is told it needs one
    assert [(p.key, p.code) for p in error.problems] == [
        ("artifacts[murmur-driver-anthropic].gateway", None), ("inference.api_key", "E-MAN-003")]
    assert "inference.endpoint beside it" in str(error)


@pytest.mark.parametrize(("endpoint", "why"), [
    ("http://api.example.com", "http is allowed only to loopback"),
    ("https://u:p@api.example.com", "must not carry a user or password"),
    ("ftp://api.example.com", "is not an http(s) URL"),
])
def test_an_endpoint_v020_refused_is_refused_as_the_gateways(endpoint: str, why: str) -> None:
    """v0.2.0's `validate_inference_endpoint`: https anywhere, http to loopback only."""
    error = refused(V020.replace("  endpoint: https://api.anthropic.com",
                                 f"  endpoint: {endpoint}"))
    assert [(p.key, p.code) for p in error.problems] == [("inference.endpoint", "E-MAN-003")]
    assert why in str(error)
