"""Formation tokens (spec murmur-newest §7.5): `mft1.<payload>.<signature>`, one per edge, the
payload `{"formation": "frm_…", "from": "<member>", "to": "<member>"}` signed with the launcher's
Ed25519 key. The launcher holds the signing half in memory only; members' doors get the verifying
half (`verify_key`, base64url) on their seat. `cryptography` is imported only when a key is made.

A token is a credential: nothing here prints, logs or returns one except to its holder.
"""

from __future__ import annotations

import base64
import json
from typing import Any

PREFIX = "mft1"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def new_keys() -> tuple[Any, str]:
    """A fresh signing key (kept by the launcher) and its verifying half, base64url."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    signing = Ed25519PrivateKey.generate()
    raw = signing.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return signing, _b64(raw)


def mint(signing: Any, formation_id: str, caller: str, callee: str) -> str:
    """The token for the edge `caller` → `callee` of `formation_id`."""
    payload = json.dumps({"formation": formation_id, "from": caller, "to": callee},
                         separators=(",", ":")).encode("utf-8")
    body = f"{PREFIX}.{_b64(payload)}"
    return f"{body}.{_b64(signing.sign(body.encode('ascii')))}"
