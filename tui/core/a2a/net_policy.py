"""`capabilities.network.allow`: its entries as rules, and whether a request's target matches.

As Murmur reads them: an entry is `scheme://host[:port]` (http or https; no path, query or
fragment; the scheme's default port when none is given) or `host[:port]` (any scheme; any
port when none is given). Hosts compare case-insensitively and exactly — `example.com` does not
cover `api.example.com`. A request's target is its scheme (https when it names none), its
host and its port (the scheme's default when it names none).

An entry's own `network.allow` is clamped to the capsule's: an entry rule no capsule rule
covers is dropped, never granted (a bare `example.com` is not covered by `https://example.com`,
which is narrower). An entry without its own list gets the capsule's.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui.core.errors import NetworkAllowError

DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int | None

    def __str__(self) -> str:
        port = f":{self.port}" if self.port is not None else ""
        return f"{self.scheme}://{self.host}{port}"


@dataclass(frozen=True)
class Rule:
    scheme: str | None
    host: str
    port: int | None
    entry: str

    def matches(self, target: Target) -> bool:
        return (self.host == target.host
                and (self.scheme is None or self.scheme == target.scheme)
                and (self.port is None or self.port == target.port))

    def covers(self, narrower: Rule) -> bool:
        """Whether this (capsule-wide) rule already permits all that `narrower` permits."""
        return (self.host == narrower.host
                and (self.scheme is None or narrower.scheme == self.scheme)
                and (self.port is None or narrower.port == self.port))


def _split_authority(authority: str) -> tuple[str, int | None] | None:
    """(host, port) of `host[:port]` / `[v6][:port]`, lower-cased; None when malformed."""
    authority = authority.rsplit("@", 1)[-1]
    if authority.startswith("["):
        close = authority.find("]")
        if close < 0:
            return None
        host, rest = authority[:close + 1], authority[close + 1:]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    else:
        host, _, port_text = authority.partition(":")
        if ":" in port_text:
            return None
        port_text = port_text if ":" in authority else None
    if not host or any(c in host for c in "/?#\\ \t") :
        return None
    if port_text is None:
        return host.lower(), None
    if not port_text.isascii() or not port_text.isdigit() or int(port_text) > 65535:
        return None
    return host.lower(), int(port_text)


def parse_rule(entry: str, where: str = "capabilities.network.allow") -> Rule:
    text = entry.strip()
    if not text:
        raise NetworkAllowError(f"{where}: an entry must not be empty")
    scheme: str | None = None
    rest = text
    if "://" in text:
        scheme, rest = text.split("://", 1)
        scheme = scheme.lower()
        if scheme not in DEFAULT_PORTS:
            raise NetworkAllowError(f"{where}: {entry!r}: unsupported URL scheme {scheme!r} "
                                    "(expected http or https)")
        if rest.endswith("/"):
            rest = rest[:-1]
    if any(c in rest for c in "/?#"):
        raise NetworkAllowError(f"{where}: {entry!r}: an entry is host, host:port or "
                                "scheme://host[:port], without a path, query or fragment")
    split = _split_authority(rest) if "@" not in rest else None
    if split is None:
        raise NetworkAllowError(f"{where}: {entry!r} is not a host, host:port or "
                                "scheme://host[:port]")
    host, port = split
    if scheme is not None and port is None:
        port = DEFAULT_PORTS[scheme]
    return Rule(scheme, host, port, text)


def parse_rules(entries: tuple[str, ...], where: str = "capabilities.network.allow"
                ) -> tuple[Rule, ...]:
    return tuple(parse_rule(entry, where) for entry in entries)


def effective(capsule_allow: tuple[str, ...], entry_allow: tuple[str, ...] | None,
              entry_name: str | None = None) -> tuple[tuple[Rule, ...], tuple[str, ...]]:
    """The rules one component's requests are checked against, and the entry's entries
    dropped because no capsule rule covers them. `entry_allow` None: the entry declared no
    list and inherits the capsule's; an empty one allows nothing."""
    ceiling = parse_rules(capsule_allow)
    if entry_allow is None:  # the entry declares no list: the capsule's
        return ceiling, ()
    if not entry_allow:  # `allow: []`: no network at all, as in Murmur
        return (), ()
    where = f"artifacts[{entry_name}].capabilities.network.allow" if entry_name else \
        "capabilities.network.allow"
    kept: list[Rule] = []
    dropped: list[str] = []
    for rule in parse_rules(entry_allow, where):
        if any(top.covers(rule) for top in ceiling):
            kept.append(rule)
        else:
            dropped.append(rule.entry)
    return tuple(kept), tuple(dropped)


def target(scheme: str | None, authority: str | None) -> Target | None:
    """A request's target from its scheme (None: https) and authority; None when it has no
    readable authority (such a request is refused)."""
    if authority is None:
        return None
    split = _split_authority(authority)
    if split is None:
        return None
    name = (scheme or "https").lower()
    host, port = split
    return Target(name, host, port if port is not None else DEFAULT_PORTS.get(name))


def allowed(rules: tuple[Rule, ...], to: Target | None) -> bool:
    return to is not None and any(rule.matches(to) for rule in rules)


def refusal(to: Target | None, authority: str | None) -> str:
    """Murmur's words for a refused request (the guest itself gets `HTTP-request-denied`)."""
    shown = str(to) if to is not None else (authority or "a request without an authority")
    return f"network policy: '{shown}' not in capabilities.network.allow"
