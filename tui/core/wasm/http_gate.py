"""wasi:http for every component, each outgoing request checked against its allow-list.

wasmtime-py 50 offers no hook on outgoing `wasi:http` requests (`Linker.add_wasi_http()` and
`Store.set_wasi_http()` take no settings), and a component names the host it connects to, so a
proxy cannot be imposed on it. murmur-tui therefore shadows one function: the linker holds
wasmtime's own `wasi:http/types` (and its streams, bodies and responses) unchanged, and
`wasi:http/outgoing-handler#handle` — the only way a request leaves — is a Python function.
It reads the request's scheme and authority, checks them against the store's rules
(`net_policy`), and then either hands the very request on to wasmtime's real `handle` or drops
it and returns `HTTP-request-denied`, as Murmur's host does. A refused request is never given
to wasmtime's sender, so none of its bytes reach the network.

Python cannot call wasmtime's `wasi:http/types` methods itself, so a small component written
here (`GATE_WAT`, 2 core instances, 1 memory of one page, no table) is instantiated in the
same store beside the guest: it imports the real `wasi:http` and exports `scheme`,
`authority` (of a borrowed request) and `handle` (wasmtime's, passed through).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import wasmtime
from wasmtime.component import Component, Func, Linker, ResourceAny, Variant

from tui.core.a2a import net_policy
from tui.core.wasm import formation_peers
from tui.core.wasm.formation_peers import SUFFIX, PeerRelay, formation_host

HANDLER = "wasi:http/outgoing-handler@0.2.12"
GATE_INSTANCES = 2  # core instances the gate adds to a store
GATE_MEMORIES = 1

GATE_WAT = """
(component
  (type $types-type (instance
    (export "outgoing-request" (type $req (sub resource)))
    (export "request-options" (type $opts (sub resource)))
    (export "future-incoming-response" (type $fut (sub resource)))
    (type $scheme-t (variant (case "HTTP") (case "HTTPS") (case "other" string)))
    (export "scheme" (type $scheme (eq $scheme-t)))
    (type $dns-t (record (field "rcode" (option string)) (field "info-code" (option u16))))
    (export "DNS-error-payload" (type $dns (eq $dns-t)))
    (type $tls-t (record (field "alert-id" (option u8)) (field "alert-message" (option string))))
    (export "TLS-alert-received-payload" (type $tls (eq $tls-t)))
    (type $fsp-t (record (field "field-name" (option string)) (field "field-size" (option u32))))
    (export "field-size-payload" (type $fsp (eq $fsp-t)))
    (type $error-code-t (variant
      (case "DNS-timeout")
    (case "DNS-error" $dns)
    (case "destination-not-found")
    (case "destination-unavailable")
    (case "destination-IP-prohibited")
    (case "destination-IP-unroutable")
    (case "connection-refused")
    (case "connection-terminated")
    (case "connection-timeout")
    (case "connection-read-timeout")
    (case "connection-write-timeout")
    (case "connection-limit-reached")
    (case "TLS-protocol-error")
    (case "TLS-certificate-error")
    (case "TLS-alert-received" $tls)
    (case "HTTP-request-denied")
    (case "HTTP-request-length-required")
    (case "HTTP-request-body-size" (option u64))
    (case "HTTP-request-method-invalid")
    (case "HTTP-request-URI-invalid")
    (case "HTTP-request-URI-too-long")
    (case "HTTP-request-header-section-size" (option u32))
    (case "HTTP-request-header-size" (option $fsp))
    (case "HTTP-request-trailer-section-size" (option u32))
    (case "HTTP-request-trailer-size" $fsp)
    (case "HTTP-response-incomplete")
    (case "HTTP-response-header-section-size" (option u32))
    (case "HTTP-response-header-size" $fsp)
    (case "HTTP-response-body-size" (option u64))
    (case "HTTP-response-trailer-section-size" (option u32))
    (case "HTTP-response-trailer-size" $fsp)
    (case "HTTP-response-transfer-coding" (option string))
    (case "HTTP-response-content-coding" (option string))
    (case "HTTP-response-timeout")
    (case "HTTP-upgrade-failed")
    (case "HTTP-protocol-error")
    (case "loop-detected")
    (case "configuration-error")
    (case "internal-error" (option string))))
    (export "error-code" (type $error-code (eq $error-code-t)))
    (type $req-b (borrow $req))
    (export "[method]outgoing-request.scheme"
      (func (param "self" $req-b) (result (option $scheme))))
    (export "[method]outgoing-request.authority"
      (func (param "self" $req-b) (result (option string))))
    (export "[method]outgoing-request.path-with-query"
      (func (param "self" $req-b) (result (option string))))
    (export "[method]outgoing-request.set-authority"
      (func (param "self" $req-b) (param "authority" (option string)) (result (result))))
    (export "[method]outgoing-request.set-path-with-query"
      (func (param "self" $req-b) (param "path-with-query" (option string)) (result (result))))
  ))
  (import "wasi:http/types@0.2.12" (instance $types (type $types-type)))
  (alias export $types "outgoing-request" (type $req))
  (alias export $types "request-options" (type $opts))
  (alias export $types "future-incoming-response" (type $fut))
  (alias export $types "error-code" (type $error-code))
  (alias export $types "scheme" (type $scheme))
  (import "wasi:http/outgoing-handler@0.2.12" (instance $handler
    (alias outer 1 $req (type $r))
    (export "outgoing-request" (type $r2 (eq $r)))
    (alias outer 1 $opts (type $o))
    (export "request-options" (type $o2 (eq $o)))
    (alias outer 1 $fut (type $f))
    (export "future-incoming-response" (type $f2 (eq $f)))
    (alias outer 1 $error-code (type $e))
    (export "error-code" (type $e2 (eq $e)))
    (export "handle" (func (param "request" (own $r2)) (param "options" (option (own $o2)))
                           (result (result (own $f2) (error $e2)))))))
  (type $handle-type (func (param "request" (own $req)) (param "options" (option (own $opts)))
                           (result (result (own $fut) (error $error-code)))))

  ;; the memory the canonical ABI reads and writes, and its allocator
  (core module $Mem
    (memory (export "memory") 1)
    (global $next (mut i32) (i32.const 1024))
    (func (export "reset") (global.set $next (i32.const 1024)))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $at i32) (local $end i32)
      (local.set $at (i32.and (i32.add (global.get $next) (i32.sub (local.get 2) (i32.const 1)))
                              (i32.sub (i32.const 0) (local.get 2))))
      (local.set $end (i32.add (local.get $at) (local.get 3)))
      (if (i32.gt_u (local.get $end) (i32.mul (memory.size) (i32.const 65536)))
        (then
          (if (i32.eq (memory.grow (i32.shr_u (i32.add (i32.sub (local.get $end)
                                                  (i32.mul (memory.size) (i32.const 65536)))
                                                  (i32.const 65535)) (i32.const 16)))
                      (i32.const -1))
            (then unreachable))))
      (global.set $next (local.get $end))
      (local.get $at)))
  (core instance $mem (instantiate $Mem))
  (alias core export $mem "memory" (core memory $memory))
  (alias core export $mem "realloc" (core func $realloc))
  (alias core export $mem "reset" (core func $reset))

  (alias export $types "[method]outgoing-request.scheme" (func $scheme))
  (alias export $types "[method]outgoing-request.authority" (func $authority))
  (alias export $types "[method]outgoing-request.path-with-query" (func $path))
  (alias export $types "[method]outgoing-request.set-authority" (func $set-authority))
  (alias export $types "[method]outgoing-request.set-path-with-query" (func $set-path))
  (alias export $handler "handle" (func $handle))
  (core func $scheme-lowered (canon lower (func $scheme) (memory $memory) (realloc $realloc)))
  (core func $authority-lowered (canon lower (func $authority) (memory $memory) (realloc $realloc)))
  (core func $path-lowered (canon lower (func $path) (memory $memory) (realloc $realloc)))
  (core func $set-authority-lowered (canon lower (func $set-authority) (memory $memory)))
  (core func $set-path-lowered (canon lower (func $set-path) (memory $memory)))
  (core func $handle-lowered (canon lower (func $handle) (memory $memory) (realloc $realloc)))
  ;; a borrowed handle lent to an export is dropped before it returns
  (core func $drop-request (canon resource.drop $req))

  (core module $Main
    (import "host" "scheme" (func $scheme (param i32 i32)))
    (import "host" "authority" (func $authority (param i32 i32)))
    (import "host" "handle" (func $handle (param i32 i32 i32 i32)))
    (import "host" "path" (func $path (param i32 i32)))
    (import "host" "set-authority" (func $set-authority (param i32 i32 i32 i32) (result i32)))
    (import "host" "set-path" (func $set-path (param i32 i32 i32 i32) (result i32)))
    (import "host" "reset" (func $reset))
    (import "host" "drop-request" (func $drop-request (param i32)))
    (func (export "scheme") (param i32) (result i32)
      (call $reset) (call $scheme (local.get 0) (i32.const 16))
      (call $drop-request (local.get 0)) (i32.const 16))
    (func (export "authority") (param i32) (result i32)
      (call $reset) (call $authority (local.get 0) (i32.const 48))
      (call $drop-request (local.get 0)) (i32.const 48))
    (func (export "path") (param i32) (result i32)
      (call $reset) (call $path (local.get 0) (i32.const 48))
      (call $drop-request (local.get 0)) (i32.const 48))
    ;; the string a setter is given was lifted into this memory just before the call
    (func (export "set-authority") (param i32 i32 i32 i32) (result i32)
      (local $r i32)
      (local.set $r (call $set-authority (local.get 0) (local.get 1) (local.get 2) (local.get 3)))
      (call $drop-request (local.get 0)) (call $reset) (local.get $r))
    (func (export "set-path") (param i32 i32 i32 i32) (result i32)
      (local $r i32)
      (local.set $r (call $set-path (local.get 0) (local.get 1) (local.get 2) (local.get 3)))
      (call $drop-request (local.get 0)) (call $reset) (local.get $r))
    (func (export "handle") (param i32 i32 i32) (result i32)
      (call $reset) (call $handle (local.get 0) (local.get 1) (local.get 2) (i32.const 64))
      (i32.const 64)))
  (core instance $main (instantiate $Main
    (with "host" (instance
      (export "scheme" (func $scheme-lowered))
      (export "authority" (func $authority-lowered))
      (export "handle" (func $handle-lowered))
      (export "path" (func $path-lowered))
      (export "set-authority" (func $set-authority-lowered))
      (export "set-path" (func $set-path-lowered))
      (export "reset" (func $reset))
      (export "drop-request" (func $drop-request))))))

  (type $req-borrow (borrow $req))
  (func (export "scheme") (param "request" $req-borrow) (result (option $scheme))
    (canon lift (core func $main "scheme") (memory $memory)))
  (func (export "authority") (param "request" $req-borrow) (result (option string))
    (canon lift (core func $main "authority") (memory $memory)))
  (func (export "path") (param "request" $req-borrow) (result (option string))
    (canon lift (core func $main "path") (memory $memory)))
  (func (export "set-authority") (param "request" $req-borrow) (param "value" (option string))
                                 (result (result))
    (canon lift (core func $main "set-authority") (memory $memory) (realloc $realloc)))
  (func (export "set-path") (param "request" $req-borrow) (param "value" (option string))
                            (result (result))
    (canon lift (core func $main "set-path") (memory $memory) (realloc $realloc)))
  (func (export "handle") (type $handle-type)
    (canon lift (core func $main "handle") (memory $memory)))
)
"""


@dataclass
class Policy:
    """One store's rules, the gate's functions in that store, and where refusals are told."""

    rules: tuple[net_policy.Rule, ...]
    refused: Callable[[str], None]
    peers: PeerRelay | None = None  # a formation member's callees (formation_peers.py)
    scheme: Func | None = None
    authority: Func | None = None
    forward: Func | None = None
    path: Func | None = None
    set_authority: Func | None = None
    set_path: Func | None = None

    @property
    def localhost(self) -> bool:
        """The allow-list names `localhost` (a formation member's doors are reached there)."""
        return any(rule.host == "localhost" for rule in self.rules)


_POLICIES: dict[int, Policy] = {}
_LOCK = threading.Lock()
_DENIED = Variant("HTTP-request-denied")


def _key(store: Any) -> int:
    address = ctypes.cast(store._context(), ctypes.c_void_p).value
    return int(address or 0)


def _scheme_name(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, Variant):
        if value.tag == "other":
            return str(value.payload)
        return value.tag.lower()
    return str(value).lower()


def _handle(store: Any, request: ResourceAny, options: ResourceAny | None) -> Any:
    with _LOCK:
        policy = _POLICIES.get(_key(store))
    if policy is not None and policy.scheme and policy.authority and policy.forward:
        scheme = _scheme_name(policy.scheme(store, request))
        authority = policy.authority(store, request)
        to = net_policy.target(scheme, authority)
        member = formation_host(to.host) if to is not None else None
        if to is not None and member is not None:
            why = formation_peers.refusal(policy.peers.names if policy.peers else (), member,
                                          to.scheme, to.port, policy.localhost)
            if why is None and _to_peer(store, request, policy, member):
                return policy.forward(store, request, options)
            policy.refused(why or f"network policy: the request to {member}{SUFFIX} could "
                                  "not be pointed at its door")
        elif net_policy.allowed(policy.rules, to):
            return policy.forward(store, request, options)
        else:
            policy.refused(net_policy.refusal(to, authority))
    request.drop(store)
    if options is not None:
        options.drop(store)
    return _DENIED


def _to_peer(store: Any, request: ResourceAny, policy: Policy, member: str) -> bool:
    """Point the request at the relay that carries it to `member`'s door (False: it could
    not be rewritten)."""
    if not (policy.peers and policy.path and policy.set_path and policy.set_authority):
        return False
    authority, path = policy.peers.target(member, policy.path(store, request))
    for setter, value in ((policy.set_path, path), (policy.set_authority, authority)):
        try:
            setter(store, request, value)
        except wasmtime.WasmtimeError:
            return False
    return True


def define(linker: Linker) -> None:
    """wasi:http on `linker` (after `add_wasi_http`), with `handle` checked per request."""
    linker.allow_shadowing = True
    try:
        with linker.root() as root, root.add_instance(HANDLER) as handler:
            handler.add_func("handle", _handle)
    finally:
        linker.allow_shadowing = False


class Gate:
    """The gate component, compiled once per engine; `attach` puts it into a store."""

    def __init__(self, engine: wasmtime.Engine) -> None:
        self.component = Component(engine, GATE_WAT)
        self.linker = Linker(engine)
        self.linker.add_wasi_http()

    def attach(self, store: wasmtime.Store, policy: Policy) -> None:
        instance = self.linker.instantiate(store, self.component)

        def func(name: str) -> Func:
            index = instance.get_export_index(store, name)
            found = instance.get_func(store, index) if index is not None else None
            if found is None:
                raise RuntimeError(f"the http gate does not export {name}")
            return found

        policy.scheme, policy.authority, policy.forward = (
            func("scheme"), func("authority"), func("handle"))
        policy.path, policy.set_authority, policy.set_path = (
            func("path"), func("set-authority"), func("set-path"))
        with _LOCK:
            _POLICIES[_key(store)] = policy

    @staticmethod
    def detach(store: wasmtime.Store) -> None:
        with _LOCK:
            _POLICIES.pop(_key(store), None)
