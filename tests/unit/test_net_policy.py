"""What a component's wasi:http may reach: `capabilities.network.allow` read from a real
manifest, the entry's list clamped to the capsule's, an empty list meaning no network."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.core.a2a import net_policy
from tui.core.errors import NetworkAllowError
from tui.core.manifest.reader import load_capsule
from tui.core.wasm.sandbox import network


def capsule_with(tmp_path: Path, ceiling: str, entry_network: str) -> Path:
    (tmp_path / "tool.wasm").write_bytes(b"\0asm")
    (tmp_path / "murmur.yaml").write_text(
        "name: net\nversion: '1'\nartifacts:\n"
        "  - name: tool\n    runtime: tool\n    source: tool.wasm\n" + entry_network
        + "capabilities:\n  network:\n    allow: " + ceiling + "\n")
    return tmp_path


def reach(tmp_path: Path, ceiling: str, entry_network: str, url: str) -> bool:
    capsule = load_capsule(capsule_with(tmp_path, ceiling, entry_network))
    rules = network(capsule, capsule.artifacts[0])
    scheme, _, authority = url.partition("://")
    return net_policy.allowed(rules, net_policy.target(scheme, authority))


CEILING = "['https://api.example.com', 'http://127.0.0.1:8080']"


def test_an_entry_without_a_list_has_the_capsules(tmp_path: Path) -> None:
    assert reach(tmp_path, CEILING, "", "https://api.example.com")
    assert reach(tmp_path, CEILING, "", "http://127.0.0.1:8080")
    assert not reach(tmp_path, CEILING, "", "http://127.0.0.1:9090")
    assert not reach(tmp_path, CEILING, "", "http://api.example.com")  # the scheme counts


def test_an_empty_entry_list_means_no_network_at_all(tmp_path: Path) -> None:
    empty = "    capabilities:\n      network:\n        allow: []\n"
    assert not reach(tmp_path, CEILING, empty, "https://api.example.com")


def test_an_entry_list_is_clamped_to_the_capsules(tmp_path: Path) -> None:
    narrow = ("    capabilities:\n      network:\n        allow: ['http://127.0.0.1:8080', "
              "'https://elsewhere.example.org']\n")
    assert reach(tmp_path, CEILING, narrow, "http://127.0.0.1:8080")
    assert not reach(tmp_path, CEILING, narrow, "https://api.example.com")  # not its own
    assert not reach(tmp_path, CEILING, narrow, "https://elsewhere.example.org")  # dropped
    kept, dropped = net_policy.effective(("https://api.example.com",),
                                         ("https://elsewhere.example.org",), "tool")
    assert kept == () and dropped == ("https://elsewhere.example.org",)


def test_a_bare_host_spans_schemes_and_ports_and_a_refusal_is_worded_as_murmurs() -> None:
    (rule,) = net_policy.parse_rules(("api.example.com",))  # as Murmur's network_policy.rs
    assert net_policy.allowed((rule,), net_policy.target("https", "api.example.com"))
    assert net_policy.allowed((rule,), net_policy.target("http", "api.example.com:8443"))
    assert not net_policy.allowed((rule,), net_policy.target("https", "api.example.org"))
    assert net_policy.refusal(net_policy.target("http", "evil.test:81"), "evil.test:81") == \
        "network policy: 'http://evil.test:81' not in capabilities.network.allow"


@pytest.mark.parametrize("entry", ["", "ftp://host", "https://user@host", "https://host/path"])
def test_an_unreadable_entry_is_refused_naming_it(entry: str) -> None:
    with pytest.raises(NetworkAllowError) as caught:
        net_policy.parse_rule(entry)
    assert repr(entry)[1:-1] in str(caught.value) or entry == ""
