;; http_capsule -- a script capsule (exports murmur:capsule/run@0.1.0) that makes three plain
;; GET requests with wasi:http@0.2.12. Built by tests/e2e/test_wasm_http_policy.py with
;; wasmtime's WAT parser, the error-code cases filled in from the gate's.
;;
;; run():
;;   1. GET http://$HTTP_REFUSED/refused  -> remembers whether handle() returned
;;      err(HTTP-request-denied)
;;   2. GET http://$HTTP_ALLOWED/saw-denied (or /saw-other) and waits for the response
;;   3. GET http://$HTTP_ALLOWED/status-200 (or /status-other) after reading its status
(component
  (import "wasi:io/poll@0.2.12" (instance $poll
    (export "pollable" (type $p (sub resource)))
    (export "[method]pollable.block" (func (param "self" (borrow $p))))))
  (alias export $poll "pollable" (type $pollable))
  (import "wasi:cli/environment@0.2.12" (instance $env
    (export "get-environment" (func (result (list (tuple string string)))))))
  (type $types-type (instance
    (alias outer 1 $pollable (type $pl))
    (export "pollable" (type $pollable (eq $pl)))
    (export "fields" (type $fields (sub resource)))
    (export "outgoing-request" (type $req (sub resource)))
    (export "request-options" (type $opts (sub resource)))
    (export "future-incoming-response" (type $fut (sub resource)))
    (export "incoming-response" (type $resp (sub resource)))
    (type $scheme-t (variant (case "HTTP") (case "HTTPS") (case "other" string)))
    (export "scheme" (type $scheme (eq $scheme-t)))
    (type $dns-t (record (field "rcode" (option string)) (field "info-code" (option u16))))
    (export "DNS-error-payload" (type $dns (eq $dns-t)))
    (type $tls-t (record (field "alert-id" (option u8)) (field "alert-message" (option string))))
    (export "TLS-alert-received-payload" (type $tls (eq $tls-t)))
    (type $fsp-t (record (field "field-name" (option string)) (field "field-size" (option u32))))
    (export "field-size-payload" (type $fsp (eq $fsp-t)))
    (type $error-code-t (variant {ERROR_CASES}))
    (export "error-code" (type $error-code (eq $error-code-t)))
    (export "[constructor]fields" (func (result (own $fields))))
    (export "[constructor]outgoing-request" (func (param "headers" (own $fields)) (result (own $req))))
    (export "[method]outgoing-request.set-scheme"
      (func (param "self" (borrow $req)) (param "scheme" (option $scheme)) (result (result))))
    (export "[method]outgoing-request.set-authority"
      (func (param "self" (borrow $req)) (param "authority" (option string)) (result (result))))
    (export "[method]outgoing-request.set-path-with-query"
      (func (param "self" (borrow $req)) (param "path-with-query" (option string)) (result (result))))
    (export "[method]future-incoming-response.subscribe"
      (func (param "self" (borrow $fut)) (result (own $pollable))))
    (export "[method]future-incoming-response.get"
      (func (param "self" (borrow $fut))
            (result (option (result (result (own $resp) (error $error-code)))))))
    (export "[method]incoming-response.status" (func (param "self" (borrow $resp)) (result u16)))))
  (import "wasi:http/types@0.2.12" (instance $types (type $types-type)))
  (alias export $types "outgoing-request" (type $req))
  (alias export $types "request-options" (type $opts))
  (alias export $types "future-incoming-response" (type $fut))
  (alias export $types "error-code" (type $error-code))
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

  (core module $Mem
    (memory (export "memory") 1)
    (global $next (mut i32) (i32.const 4096))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $at i32)
      (local.set $at (i32.and (i32.add (global.get $next) (i32.sub (local.get 2) (i32.const 1)))
                              (i32.sub (i32.const 0) (local.get 2))))
      (global.set $next (i32.add (local.get $at) (local.get 3)))
      (if (i32.gt_u (global.get $next) (i32.mul (memory.size) (i32.const 65536)))
        (then (drop (memory.grow (i32.const 16)))))
      (local.get $at)))
  (core instance $mem (instantiate $Mem))
  (alias core export $mem "memory" (core memory $memory))
  (alias core export $mem "realloc" (core func $realloc))

  (core func $fields (canon lower (func $types "[constructor]fields")))
  (core func $request (canon lower (func $types "[constructor]outgoing-request")))
  (core func $set-scheme (canon lower (func $types "[method]outgoing-request.set-scheme")
                                      (memory $memory)))
  (core func $set-authority (canon lower (func $types "[method]outgoing-request.set-authority")
                                         (memory $memory)))
  (core func $set-path (canon lower (func $types "[method]outgoing-request.set-path-with-query")
                                    (memory $memory)))
  (core func $subscribe (canon lower (func $types "[method]future-incoming-response.subscribe")))
  (core func $get (canon lower (func $types "[method]future-incoming-response.get")
                               (memory $memory) (realloc $realloc)))
  (core func $status (canon lower (func $types "[method]incoming-response.status")))
  (core func $block (canon lower (func $poll "[method]pollable.block")))
  (core func $environment (canon lower (func $env "get-environment")
                                       (memory $memory) (realloc $realloc)))
  (core func $handle (canon lower (func $handler "handle") (memory $memory) (realloc $realloc)))

  (core module $Main
    (import "m" "memory" (memory 1))
    (import "h" "fields" (func $fields (result i32)))
    (import "h" "request" (func $request (param i32) (result i32)))
    (import "h" "set-scheme" (func $set-scheme (param i32 i32 i32 i32 i32) (result i32)))
    (import "h" "set-authority" (func $set-authority (param i32 i32 i32 i32) (result i32)))
    (import "h" "set-path" (func $set-path (param i32 i32 i32 i32) (result i32)))
    (import "h" "subscribe" (func $subscribe (param i32) (result i32)))
    (import "h" "get" (func $get (param i32 i32)))
    (import "h" "status" (func $status (param i32) (result i32)))
    (import "h" "block" (func $block (param i32)))
    (import "h" "environment" (func $environment (param i32)))
    (import "h" "handle" (func $handle (param i32 i32 i32 i32)))
    (data (i32.const 256) "HTTP_ALLOWED")   ;; 12
    (data (i32.const 272) "HTTP_REFUSED")   ;; 12
    (data (i32.const 288) "/refused")       ;; 8
    (data (i32.const 304) "/saw-denied")    ;; 11
    (data (i32.const 320) "/saw-other")     ;; 10
    (data (i32.const 336) "/status-200")    ;; 11
    (data (i32.const 352) "/status-other")  ;; 13
    (global $allowed-ptr (mut i32) (i32.const 0))
    (global $allowed-len (mut i32) (i32.const 0))
    (global $refused-ptr (mut i32) (i32.const 0))
    (global $refused-len (mut i32) (i32.const 0))

    (func $same (param $a i32) (param $alen i32) (param $b i32) (param $blen i32) (result i32)
      (local $i i32)
      (if (i32.ne (local.get $alen) (local.get $blen)) (then (return (i32.const 0))))
      (block $done
        (loop $next
          (br_if $done (i32.ge_u (local.get $i) (local.get $alen)))
          (if (i32.ne (i32.load8_u (i32.add (local.get $a) (local.get $i)))
                      (i32.load8_u (i32.add (local.get $b) (local.get $i))))
            (then (return (i32.const 0))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $next)))
      (i32.const 1))

    (func $read-env
      (local $list i32) (local $count i32) (local $entry i32)
      (call $environment (i32.const 64))
      (local.set $list (i32.load (i32.const 64)))
      (local.set $count (i32.load (i32.const 68)))
      (block $done
        (loop $next
          (br_if $done (i32.eqz (local.get $count)))
          (local.set $entry (local.get $list))
          (if (call $same (i32.load (local.get $entry)) (i32.load offset=4 (local.get $entry))
                          (i32.const 256) (i32.const 12))
            (then (global.set $allowed-ptr (i32.load offset=8 (local.get $entry)))
                  (global.set $allowed-len (i32.load offset=12 (local.get $entry)))))
          (if (call $same (i32.load (local.get $entry)) (i32.load offset=4 (local.get $entry))
                          (i32.const 272) (i32.const 12))
            (then (global.set $refused-ptr (i32.load offset=8 (local.get $entry)))
                  (global.set $refused-len (i32.load offset=12 (local.get $entry)))))
          (local.set $list (i32.add (local.get $list) (i32.const 16)))
          (local.set $count (i32.sub (local.get $count) (i32.const 1)))
          (br $next))))

    ;; send GET http://<authority><path>; the result<future, error-code> lands at 128
    (func $send (param $auth i32) (param $auth-len i32) (param $path i32) (param $path-len i32)
      (local $req i32)
      (local.set $req (call $request (call $fields)))
      (drop (call $set-scheme (local.get $req) (i32.const 1) (i32.const 0) (i32.const 0) (i32.const 0)))
      (drop (call $set-authority (local.get $req) (i32.const 1) (local.get $auth) (local.get $auth-len)))
      (drop (call $set-path (local.get $req) (i32.const 1) (local.get $path) (local.get $path-len)))
      (call $handle (local.get $req) (i32.const 0) (i32.const 0) (i32.const 128)))

    ;; wait for the future at 128 (when it is ok); its status, or 0
    (func $wait (result i32)
      (local $fut i32)
      (if (i32.load8_u (i32.const 128)) (then (return (i32.const 0))))
      (local.set $fut (i32.load (i32.const 136)))
      (call $block (call $subscribe (local.get $fut)))
      (call $get (local.get $fut) (i32.const 160))
      (if (i32.eqz (i32.load8_u (i32.const 160))) (then (return (i32.const 0))))
      (if (i32.load8_u (i32.const 168)) (then (return (i32.const 0))))
      (if (i32.load8_u (i32.const 176)) (then (return (i32.const 0))))
      (call $status (i32.load (i32.const 184))))

    (func (export "run")
      (local $denied i32)
      (call $read-env)
      (call $send (global.get $refused-ptr) (global.get $refused-len) (i32.const 288) (i32.const 8))
      ;; err (1) with error-code case 15, HTTP-request-denied
      (local.set $denied (i32.and (i32.eq (i32.load8_u (i32.const 128)) (i32.const 1))
                                  (i32.eq (i32.load8_u (i32.const 136)) (i32.const 15))))
      (if (local.get $denied)
        (then (call $send (global.get $allowed-ptr) (global.get $allowed-len) (i32.const 304) (i32.const 11)))
        (else (call $send (global.get $allowed-ptr) (global.get $allowed-len) (i32.const 320) (i32.const 10))))
      (if (i32.eq (call $wait) (i32.const 200))
        (then (call $send (global.get $allowed-ptr) (global.get $allowed-len) (i32.const 336) (i32.const 11)))
        (else (call $send (global.get $allowed-ptr) (global.get $allowed-len) (i32.const 352) (i32.const 13))))
      (drop (call $wait))))
  (core instance $main (instantiate $Main
    (with "m" (instance (export "memory" (memory $memory))))
    (with "h" (instance
      (export "fields" (func $fields))
      (export "request" (func $request))
      (export "set-scheme" (func $set-scheme))
      (export "set-authority" (func $set-authority))
      (export "set-path" (func $set-path))
      (export "subscribe" (func $subscribe))
      (export "get" (func $get))
      (export "status" (func $status))
      (export "block" (func $block))
      (export "environment" (func $environment))
      (export "handle" (func $handle))))))
  (func $run (canon lift (core func $main "run")))
  (instance $run-instance (export "run" (func $run)))
  (export "murmur:capsule/run@0.1.0" (instance $run-instance)))
