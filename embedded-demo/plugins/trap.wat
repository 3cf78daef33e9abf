;; trap: every intent divides by zero. The trap ends the intent: `plugin_trap`.
(module
  (memory (export "memory") 1)
  (func (export "tdm_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param $req i32) (param $len i32) (result i32)
    (i32.div_u (local.get $len) (i32.sub (local.get $len) (local.get $len)))))
