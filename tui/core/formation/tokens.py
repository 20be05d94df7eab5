"""Formation tokens (spec murmur-newest §7.5): one per roster edge, signed by the launcher with an
Ed25519 key that lives only in the launcher's memory; each member's door holds only the
verifying half and checks the tokens its callers present.

    signing, verify_key = new_keys()          # the launcher, once per launch
    token = mint(signing, "frm_…", "lead", "coder")
    claims = verify(token, verify_key)       # the door: Claims(formation, caller, callee)

A token reads `mft1.<payload>.<signature>`: the payload is base64url (no padding) of the JSON
object `{"formation": "frm_…", "from": "<member>", "to": "<member>"}`, the signature base64url of
the Ed25519 signature over the payload part's bytes. No expiry, no rotation: a new launch has a
new key. `verify` refuses (`TokenRefused`) anything malformed or not signed by the key, in words
that never hold a byte of the token.

The `cryptography` package is imported inside the functions that sign and verify, so a start of
murmur-tui that serves no formation never loads it (docs/formations.md "Formation tokens").
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui.core.errors import TokenRefused
from tui.core.formation.roster import MEMBER_NAME
from tui.core.ids import FORMATION_ID

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

PREFIX = "mft1"
MAX_TOKEN = 1024  # characters: a real token is about 250; a longer one is refused unread
SIGNATURE_BYTES = 64
KEY_BYTES = 32
_B64URL = re.compile(r"[A-Za-z0-9_-]+")
_FIELDS = ("formation", "from", "to")


class SigningKey:
    """The launcher's signing key: held in memory, never written, printed or sent."""

    __slots__ = ("_key",)

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key

    def sign(self, data: bytes) -> bytes:
        return self._key.sign(data)

    def __repr__(self) -> str:
        return "SigningKey(…)"


@dataclass(frozen=True)
class Claims:
    formation: str  # frm_…
    caller: str  # the member the token lets call (`from`)
    callee: str  # the member whose door takes it (`to`)


def new_keys() -> tuple[SigningKey, str]:
    """A fresh signing key, and the base64url of its verifying half (what the doors get)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    key = Ed25519PrivateKey.generate()
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return SigningKey(key), _encode(public)


def mint(signing: SigningKey, formation_id: str, caller: str, callee: str) -> str:
    """The token for the edge `caller` → `callee` of `formation_id`."""
    if not FORMATION_ID.fullmatch(formation_id):
        raise ValueError("a formation token needs a frm_ formation id")
    if not (MEMBER_NAME.fullmatch(caller) and MEMBER_NAME.fullmatch(callee)):
        raise ValueError("a formation token names two roster members")
    payload = json.dumps({"formation": formation_id, "from": caller, "to": callee},
                         separators=(",", ":"))
    part = _encode(payload.encode())
    return f"{PREFIX}.{part}.{_encode(signing.sign(part.encode()))}"


def verify(token: str, verify_key_b64: str) -> Claims:
    """What a token signed by the key behind `verify_key_b64` claims; TokenRefused for a token
    that is malformed, not signed by that key, or whose payload is not a formation edge."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    key_bytes = _decode(verify_key_b64) if isinstance(verify_key_b64, str) else None
    if key_bytes is None or len(key_bytes) != KEY_BYTES:
        raise TokenRefused("the formation's verifying key is not an Ed25519 key")
    if not isinstance(token, str) or len(token) > MAX_TOKEN:
        raise TokenRefused("not a formation token")
    pieces = token.split(".")
    if len(pieces) != 3 or pieces[0] != PREFIX:
        raise TokenRefused("not a formation token (mft1.<payload>.<signature>)")
    payload, signature = _decode(pieces[1]), _decode(pieces[2])
    if payload is None or signature is None or len(signature) != SIGNATURE_BYTES:
        raise TokenRefused("the formation token is not base64url")
    try:
        Ed25519PublicKey.from_public_bytes(key_bytes).verify(signature, pieces[1].encode())
    except (InvalidSignature, ValueError):
        raise TokenRefused("the formation token is not signed by this formation") from None
    return _claims(payload)


def _claims(payload: bytes) -> Claims:
    """The payload of a well-signed token: exactly the three fields, each well-formed."""
    try:
        data = json.loads(payload)
    except ValueError:
        raise TokenRefused("the formation token's payload is not JSON") from None
    if not isinstance(data, dict) or sorted(data) != sorted(_FIELDS) or \
            not all(isinstance(data[key], str) for key in _FIELDS):
        raise TokenRefused("the formation token's payload is not a formation edge")
    if not FORMATION_ID.fullmatch(data["formation"]) or \
            not MEMBER_NAME.fullmatch(data["from"]) or not MEMBER_NAME.fullmatch(data["to"]):
        raise TokenRefused("the formation token's payload is not a formation edge")
    return Claims(data["formation"], data["from"], data["to"])


def _encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _decode(text: str) -> bytes | None:
    """base64url without padding, canonical only (one spelling per byte string), else None."""
    if not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        return None
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
    return data if _encode(data) == text else None
