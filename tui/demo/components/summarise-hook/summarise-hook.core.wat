;; summarise-hook -- world murmur:guest/hook (wit/worlds.wit), exports all nine handlers of
;; murmur:hook/lifecycle@0.8.0. Imports murmur:runtime/inference@0.2.0 (run-inference).
;;
;; Handlers:
;;   on-compaction -> calls run-inference({messages: [{role: "user",
;;                      content: "[{\"type\":\"text\",\"text\":\"Summarise the conversation so far.\"}]",
;;                      id: none, source-id: none}], system-prompt: none, model: none});
;;                    ok(resp) -> ok(replace-context([{role: "user", content: resp.text,
;;                                                     id: none, source-id: none}]))
;;                    err(e)   -> err(e)
;;   every other handler -> ok(none)
;;
;; Canonical ABI notes (as tests/wasm/fixtures/all_hook.core.wat):
;;   result<hook-output, string> is returned through a pointer (16 bytes, align 4):
;;     [0] u8 0 = ok, 1 = err
;;     ok:  [4] u8 hook-output case (0 none, 1 replace-context, ...), [8] ptr, [12] len
;;     err: [4] string ptr, [8] string len
;;   message record: 40 bytes, align 4: role (0), content (8), id option (16: disc, ptr,
;;     len), source-id option (28).
;;   run-inference(request) lowers to (messages ptr, len, system-prompt disc/ptr/len,
;;     model disc/ptr/len, retptr); result<inference-response, string> at retptr
;;     (align 8): [0] disc, payload at [8]: ok text ptr [8] / len [12]; err ptr [8] / len [12].
(module
  (import "murmur:runtime/inference@0.2.0" "run-inference"
    (func $run_inference (param i32 i32 i32 i32 i32 i32 i32 i32 i32)))
  (memory (export "memory") 1)

  (data (i32.const 576) "user")                                                      ;; 4
  (data (i32.const 592) "[{\"type\":\"text\",\"text\":\"Summarise the conversation so far.\"}]") ;; 61

  ;; scratch areas
  ;;   160  the returned result<hook-output, string> (16 bytes)
  ;;   832  the request's message list (1 x 40 bytes)
  ;;   896  run-inference return area (40 bytes, align 8)
  ;;   960  the replace-context message list (1 x 40 bytes)

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
  ;; err(string(ptr, len)) at 160
  (func $err (param $ptr i32) (param $len i32) (result i32)
    (i32.store (i32.const 160) (i32.const 1))
    (i32.store (i32.const 164) (local.get $ptr))
    (i32.store (i32.const 168) (local.get $len))
    (i32.store (i32.const 172) (i32.const 0))
    (i32.const 160))
  ;; a message {role: "user", content: (ptr, len), id: none, source-id: none} at $at
  (func $user_message (param $at i32) (param $ptr i32) (param $len i32)
    (memory.fill (local.get $at) (i32.const 0) (i32.const 40))
    (i32.store (local.get $at) (i32.const 576))
    (i32.store offset=4 (local.get $at) (i32.const 4))
    (i32.store offset=8 (local.get $at) (local.get $ptr))
    (i32.store offset=12 (local.get $at) (local.get $len)))

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

  ;; compaction-event: list<message>, u64, f64, 2 x option<string>
  (func (export "murmur:hook/lifecycle@0.8.0#on-compaction")
        (param i32 i32 i64 f64 i32 i32 i32 i32 i32 i32) (result i32)
    (call $user_message (i32.const 832) (i32.const 592) (i32.const 61))
    (call $run_inference (i32.const 832) (i32.const 1)
                         (i32.const 0) (i32.const 0) (i32.const 0)
                         (i32.const 0) (i32.const 0) (i32.const 0)
                         (i32.const 896))
    (if (result i32) (i32.load8_u (i32.const 896))
      (then (call $err (i32.load (i32.const 904)) (i32.load (i32.const 908))))
      (else
        (call $user_message (i32.const 960) (i32.load (i32.const 904)) (i32.load (i32.const 908)))
        (call $ok (i32.const 1) (i32.const 960) (i32.const 1)))))

  (func (export "murmur:hook/lifecycle@0.8.0#on-task-end") (param i32 i32 i32 i32) (result i32)
    (call $none))
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
