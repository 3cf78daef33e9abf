;; grow: every intent grows linear memory one page at a time, forever. The policy's memory limit
;; stops it at the first page past the limit: `memory_limit_exceeded`, memory at the limit.
(module
  (memory (export "memory") 1)
  (func (export "tdm_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
    (loop $more (drop (memory.grow (i32.const 1))) (br $more))
    (i32.const 0)))
