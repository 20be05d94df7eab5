"""Formation tokens: what a launcher mints a door accepts, and nothing else does."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.core.errors import TokenRefused
from tui.core.formation.tokens import Claims, mint, new_keys, verify
from tui.core.ids import formation_id

FRM = formation_id()
SIGNING, KEY = new_keys()
TOKEN = mint(SIGNING, FRM, "lead", "coder")


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_a_minted_token_reads_back_as_its_edge() -> None:
    assert verify(TOKEN, KEY) == Claims(FRM, "lead", "coder")
    prefix, payload, signature = TOKEN.split(".")
    assert prefix == "mft1"
    assert json.loads(unb64(payload)) == {"formation": FRM, "from": "lead", "to": "coder"}
    assert len(unb64(signature)) == 64
    assert len(unb64(KEY)) == 32
    assert "=" not in TOKEN and "=" not in KEY


def test_each_launch_has_its_own_key() -> None:
    other_signing, other_key = new_keys()
    assert other_key != KEY
    with pytest.raises(TokenRefused, match="not signed by this formation"):
        verify(mint(other_signing, FRM, "lead", "coder"), KEY)


def test_a_payload_changed_after_signing_is_refused() -> None:
    prefix, _, signature = TOKEN.split(".")
    changed = b64(json.dumps({"formation": FRM, "from": "lead", "to": "reviewer"}).encode())
    with pytest.raises(TokenRefused, match="not signed"):
        verify(f"{prefix}.{changed}.{signature}", KEY)


def test_a_signed_payload_that_is_not_an_edge_is_refused() -> None:
    # signed by the real key (as a launcher gone wrong could), yet not a formation edge
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    private = Ed25519PrivateKey.generate()
    key = b64(private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
    for payload in (b"not json", b"[]", json.dumps({"formation": FRM, "from": "lead"}).encode(),
                    json.dumps({"formation": "frm_x", "from": "lead", "to": "b"}).encode(),
                    json.dumps({"formation": FRM, "from": "Lead", "to": "b"}).encode(),
                    json.dumps({"formation": FRM, "from": "a", "to": "b", "x": 1}).encode()):
        part = b64(payload)
        token = f"mft1.{part}.{b64(private.sign(part.encode()))}"
        with pytest.raises(TokenRefused, match="payload"):
            verify(token, key)


MALFORMED: dict[str, Callable[[str], str]] = {
    "empty": lambda t: "", "prefix only": lambda t: "mft1", "empty parts": lambda t: "mft1..",
    "another version": lambda t: "mft2." + t[5:], "four parts": lambda t: t + ".x",
    "padded": lambda t: t + "=", "signature cut": lambda t: t[:-2],
    "empty part": lambda t: t.replace(".", "..", 1), "leading space": lambda t: " " + t,
    "trailing newline": lambda t: t + "\n", "with its scheme": lambda t: "Bearer " + t,
    "too long": lambda t: "x" * 5000}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_tokens_are_refused(name: str) -> None:
    with pytest.raises(TokenRefused):
        verify(MALFORMED[name](TOKEN), KEY)


def test_a_bad_verifying_key_is_refused_not_crashed() -> None:
    for key in ("", "not base64!", b64(b"short"), KEY + "A"):
        with pytest.raises(TokenRefused, match="verifying key"):
            verify(TOKEN, key)


def test_mint_refuses_what_is_not_an_edge() -> None:
    with pytest.raises(ValueError):
        mint(SIGNING, "frm_nope", "lead", "coder")
    with pytest.raises(ValueError):
        mint(SIGNING, FRM, "Lead", "coder")


def test_no_token_or_key_byte_in_what_is_said() -> None:
    assert "Ed25519" not in repr(SIGNING) and repr(SIGNING) == "SigningKey(…)"
    forged = TOKEN[:-4] + ("AAAA" if not TOKEN.endswith("AAAA") else "BBBB")
    with pytest.raises(TokenRefused) as refused:
        verify(forged, KEY)
    said = str(refused.value)
    for piece in [*forged.split(".")[1:], KEY]:
        assert piece not in said


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_text_is_refused_or_is_a_real_token(text: str) -> None:
    try:
        claims = verify(text, KEY)
    except TokenRefused:
        return
    assert claims == Claims(FRM, "lead", "coder")  # only the minted token reads


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=len(TOKEN) - 1),
       st.sampled_from("ABCDEFabcdef0189-_.=+/ é"))
def test_one_character_changed_is_refused(at: int, char: str) -> None:
    token = TOKEN[:at] + char + TOKEN[at + 1:]
    if token == TOKEN:
        return
    with pytest.raises(TokenRefused):
        verify(token, KEY)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200), st.binary(max_size=80))
def test_random_parts_are_refused(payload: bytes, signature: bytes) -> None:
    with pytest.raises(TokenRefused):
        verify(f"mft1.{b64(payload)}.{b64(signature)}", KEY)


def test_starting_murmur_tui_does_not_load_cryptography() -> None:
    code = ("import sys, tui.commands.main; "
            "print(sorted(m for m in sys.modules if m.startswith('cryptography')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
