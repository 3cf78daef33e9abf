//! The adversarial plugin of targets 3 and 4: a fixed WAT module whose every pointer, length and
//! allocator answer comes from its request bytes.

use crate::small_policy;
use contour_core::Plugin;
use std::sync::{Arc, OnceLock};

/// The adversarial plugin (WAT): everything it does with pointers comes from the request bytes,
/// read as little-endian words `w[i]` at `req + 4 i` (0 past the end):
///
/// - `w0` flags: 1 `tdm_host_call(w1, w2)`, 2 `tdm_host_response(w3, w4)`, 4
///   `fd_write(w5 & 3, w6, w7, w8)`, 8 `random_get(w9, w10)`, 16 `memory.grow(w11 & 7)`, 32 copy
///   the request from byte 68 (word 17) on as the response body at `w13` and return `w13`, else return
///   `w13` as is; 64 `tdm_free` traps; 128 the next `tdm_alloc` returns `w14` (else 4096);
///   256 `clock_time_get(w15 & 3, 0, w16)`.
pub const ADVERSARIAL_WAT: &str = r#"(module
  (import "tdm" "tdm_host_call" (func $call (param i32 i32) (result i32)))
  (import "tdm" "tdm_host_response" (func $response (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (memory (export "memory") 2 16)
  (global $next_alloc (mut i32) (i32.const 0))
  (global $trap_free (mut i32) (i32.const 0))
  (global $req (mut i32) (i32.const 0))
  (global $len (mut i32) (i32.const 0))
  (func (export "tdm_alloc") (param $size i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $next_alloc))
    (global.set $next_alloc (i32.const 0))
    (if (result i32) (local.get $p) (then (local.get $p)) (else (i32.const 4096))))
  (func (export "tdm_free") (param i32 i32)
    (if (global.get $trap_free) (then (global.set $trap_free (i32.const 0)) (unreachable))))
  ;; Word i of the request, 0 past its end.
  (func $w (param $i i32) (result i32)
    (if (result i32) (i32.le_u (i32.mul (i32.add (local.get $i) (i32.const 1)) (i32.const 4)) (global.get $len))
      (then (i32.load (i32.add (global.get $req) (i32.mul (local.get $i) (i32.const 4)))))
      (else (i32.const 0))))
  (func (export "tdm_plugin_execute_intent") (param $req i32) (param $len i32) (result i32)
    (local $flags i32) (local $at i32) (local $n i32)
    (global.set $req (local.get $req))
    (global.set $len (local.get $len))
    (local.set $flags (call $w (i32.const 0)))
    (if (i32.and (local.get $flags) (i32.const 1))
      (then (drop (call $call (call $w (i32.const 1)) (call $w (i32.const 2))))))
    (if (i32.and (local.get $flags) (i32.const 2))
      (then (drop (call $response (call $w (i32.const 3)) (call $w (i32.const 4))))))
    (if (i32.and (local.get $flags) (i32.const 4))
      (then (drop (call $fd_write (i32.and (call $w (i32.const 5)) (i32.const 3))
        (call $w (i32.const 6)) (call $w (i32.const 7)) (call $w (i32.const 8))))))
    (if (i32.and (local.get $flags) (i32.const 8))
      (then (drop (call $random (call $w (i32.const 9)) (call $w (i32.const 10))))))
    (if (i32.and (local.get $flags) (i32.const 16))
      (then (drop (memory.grow (i32.and (call $w (i32.const 11)) (i32.const 7))))))
    (if (i32.and (local.get $flags) (i32.const 64)) (then (global.set $trap_free (i32.const 1))))
    (if (i32.and (local.get $flags) (i32.const 128)) (then (global.set $next_alloc (call $w (i32.const 14)))))
    (if (i32.and (local.get $flags) (i32.const 256))
      (then (drop (call $clock (i32.and (call $w (i32.const 15)) (i32.const 3)) (i64.const 0) (call $w (i32.const 16))))))
    (local.set $at (call $w (i32.const 13)))
    (if (i32.and (local.get $flags) (i32.const 32))
      (then
        (local.set $n (select (i32.sub (local.get $len) (i32.const 68)) (i32.const 0)
          (i32.gt_u (local.get $len) (i32.const 68))))
        (i32.store (local.get $at) (local.get $n))
        (memory.copy (i32.add (local.get $at) (i32.const 4)) (i32.add (local.get $req) (i32.const 68)) (local.get $n))))
    (local.get $at)))"#;

/// The adversarial plugin, compiled and loaded once.
pub fn adversarial_plugin() -> Arc<Plugin> {
    static PLUGIN: OnceLock<Arc<Plugin>> = OnceLock::new();
    Arc::clone(PLUGIN.get_or_init(|| {
        let wasm = wat::parse_str(ADVERSARIAL_WAT).expect("the adversarial plugin compiles");
        Arc::new(Plugin::load(&wasm, small_policy()).expect("the adversarial plugin loads"))
    }))
}
