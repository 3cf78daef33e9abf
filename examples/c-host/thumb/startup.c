/* The least a Cortex-M4F needs to run contour-run.c under QEMU's mps2-an386 (`make c-host-thumb`):
 * a vector table whose reset handler turns the FPU on and enters newlib's semihosting C runtime
 * (rdimon: stdio, files and the command line through the debugger, here QEMU). A real firmware
 * has its own startup (Zephyr's, a FreeRTOS port's); this one exists only for the check. */

extern unsigned long __stack_top;
extern void _start(void);

void contour_reset(void) {
    /* CPACR: full access to coprocessors 10 and 11 (the FPU) before any float instruction. */
    *(volatile unsigned long *)0xE000ED88 |= (0xFu << 20);
    __asm volatile("dsb\n isb");
    _start();
}

/* Any fault ends the run: QEMU's timeout in the make target reports it. */
void contour_fault(void) {
    for (;;) {
    }
}

__attribute__((section(".isr_vector"), used)) void (*const contour_vectors[16])(void) = {
    (void (*)(void))&__stack_top, contour_reset, contour_fault, contour_fault, contour_fault, contour_fault,
    contour_fault, 0, 0, 0, 0, contour_fault, contour_fault, 0, contour_fault, contour_fault,
};
