;; noisy_hook -- demo hook. World murmur:guest/hook (wit/worlds.wit), exports all nine
;; handlers of murmur:hook/lifecycle@0.8.0 (including the optional on-task-start and
;; on-task-end). Imports nothing.
;;
;; Every handler returns ok(none), except
;;   on-tool-call -> ok(artifact("noted"))
;; which is an arm on-tool-call does not honor, so the host reports a (non-fatal) hook
;; fault after every tool call. It shows how a misbehaving hook looks in the UI.
;;
;; Canonical ABI notes: result<hook-output, string> is returned through a pointer (16
;; bytes, align 4): [0] u8 0 = ok, [4] u8 hook-output case (0 none, 3 artifact),
;; [8] payload ptr, [12] payload len. inference-event flattens to 17 values, so
;; on-inference receives one pointer; the other events are passed flat.
;;
;; Rebuild: python tests/wasm/build_fixtures.py (see README.md next to this file).
(module
  (memory (export "memory") 1)

  ;; 64: ok(none); 80: ok(artifact(ptr 512, len 5))
  (data (i32.const 64) "\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00")
  (data (i32.const 80) "\00\00\00\00\03\00\00\00\00\02\00\00\05\00\00\00")
  (data (i32.const 512) "noted")   ;; 5

  (global $heap (mut i32) (i32.const 4096))
  (func (export "cabi_realloc")
        (param $old i32) (param $old_size i32) (param $align i32) (param $new_size i32)
        (result i32)
    (local $p i32) (local $end i32)
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.sub (local.get $align) (i32.const 1)))
                           (i32.sub (i32.const 0) (local.get $align))))
    (local.set $end (i32.add (local.get $p) (local.get $new_size)))
    (if (i32.gt_u (local.get $end) (i32.mul (memory.size) (i32.const 65536)))
      (then
        (if (i32.eq (memory.grow (i32.add (i32.shr_u (i32.sub (local.get $end)
                                                              (i32.mul (memory.size) (i32.const 65536)))
                                                      (i32.const 16))
                                          (i32.const 1)))
                    (i32.const -1))
          (then unreachable))))
    (if (local.get $old)
      (then (memory.copy (local.get $p) (local.get $old) (local.get $old_size))))
    (global.set $heap (local.get $end))
    (local.get $p))
  (func $reset (param i32) (global.set $heap (i32.const 4096)))

  (func (export "murmur:hook/lifecycle@0.8.0#on-stage") (param i32 i32) (result i32)
    (i32.const 64))
  (func (export "murmur:hook/lifecycle@0.8.0#on-session-start")
        (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32)
    (i32.const 64))
  (func (export "murmur:hook/lifecycle@0.8.0#on-task-start")
        (param i32 i32 i32 i32 i32 i32 i64 i64 i64 i64) (result i32)
    (i32.const 64))
  (func (export "murmur:hook/lifecycle@0.8.0#on-inference") (param i32) (result i32)
    (i32.const 64))
  (func (export "murmur:hook/lifecycle@0.8.0#on-tool-call")
        (param i32 i32 i32 i64 i64 i64 i32 i32) (result i32)
    (i32.const 80))
  (func (export "murmur:hook/lifecycle@0.8.0#on-shell")
        (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i64 i64 i64) (result i32)
    (i32.const 64))
  (func (export "murmur:hook/lifecycle@0.8.0#on-compaction")
        (param i32 i32 i64 f64 i32 i32 i32 i32 i32 i32) (result i32)
    (i32.const 64))
  (func (export "murmur:hook/lifecycle@0.8.0#on-task-end") (param i32 i32 i32 i32) (result i32)
    (i32.const 64))
  (func (export "murmur:hook/lifecycle@0.8.0#on-session-end")
        (param i32 i64 i64 i32 i32 i64 i32 i32) (result i32)
    (i32.const 64))

  (export "cabi_post_murmur:hook/lifecycle@0.8.0#on-stage" (func $reset))
  (export "cabi_post_murmur:hook/lifecycle@0.8.0#on-session-start" (func $reset))
  (export "cabi_post_murmur:hook/lifecycle@0.8.0#on-task-start" (func $reset))
  (export "cabi_post_murmur:hook/lifecycle@0.8.0#on-inference" (func $reset))
  (export "cabi_post_murmur:hook/lifecycle@0.8.0#on-tool-call" (func $reset))
  (export "cabi_post_murmur:hook/lifecycle@0.8.0#on-shell" (func $reset))
  (export "cabi_post_murmur:hook/lifecycle@0.8.0#on-compaction" (func $reset))
  (export "cabi_post_murmur:hook/lifecycle@0.8.0#on-task-end" (func $reset))
  (export "cabi_post_murmur:hook/lifecycle@0.8.0#on-session-end" (func $reset))
)
