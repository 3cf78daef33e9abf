;; forbidden_import: a valid plugin that also imports a host function off the allowlist
;; (`env.system`). It is rejected at load, before instantiation: `import_not_allowed`.
(module
  (import "env" "system" (func $system (param i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "\21\00\00\00{\"status\":\"completed\",\"output\":1}")
  (func (export "tdm_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
    (drop (call $system (i32.const 0)))
    (i32.const 16)))
