//! Board start-up for QEMU mps2-an386 (Cortex-M4F): cortex-m-rt's reset handler (FPU on, RAM
//! set up), then the demo.

use crate::demo::{self, Board};
// Links cortex_m's `critical-section-single-core` critical section, which the heap's allocator uses.
use cortex_m as _;

static BOARD: Board = Board { target: "thumbv7em-none-eabihf", machine: "mps2-an386" };

#[cortex_m_rt::entry]
fn main() -> ! {
    demo::run(&BOARD)
}
