"""Door tokens in running records, where Murmur keeps them (v0.5.0 onward): a door that
authenticates has its operator token in the record's `door_token` and one token per declared
credential in the record's `credentials`; the record (0600) is the only place a session writes
a token. A `<session_id>.token` file beside a record (mode 0600) is what murmur-tui wrote before
its records held the token: it is still read for the operator's token when the record has none,
and removed with the record, but no session writes it now. Every file is read the one way
running records are (tui/core/running/records.py: no link followed, this user's, 0600,
bounded); a token is remembered by the one redaction as soon as it is read.
"""

from __future__ import annotations

from pathlib import Path

from tui.core.running.address import door_host_port, token_problem
from tui.core.running.records import (
    RunningRecord,
    read_private,
    read_records,
    token_path,
    write_private,
)
from tui.core.text.secrets import remember

MAX_TOKEN_BYTES = 4096
OPERATOR = "operator"  # the credential holding every scope: the record's `door_token`
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def write_token(home: Path, session_id: str, token: str) -> Path:
    """Write an operator token to `<session_id>.token` beside its record, mode 0600: the file
    earlier murmur-tui sessions wrote (a session writes its token into its record now)."""
    path = token_path(home, session_id)
    write_private(path, token + "\n")
    return path


def read_token(home: Path, record: RunningRecord, credential: str = OPERATOR) -> str | None:
    """The token of `credential` for the record's door: the operator's is the record's
    `door_token`, else its `<session_id>.token` file; another's is the record's
    `credentials[name]`. None when there is none (or the file is not a private regular file of
    this user's, or the token could not go in an HTTP header)."""
    if credential != OPERATOR:
        token = record.credentials.get(credential)
    elif record.door_token:
        token = record.door_token
    else:
        data, _problem = read_private(token_path(home, record.session_id), MAX_TOKEN_BYTES)
        token = data.decode("utf-8", "replace").strip() if data is not None else None
    if not token or token_problem(token) is not None:
        return None
    remember(token)  # never shown, in any encoding
    return token


def credential_names(home: Path, record: RunningRecord) -> list[str]:
    """The credentials a record's session minted and the record holds, operator first."""
    names = [OPERATOR] if read_token(home, record) is not None else []
    return names + sorted(name for name in record.credentials
                          if name != OPERATOR and read_token(home, record, name) is not None)


def token_at(home: Path, host: str, port: int) -> str | None:
    """The operator token of the running session whose door is at `host:port` (`localhost`,
    `127.0.0.1` and `[::1]` count as one host): the first record, newest first, naming that
    address and holding a token. Files that are not records are passed over."""
    for found in read_records(home):
        record = found.record
        if record is None or record.url is None:
            continue
        try:
            at, at_port = door_host_port(record.url)
        except ValueError:
            continue
        same = at == host or (at in LOOPBACK and host in LOOPBACK)
        if same and at_port == port:
            token = read_token(home, record)
            if token is not None:
                return token
    return None
