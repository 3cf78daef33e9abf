;; spin: every intent loops forever. The fuel budget stops it: `fuel_exhausted`.
(module
  (memory (export "memory") 1)
  (func (export "tdm_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
    (loop $forever (br $forever))
    (i32.const 0)))
