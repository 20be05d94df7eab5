"""The one redaction: a key in any form it can take on its way out never survives."""

from __future__ import annotations

import base64
import binascii
import json
import re
from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from tui.core.text.secrets import (
    REDACTED,
    ByteStreamRedactor,
    Secrets,
    StreamRedactor,
    credential_shaped,
)

KEY = "sk-live-Zq8/+w==x7Yb3Kd9Pq2Lm5"


def registry() -> Secrets:
    secrets = Secrets()
    secrets.add(KEY)
    return secrets


def leaks(text: str) -> list[str]:
    """The forms of KEY still present in `text`."""
    data = KEY.encode()
    forms = {"raw": KEY, "url": quote(KEY, safe=""), "hex": binascii.hexlify(data).decode(),
             "json": json.dumps(KEY)[1:-1]}
    for prefix in ("", "x", "xy", "Bearer "):
        encoded = base64.b64encode((prefix + KEY).encode()).decode()
        forms[f"b64+{len(prefix)}"] = encoded[len(encoded) // 4: -8]  # the key's middle
        forms[f"b64url+{len(prefix)}"] = forms[f"b64+{len(prefix)}"].translate(
            str.maketrans("+/", "-_"))
    return [name for name, form in forms.items() if form and form in text]


def test_every_form_of_the_key_is_replaced() -> None:
    secrets = registry()
    for prefix in ("", "x", "xy", "Bearer "):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = f"token {encode((prefix + KEY + 'tail').encode()).decode()} end"
            assert leaks(secrets.redact(text)) == [], text
    lower_hex = re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(KEY, safe=""))
    for text in (f"bad key {KEY}", quote(KEY, safe=""), lower_hex,
                 KEY.encode().hex(), KEY.encode().hex().upper(), json.dumps({"k": KEY})):
        redacted = secrets.redact(text)
        assert REDACTED in redacted and leaks(redacted) == [], text


def test_auth_header_values_are_replaced_even_for_unknown_keys() -> None:
    secrets = Secrets()
    assert secrets.redact("Authorization: Bearer abc.def") == "Authorization: Bearer [redacted]"
    assert secrets.redact('{"x-api-key": "k-1"}') == '{"x-api-key": "[redacted]"}'
    assert secrets.redact("authorization failed") == "authorization failed"


def test_values_are_redacted_deep_and_untouched_values_are_kept() -> None:
    secrets = registry()
    value = {"a": [KEY, 1, ("ok", KEY)], "b": "fine"}
    assert secrets.redact_value(value) == {"a": [REDACTED, 1, ("ok", REDACTED)], "b": "fine"}
    clean = {"a": ["x"]}
    assert secrets.redact_value(clean) is clean


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=40),
       st.text(alphabet="ab s-k", max_size=20))
def test_a_key_split_across_pieces_is_still_caught(cuts: list[int], filler: str) -> None:
    secrets = registry()
    text = f"{filler}{KEY}{filler} and {KEY}"
    pieces, at = [], 0
    for size in cuts:
        pieces.append(text[at:at + size])
        at += size
    pieces.append(text[at:])
    stream = StreamRedactor(secrets)
    out = "".join(stream.feed(piece) for piece in pieces) + stream.flush()
    assert KEY not in out and out.count(REDACTED) == 2
    assert out.replace(REDACTED, KEY) == text
    data = text.encode()
    raw = ByteStreamRedactor(secrets)
    sent = b"".join(raw.feed(data[i:i + 5]) for i in range(0, len(data), 5)) + raw.flush()
    assert KEY.encode() not in sent and sent.count(REDACTED.encode()) == 2


def test_credential_shaped_names_follow_murmurs_rule() -> None:
    for name in ("OPENAI_API_KEY", "STRIPE_API_KEY", "AWS_REGION", "GITHUB_TOKEN",
                 "slack_token", "DB_PASSWORD", "APP_SECRET", "KUBECONFIG"):
        assert credential_shaped(name), name
    for name in ("HOME", "PATH", "LANG", "MURMUR_SESSION_ID", "TOKENIZER"):
        assert not credential_shaped(name), name
    assert credential_shaped("MYCOMPANY_X", extra=("MYCOMPANY_*",))
