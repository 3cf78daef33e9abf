;; echo: the bundled demo plugin. Any intent answers {"status":"completed","output":PARAMS},
;; where PARAMS is the request's `params` value, copied byte for byte. It finds `"params":` in
;; the JSON-RPC request (the host serializes it as the last key) and copies up to the closing
;; brace of the request. It also logs one line to stdout through WASI fd_write.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; Bump allocator: a heap from 64 KiB up; grows memory on demand, returns 0 when it cannot.
  (global $heap (mut i32) (i32.const 65536))
  (data (i32.const 0) "{\"status\":\"completed\",\"output\":")   ;; 31 bytes
  (data (i32.const 64) "\"params\":")                           ;; 9 bytes
  (data (i32.const 96) "echo: answering one intent\n")          ;; 27 bytes
  (func $alloc (export "tdm_alloc") (param $size i32) (result i32)
    (local $ptr i32) (local $end i32) (local $pages i32)
    (local.set $ptr (global.get $heap))
    (local.set $end (i32.add (local.get $ptr) (local.get $size)))
    (if (i32.lt_u (local.get $end) (local.get $ptr)) (then (return (i32.const 0))))
    (if (i32.gt_u (local.get $end) (i32.mul (memory.size) (i32.const 65536)))
      (then
        (local.set $pages
          (i32.sub (i32.shr_u (i32.add (local.get $end) (i32.const 65535)) (i32.const 16)) (memory.size)))
        (if (i32.eq (memory.grow (local.get $pages)) (i32.const -1)) (then (return (i32.const 0))))))
    (global.set $heap (local.get $end))
    (local.get $ptr))
  ;; A bump allocator frees from the top: freeing the latest block rewinds the heap, and a block
  ;; freed earlier that ends where the heap now ends is reclaimed too (the host frees the request,
  ;; then the response).
  (global $freed_ptr (mut i32) (i32.const 0))
  (global $freed_end (mut i32) (i32.const 0))
  (func (export "tdm_free") (param $ptr i32) (param $size i32)
    (if (i32.eq (i32.add (local.get $ptr) (local.get $size)) (global.get $heap))
      (then
        (global.set $heap (local.get $ptr))
        (if (i32.eq (global.get $freed_end) (global.get $heap))
          (then (global.set $heap (global.get $freed_ptr)) (global.set $freed_end (i32.const 0)))))
      (else
        (global.set $freed_ptr (local.get $ptr))
        (global.set $freed_end (i32.add (local.get $ptr) (local.get $size))))))
  ;; Index of the first byte after `"params":` in [p, p+n), or -1.
  (func $find_params (param $p i32) (param $n i32) (result i32)
    (local $i i32) (local $j i32)
    (block $none
      (loop $scan
        (br_if $none (i32.gt_u (i32.add (local.get $i) (i32.const 9)) (local.get $n)))
        (local.set $j (i32.const 0))
        (block $mismatch
          (loop $cmp
            (br_if $mismatch
              (i32.ne (i32.load8_u (i32.add (i32.add (local.get $p) (local.get $i)) (local.get $j)))
                      (i32.load8_u (i32.add (i32.const 64) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br_if $cmp (i32.lt_u (local.get $j) (i32.const 9))))
          (return (i32.add (local.get $i) (i32.const 9))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (i32.const -1))
  (func (export "tdm_plugin_execute_intent") (param $p i32) (param $n i32) (result i32)
    (local $start i32) (local $len i32) (local $out i32)
    (i32.store (i32.const 200) (i32.const 96))
    (i32.store (i32.const 204) (i32.const 27))
    (drop (call $fd_write (i32.const 1) (i32.const 200) (i32.const 1) (i32.const 208)))
    (local.set $start (call $find_params (local.get $p) (local.get $n)))
    (if (i32.lt_s (local.get $start) (i32.const 0))
      (then (local.set $start (local.get $n)) (local.set $len (i32.const 0)))
      ;; The params value runs to the request's closing brace (the last byte).
      (else (local.set $len (i32.sub (i32.sub (local.get $n) (local.get $start)) (i32.const 1)))))
    (if (i32.le_s (local.get $len) (i32.const 0))
      (then (local.set $len (i32.const 0))))
    ;; [u32 length]["{...output":][params]["}"]
    (local.set $out (call $alloc (i32.add (local.get $len) (i32.const 36))))
    (if (i32.eqz (local.get $out)) (then (unreachable)))
    (i32.store (local.get $out) (i32.add (local.get $len) (i32.const 32)))
    (memory.copy (i32.add (local.get $out) (i32.const 4)) (i32.const 0) (i32.const 31))
    (memory.copy (i32.add (local.get $out) (i32.const 35)) (i32.add (local.get $p) (local.get $start)) (local.get $len))
    (i32.store8 (i32.add (i32.add (local.get $out) (i32.const 35)) (local.get $len)) (i32.const 125))
    (local.get $out)))
