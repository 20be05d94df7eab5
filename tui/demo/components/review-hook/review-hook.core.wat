;; review-hook -- world murmur:guest/hook (wit/worlds.wit), exports all nine handlers of
;; murmur:hook/lifecycle@0.8.0. Imports nothing.
;;
;; Handlers:
;;   on-task-end   -> the first time: ok(reopen-task("Before you finish: check your answer against the task once more, then give it again in one short paragraph."));
;;                    afterwards ok(none) (a global remembers; the host keeps the instance)
;;   every other handler -> ok(none)
;;
;; Canonical ABI notes: as summarise-hook.core.wat; reopen-task is hook-output case 4 with a
;; string payload (ptr, len).
(module
  (memory (export "memory") 1)

  (data (i32.const 1024) "Before you finish: check your answer against the task once more, then give it again in one short paragraph.")  ;; 107
  (global $reopened (mut i32) (i32.const 0))

  ;; scratch: 160 holds the returned result<hook-output, string> (16 bytes)

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

  ;; ok(<case>(ptr, len)) at 160
  (func $ok (param $case i32) (param $ptr i32) (param $len i32) (result i32)
    (i32.store (i32.const 160) (i32.const 0))
    (i32.store (i32.const 164) (local.get $case))
    (i32.store (i32.const 168) (local.get $ptr))
    (i32.store (i32.const 172) (local.get $len))
    (i32.const 160))
  (func $none (result i32) (call $ok (i32.const 0) (i32.const 0) (i32.const 0)))
  (func (export "murmur:hook/lifecycle@0.8.0#on-stage") (param i32 i32) (result i32)
    (call $none))
  (func (export "murmur:hook/lifecycle@0.8.0#on-session-start")
        (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32)
    (call $none))
  (func (export "murmur:hook/lifecycle@0.8.0#on-task-start")
        (param i32 i32 i32 i32 i32 i32 i64 i64 i64 i64) (result i32)
    (call $none))
  (func (export "murmur:hook/lifecycle@0.8.0#on-inference") (param i32) (result i32)
    (call $none))
  (func (export "murmur:hook/lifecycle@0.8.0#on-tool-call")
        (param i32 i32 i32 i64 i64 i64 i32 i32) (result i32)
    (call $none))
  (func (export "murmur:hook/lifecycle@0.8.0#on-shell")
        (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i64 i64 i64) (result i32)
    (call $none))

  (func (export "murmur:hook/lifecycle@0.8.0#on-compaction")
        (param i32 i32 i64 f64 i32 i32 i32 i32 i32 i32) (result i32)
    (call $none))

  ;; task-end-event: 2 strings
  (func (export "murmur:hook/lifecycle@0.8.0#on-task-end") (param i32 i32 i32 i32) (result i32)
    (if (result i32) (global.get $reopened)
      (then (call $none))
      (else
        (global.set $reopened (i32.const 1))
        (call $ok (i32.const 4) (i32.const 1024) (i32.const 107)))))
  (func (export "murmur:hook/lifecycle@0.8.0#on-session-end")
        (param i32 i64 i64 i32 i32 i64 i32 i32) (result i32)
    (call $none))

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
