//! contour-embedded-demo: contour-core's `Sandbox` on bare metal. Both boards (QEMU mps2-an386
//! Cortex-M4F and QEMU virt RV32IMAC) share everything here but their start-up (`board`): the
//! bundled plugins, the cases, the heap, the one file that uses core (`sandbox`), the printing.
//!
//! | module | owns |
//! |---|---|
//! | `board` | the start-up of each board, then `demo::run` |
//! | `demo` | runs the cases, prints outcomes and figures, sets the exit status |
//! | `cases` | each bundled plugin with one intent and its expected outcome |
//! | `plugins` | the modules build.rs bundled from the repository's sources |
//! | `sandbox` | the only use of contour-core: embedded policy, board environment, one intent |
//! | `heap` | the static heap and its high-water mark |
//! | `digest` | the fixed-size digest lines (module digests; replay digests later) |
//! | `replay` | every bundled conformance trace replayed to its digest |
//! | `stack` | the native stack's high-water mark |
#![no_std]
#![no_main]

extern crate alloc;

#[cfg_attr(target_arch = "arm", path = "board/cortex_m.rs")]
#[cfg_attr(target_arch = "riscv32", path = "board/riscv.rs")]
mod board;
mod cases;
mod demo;
mod digest;
mod heap;
mod plugins;
mod replay;
mod sandbox;
mod stack;
