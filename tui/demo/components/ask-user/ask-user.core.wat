;; ask_user -- demo tool. World murmur:guest/tool (wit/worlds.wit), exports
;; murmur:tool/run@0.2.0. Imports murmur:task/task@0.1.0 (request-input) only.
;;
;; run(input) ignores its input and
;;   answer = request-input("The demo tool would like to know: shall it list the workdir? (yes/no)")
;;   returns { status: passed, summary: none,
;;             data: some("The user answered: " ++ answer),
;;             data-path: none, truncated: false,
;;             metadata: [("state_effect", "read"), ("resource_id", "demo:question")],
;;             attachments: [] }
;; If request-input traps (the host gives up waiting), the trap propagates.
;;
;; Canonical ABI notes:
;;   request-input(prompt: string) -> string lowers to (ptr, len, retptr); the answer's
;;   bytes are allocated by the host through cabi_realloc.
;;   tool-result (0.2.0) is returned through a pointer: 60 bytes, align 4:
;;     [0] u8 status  [4] summary (u8 disc, ptr, len)  [16] data  [28] data-path
;;     [40] u8 truncated  [44] metadata (ptr, len)  [52] attachments (ptr, len)
;;
;; Rebuild: python tests/wasm/build_fixtures.py (see README.md next to this file).
(module
  (import "murmur:task/task@0.1.0" "request-input" (func $request_input (param i32 i32 i32)))
  (memory (export "memory") 1)

  (data (i32.const 1024) "The demo tool would like to know: shall it list the workdir? (yes/no)") ;; 69
  (data (i32.const 1104) "The user answered: ")   ;; 19
  (data (i32.const 1136) "state_effect")          ;; 12
  (data (i32.const 1152) "read")                  ;; 4
  (data (i32.const 1168) "resource_id")           ;; 11
  (data (i32.const 1184) "demo:question")         ;; 13

  (global $heap (mut i32) (i32.const 4096))
  (func $realloc (export "cabi_realloc")
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

  (func (export "murmur:tool/run@0.2.0#run")
        (param i32 i32 i32 i32 i32 i32)
        (result i32)
    (local $a_ptr i32) (local $a_len i32) (local $out i32)
    ;; answer (ptr, len) -> 512
    (call $request_input (i32.const 1024) (i32.const 69) (i32.const 512))
    (local.set $a_ptr (i32.load (i32.const 512)))
    (local.set $a_len (i32.load (i32.const 516)))
    ;; out = "The user answered: " ++ answer, on the heap
    (local.set $out (call $realloc (i32.const 0) (i32.const 0) (i32.const 1)
                                   (i32.add (i32.const 19) (local.get $a_len))))
    (memory.copy (local.get $out) (i32.const 1104) (i32.const 19))
    (memory.copy (i32.add (local.get $out) (i32.const 19)) (local.get $a_ptr) (local.get $a_len))

    ;; metadata list at 1216: 2 x tuple<string, string>
    (i32.store (i32.const 1216) (i32.const 1136)) (i32.store (i32.const 1220) (i32.const 12))
    (i32.store (i32.const 1224) (i32.const 1152)) (i32.store (i32.const 1228) (i32.const 4))
    (i32.store (i32.const 1232) (i32.const 1168)) (i32.store (i32.const 1236) (i32.const 11))
    (i32.store (i32.const 1240) (i32.const 1184)) (i32.store (i32.const 1244) (i32.const 13))

    (memory.fill (i32.const 256) (i32.const 0) (i32.const 60))
    (i32.store8 (i32.const 256) (i32.const 0))          ;; status = passed
    (i32.store8 (i32.const 272) (i32.const 1))          ;; data = some(out)
    (i32.store  (i32.const 276) (local.get $out))
    (i32.store  (i32.const 280) (i32.add (i32.const 19) (local.get $a_len)))
    (i32.store  (i32.const 300) (i32.const 1216))       ;; metadata
    (i32.store  (i32.const 304) (i32.const 2))
    (i32.const 256))

  ;; the host has copied the result out: drop everything allocated for this call
  (func (export "cabi_post_murmur:tool/run@0.2.0#run") (param i32)
    (global.set $heap (i32.const 4096)))
)
