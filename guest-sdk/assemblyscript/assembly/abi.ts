// The memory exports of the TDM IPC ABI (docs/ABI.md section 2): `tdm_alloc` hands the host a block
// to write a request into, and `tdm_free` takes back the request and each framed response.
//
// Memory: the host's request and the framed responses are unmanaged blocks (`heap.alloc`, TLSF);
// strings and other managed objects are collected by the `minimal` runtime's GC, which this SDK
// runs at the one point where no managed reference is on the stack: at the start of `tdm_alloc`,
// i.e. between intents. Objects reachable from globals survive, so a plugin may keep state across
// intents in globals. So memory stays constant from intent to intent.

import { fuelMark, MARK_ALLOC_ENTER, MARK_ALLOC_EXIT } from "./marks";

// Blocks handed to the host (the request it writes, the responses it reads), so `tdm_free`
// releases only what came from here: any other pointer is ignored instead of corrupting the heap.
// The host holds two per intent; a small table is searched in a few instructions, where a `Set`
// hashes on every call.
const HOST_BLOCKS = 16;
const hostBlocks = new StaticArray<usize>(HOST_BLOCKS);

/** `tdm_alloc(size) -> ptr`: `size` writable bytes for the host, or 0 when memory cannot grow. */
export function tdm_alloc(size: usize): usize {
  // Between intents: nothing managed is on the stack, so a collection is safe here.
  __collect();
  return hostBlock(size);
}

/** `tdm_free(ptr, size)`: the host is done with a block (the request or a response). */
export function tdm_free(ptr: usize, size: usize): void {
  if (ptr == 0) return;
  for (let i = 0; i < HOST_BLOCKS; i++) {
    if (unchecked(hostBlocks[i]) == ptr) {
      unchecked(hostBlocks[i] = 0);
      fuelMark(MARK_ALLOC_ENTER);
      heap.free(ptr);
      fuelMark(MARK_ALLOC_EXIT);
      return;
    }
  }
}

/** An unmanaged block of `size` bytes for the host, or 0 (too large, or the host holds
 * `HOST_BLOCKS` already). */
export function hostBlock(size: usize): usize {
  if (size > 0x7fff0000) return 0;
  for (let i = 0; i < HOST_BLOCKS; i++) {
    if (unchecked(hostBlocks[i]) == 0) {
      fuelMark(MARK_ALLOC_ENTER);
      const ptr = heap.alloc(size == 0 ? 1 : size);
      fuelMark(MARK_ALLOC_EXIT);
      unchecked(hostBlocks[i] = ptr);
      return ptr;
    }
  }
  return 0;
}
