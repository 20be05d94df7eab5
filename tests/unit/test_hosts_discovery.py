"""A host's discovery: both shapes read (murmur-tui's `ps --json`, Murmur's running records as
`cat` prints them), hostile output refused with a reason and never a traceback, the command
bounded (timeout, stdout cap, stderr's last line), and the back-off between tries."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.core.errors import HostCommandFailed, ListingRefused
from tui.core.hosts.backoff import retry_after
from tui.core.hosts.discovery import ListedSession, discover, parse_listing
from tui.core.hosts.run import run_bounded
from tui.core.text.secrets import redact

A = "ses_019f0000000000000000000000000a01"
B = "ses_019f0000000000000000000000000b02"
PS_ROW = {"session_id": A, "name": "nightly", "capsule": "asker@0.1.0", "capsule_name": "asker",
          "capsule_version": "0.1.0", "status": "running", "reason": None, "door": "1.0",
          "state": "idle", "model": None, "task": None, "question": None, "detached": True,
          "started_at": "2026-12-02T16:51:25Z", "uptime_secs": 3, "url": "127.0.0.3:41873",
          "pid": 4242, "workdir": "/w", "records_dir": "/w", "formation_id": None,
          "formation_member": None, "formation_entry": None}
RECORD = {"session_id": B, "url": "0.0.0.0:7401", "pid": 77, "process_start": "12345",
          "capsule_name": "coder", "capsule_version": "2.0.0", "workdir": "/srv/w",
          "records_dir": "/srv/w", "outlives_launcher": True,
          "started_at": "2026-12-02T16:00:00Z", "door_token": "rec-token-8c1d2e"}


def test_murmur_tui_ps_json_is_read_and_a_gone_session_is_not_listed() -> None:
    gone = {**PS_ROW, "session_id": B, "status": "gone"}
    listing = parse_listing(json.dumps([PS_ROW, gone]).encode())
    assert listing.sessions == (ListedSession(A, "http://127.0.0.3:41873", "nightly", "asker",
                                       "0.1.0", "2026-12-02T16:51:25Z"),)
    assert listing.problems == ()
    assert parse_listing(b"[]").sessions == () and parse_listing(b"\n").sessions == ()


def test_murmur_running_records_are_read_as_cat_prints_them() -> None:
    pretty = (json.dumps(RECORD, indent=2) + "\n" +
              json.dumps({**RECORD, "session_id": A, "url": "10.0.0.9:7402"}, indent=2) + "\n")
    listing = parse_listing(pretty.encode(), address="build-3")
    assert [(item.session_id, item.url, item.capsule) for item in listing.sessions] == [
        (B, "http://build-3:7401", "coder"), (A, "http://10.0.0.9:7402", "coder")]
    # one a line, or an array: the same
    lines = "\n".join(json.dumps(value) for value in (RECORD, {**RECORD, "session_id": A}))
    assert parse_listing(lines.encode(), "10.1.1.1").sessions == parse_listing(
        json.dumps([RECORD, {**RECORD, "session_id": A}]).encode(), "10.1.1.1").sessions
    # the record's door_token is never used, and never shown from then on
    assert "rec-token-8c1d2e" not in repr(listing) and redact("rec-token-8c1d2e") != \
        "rec-token-8c1d2e"


def test_a_door_on_a_wildcard_address_needs_the_host_address() -> None:
    listing = parse_listing(json.dumps([RECORD, PS_ROW]).encode())
    assert [item.session_id for item in listing.sessions] == [A]
    assert listing.problems == (f"entry 1: {B}: its door is bound to 0.0.0.0: give the host "
                                "an address (fleet.yaml) to reach it",)
    v6 = parse_listing(json.dumps({**RECORD, "url": "[::]:7401"}).encode(), "fd00::7")
    assert v6.sessions[0].url == "http://[fd00::7]:7401"


def test_bad_entries_are_passed_over_by_their_place_and_the_others_listed() -> None:
    entries = [PS_ROW, "text", {"session_id": "../etc"}, {**PS_ROW, "session_id": B,
                                                          "url": "evil.host/path:1"},
               {**PS_ROW, "session_id": B, "url": 7}, {**PS_ROW, "session_id": B,
                                                       "name": "x\x1b]0;t\x07", "url": None}]
    listing = parse_listing(json.dumps(entries).encode())
    assert [(item.session_id, item.url, item.name) for item in listing.sessions] == [
        (A, "http://127.0.0.3:41873", "nightly"), (B, None, "x␛]0;t␇")]
    assert listing.problems == (
        "entry 2: not a JSON object",
        "entry 3: session_id: expected a session id (letters, digits, _ and -)",
        f"entry 4: {B}: url: 'evil.host/path' is neither an IP address nor a host name",
        f"entry 5: {B}: url: expected host:port or null")


@pytest.mark.parametrize(("output", "why"), [
    (b"Welcome to build-3!\n[]", "printed what is not JSON (value 1): Expecting value "
                                 "(column 1)"),
    (b"[" * 5000 + b"]" * 5000, "printed what is not JSON: nested deeper than 127"),
    (b'[{"a": NaN}]', "printed what is not JSON: NaN is not a JSON value"),
    (b"\xff\xfe[]", "printed what is not JSON: not UTF-8 (byte 1)"),
    (b"]", "printed what is not JSON: a bracket closes that was never opened"),
    (b'{"session_id": "x"', "printed what is not JSON: Expecting ',' delimiter (column 19)"),
    (json.dumps([PS_ROW] * 1001).encode(), "lists 1001 sessions; at most 1000 are read"),
], ids=["banner", "deep", "nan", "not-utf8", "stray-bracket", "cut", "too-many"])
def test_output_that_is_not_a_listing_is_refused_with_a_reason(output: bytes, why: str) -> None:
    with pytest.raises(ListingRefused) as refused:
        parse_listing(output)
    assert refused.value.text == why


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400) | st.text(max_size=300).map(str.encode) |
       st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) |
                    st.dictionaries(st.sampled_from(["session_id", "url", "name", "status",
                                                     "capsule_name", "x"]), inner, max_size=5),
                    max_leaves=20).map(lambda value: json.dumps(value).encode()))
def test_any_output_is_a_listing_or_a_reason_never_a_traceback(output: bytes) -> None:
    try:
        listing = parse_listing(output)
    except ListingRefused as refused:
        assert refused.text.isprintable()
        return
    for item in listing.sessions:
        assert item.url is None or item.url.startswith("http://")
        assert all(text.isprintable() for text in (item.name, item.capsule, item.version))
    assert all(problem.isprintable() for problem in listing.problems)


def test_the_command_is_bounded_and_says_why_it_failed(tmp_path: Path) -> None:
    script = tmp_path / "discover.py"
    python = [sys.executable, str(script)]
    script.write_text(f"print({json.dumps(json.dumps([PS_ROW]))})\n")
    assert [item.session_id for item in discover(python).sessions] == [A]
    script.write_text("import sys\nprint('ssh: connect to host build-3 port 22: Connection "
                      "refused\\n', file=sys.stderr)\nsys.exit(255)\n")
    with pytest.raises(HostCommandFailed) as failed:
        discover(python)
    name = Path(sys.executable).name
    assert failed.value.text == (f"{name} exited with status 255: ssh: connect to host "
                                 "build-3 port 22: Connection refused")
    script.write_text("import time\ntime.sleep(30)\n")
    with pytest.raises(HostCommandFailed, match=r"did not finish within 0\.5 s"):
        run_bounded(python, 0.5, 100)
    script.write_text("import sys\nsys.stdout.write('x' * 100000)\n")
    with pytest.raises(HostCommandFailed, match="printed more than 1000 bytes"):
        run_bounded(python, 10, 1000)
    with pytest.raises(HostCommandFailed, match="no-such-program cannot be run: No such file"):
        discover([str(tmp_path / "no-such-program")])


def test_the_back_off_doubles_from_2_s_to_60_s_with_a_tenth_of_jitter() -> None:
    assert [retry_after(n, lambda: 0.0) for n in range(1, 9)] == [2, 4, 8, 16, 32, 60, 60, 60]
    assert [retry_after(n, lambda: 0.999) for n in (1, 6, 10_000)] == pytest.approx(
        [2.1998, 65.994, 65.994])


def test_a_listings_door_tokens_are_kept_out_of_output_but_a_word_is_no_token() -> None:
    """A `mur ps --json` listing's `door_token` is redacted wherever it would show; a short
    value there is no door's token, and taken for one it would shred every URL."""
    token = "mdt1.hK2v9cQ0xYb7Lr4tWm1sZp8nD3fG6jA5eU0iO2yT7uR"
    rows = [{"session_id": "ses_019f00000000000000000000000000c1", "url": "127.0.0.1:7401",
             "door_token": token},
            {"session_id": "ses_019f00000000000000000000000000c2", "url": "127.0.0.1:7402",
             "door_token": "http"}]
    listing = parse_listing(json.dumps(rows).encode())
    assert [found.session_id for found in listing.sessions] == [row["session_id"]
                                                                for row in rows]
    assert redact(f"door http://127.0.0.1:7401 token {token}") == \
        "door http://127.0.0.1:7401 token [redacted]"
