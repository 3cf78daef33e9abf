/* ProcessPrng for Wine: Rust's std on Windows imports ProcessPrng from bcryptprimitives.dll,
 * which Debian's Wine 8 lacks (the exe then fails to start with exit 53). This stand-in fills
 * the buffer from RtlGenRandom (advapi32's SystemFunction036), which Wine has. Built and put
 * beside the replay exe by `make cross-windows`; never part of a release. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
