"""The top-level `network:` block -> `Network`: `authentication` (the door's bearer tokens;
Murmur's manifest.md `network.authentication`, agent-card.md "Security").

    network:
      authentication:
        scheme: bearer
        credentials:
          watcher:
            scopes: [stream/watch, GetTask]

A credential is written as `name: {scopes: [...]}`, `name: [...]`, or as a list of
`{name, scopes}`. Scopes are the door's A2A 1.0 method names (and `resources/files`); an A2A 0.3
name is refused with the name it became. `internal_port` is Murmur's and is accepted: the
door's address is `launch --serve`'s.
"""

from __future__ import annotations

from typing import Any

from tui.core.manifest.model import (
    A2A_03_SCOPES,
    AUTH_SCHEMES,
    DOOR_SCOPES,
    OPERATOR,
    Authentication,
    DoorCredential,
    DoorScope,
    Network,
)
from tui.core.manifest.problems import describe
from tui.core.manifest.yaml_section import MISSING, Section, one_of


def read_network(section: Section | None) -> Network:
    if section is None:
        return Network()
    authentication = read_authentication(section.section("authentication"))
    section.mark_known("internal_port")
    section.finish()
    return Network(authentication=authentication)


def read_authentication(section: Section | None) -> Authentication | None:
    if section is None:
        return None
    scheme = section.raw("scheme")
    if scheme is MISSING:
        section.problem("scheme", f"is required but missing (the one scheme a door takes: "
                        f"{', '.join(AUTH_SCHEMES)})")
    elif one_of(scheme, AUTH_SCHEMES) is None:
        section.problem("scheme", f"expected one of {', '.join(AUTH_SCHEMES)} (the one scheme "
                        f"a door takes); got {describe(scheme)}")
    credentials = _read_credentials(section)
    section.finish()
    return Authentication(credentials=credentials)


def _read_credentials(section: Section) -> tuple[DoorCredential, ...]:
    value = section.raw("credentials")
    if value is MISSING or value is None:
        return ()
    found: list[DoorCredential] = []
    scopes: tuple[DoorScope, ...] | None
    if isinstance(value, list):
        for item in section.items("credentials"):
            name = item.string("name", "", required=True)
            scopes = _scopes(item, "scopes", item.raw("scopes"))
            item.finish()
            _add(found, item, "name", name, scopes)
        return tuple(found)
    block = section.section("credentials")
    if block is None:  # not a mapping: already reported
        return ()
    for name, entry in block.data.items():
        if isinstance(entry, dict):
            inner = block.section(str(name))
            scopes = _scopes(inner, "scopes", inner.raw("scopes")) if inner else None
            if inner is not None:
                inner.finish()
        else:
            block.mark_known(str(name))
            scopes = _scopes(block, name, entry)
        _add(found, block, name, name, scopes)
    return tuple(found)


def _add(found: list[DoorCredential], section: Section, key: Any, name: Any,
         scopes: tuple[DoorScope, ...] | None) -> None:
    if not isinstance(name, str) or not name.strip():
        if name != "":  # a missing name was reported as required
            section.problem(key, f"a credential's name must be a non-empty string, got "
                            f"{describe(name)}")
        return
    if name == OPERATOR:
        section.problem(key, f"{OPERATOR!r} is the credential every authenticated door mints "
                        "with every scope; name this one otherwise")
        return
    if any(not char.isprintable() for char in name):
        section.problem(key, f"{describe(name)}: a credential's name must be printable text")
        return
    if any(item.name == name for item in found):
        section.problem(key, f"{describe(name)} is declared twice")
        return
    if scopes is not None:
        found.append(DoorCredential(name, scopes))


def _scopes(section: Section, key: Any, value: Any) -> tuple[DoorScope, ...] | None:
    """The scopes at `key` (a list of the door's method names); None after a problem."""
    where = "scopes" if key == "scopes" else key
    if value is MISSING:
        section.problem(where, "is required but missing (a list of the door methods this "
                        "credential reaches)")
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        shown = describe(value) if not isinstance(value, list) else \
            describe(next(item for item in value if not isinstance(item, str)))
        section.problem(where, f"expected a list of door method names, got {shown}")
        return None
    scopes: list[DoorScope] = []
    for item in value:
        scope = one_of(item, DOOR_SCOPES)
        if scope is None:
            newer = A2A_03_SCOPES.get(item)
            hint = f"; this door speaks A2A 1.0, write {newer}" if newer else \
                f" (scopes: {', '.join(DOOR_SCOPES)})"
            section.problem(where, f"{describe(item)} is not a scope{hint}")
            return None
        if scope not in scopes:
            scopes.append(scope)
    return tuple(scopes)
