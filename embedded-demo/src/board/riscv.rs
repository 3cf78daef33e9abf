//! Board start-up for QEMU virt (RV32IMAC, one hart, machine mode, `-bios none`): riscv-rt's
//! start code (stack, RAM set up, trap vector), then the demo.

use crate::demo::{self, Board};
// Links riscv's `critical-section-single-hart` critical section, which the heap's allocator uses.
use riscv as _;

static BOARD: Board = Board { target: "riscv32imac-unknown-none-elf", machine: "virt" };

#[riscv_rt::entry]
fn main() -> ! {
    demo::run(&BOARD)
}
