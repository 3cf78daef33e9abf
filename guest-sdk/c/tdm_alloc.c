/* tdm_alloc.c: the C SDK's memory: the libc pieces the compiler may call and the allocator behind
 * tdm_alloc, tdm_free and tdm_realloc. See tdm_plugin.h. */
#include "tdm_plugin.h"

#define PAGE_BYTES 65536u

/* ---- libc pieces the compiler may call (no libc is linked) ------------------------------------ */

/* Built with -mbulk-memory (as make c-examples builds), copies and fills are one memory.copy or
 * memory.fill instruction each, which Contour meters at one fuel per 64 bytes; without it they
 * are byte loops, several fuel per byte. */
#ifdef __wasm_bulk_memory__
void *memcpy(void *dst, const void *src, size_t n) {
    return __builtin_memcpy(dst, src, n);
}

void *memmove(void *dst, const void *src, size_t n) {
    return __builtin_memmove(dst, src, n);
}

void *memset(void *dst, int c, size_t n) {
    return __builtin_memset(dst, c, n);
}
#else
void *memcpy(void *dst, const void *src, size_t n) {
    uint8_t *d = dst;
    const uint8_t *s = src;
    while (n--) *d++ = *s++;
    return dst;
}

void *memmove(void *dst, const void *src, size_t n) {
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (d < s) {
        while (n--) *d++ = *s++;
    } else {
        while (n--) d[n] = s[n];
    }
    return dst;
}

void *memset(void *dst, int c, size_t n) {
    uint8_t *d = dst;
    while (n--) *d++ = (uint8_t)c;
    return dst;
}
#endif

int memcmp(const void *a, const void *b, size_t n) {
    const uint8_t *x = a, *y = b;
    for (size_t i = 0; i < n; i++) {
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    }
    return 0;
}

/* ---- Allocator: first-fit free list over [__heap_base, memory end) ------------------------------
 *
 * Every block has an 8-byte header (payload size, state tag) and an 8-aligned payload. Free
 * blocks are kept in a list sorted by address and merged with their neighbours; a free block at
 * the top of the heap lowers the top instead. So after the host frees the request and the
 * response, the heap is back where it was and memory stays constant from intent to intent. */

extern uint8_t __heap_base;

typedef struct block {
    uint32_t size; /* payload bytes */
    uint32_t tag;
} block;

typedef struct free_block {
    block header;
    struct free_block *next;
} free_block;

#define TAG_USED 0x7d3a11edu
#define TAG_FREE 0x7d3af4eeu
#define HEADER ((uint32_t)sizeof(block))
#define MIN_PAYLOAD 8u
#define MAX_PAYLOAD 0x7fff0000u

static uintptr_t heap_start; /* 0 until the first call */
static uintptr_t heap_top;
static free_block *free_list;

static void heap_init(void) {
    if (heap_start == 0) {
        heap_start = ((uintptr_t)&__heap_base + 7u) & ~(uintptr_t)7u;
        heap_top = heap_start;
    }
}

static uintptr_t memory_end(void) {
    return (uintptr_t)__builtin_wasm_memory_size(0) * PAGE_BYTES;
}

/* Makes [heap_top, heap_top + total) addressable; false when memory cannot grow. */
static bool heap_reserve(uint32_t total) {
    uintptr_t end = heap_top + total;
    if (end < heap_top) return false;
    uintptr_t have = memory_end();
    if (end <= have) return true;
    size_t pages = (end - have + PAGE_BYTES - 1) / PAGE_BYTES;
    return __builtin_wasm_memory_grow(0, pages) != (size_t)-1;
}

static uint8_t *payload(block *b) {
    return (uint8_t *)b + HEADER;
}

static void *alloc_block(size_t size) {
    heap_init();
    if (size > MAX_PAYLOAD) return 0;
    uint32_t need = ((uint32_t)size + 7u) & ~7u;
    if (need < MIN_PAYLOAD) need = MIN_PAYLOAD;

    free_block **link = &free_list;
    for (free_block *f = free_list; f; link = &f->next, f = f->next) {
        if (f->header.size < need) continue;
        uint32_t rest = f->header.size - need;
        if (rest >= HEADER + MIN_PAYLOAD) {
            /* Split: the tail stays free, in f's place in the list. */
            free_block *tail = (free_block *)(payload(&f->header) + need);
            tail->header.size = rest - HEADER;
            tail->header.tag = TAG_FREE;
            tail->next = f->next;
            *link = tail;
            f->header.size = need;
        } else {
            *link = f->next;
        }
        f->header.tag = TAG_USED;
        return payload(&f->header);
    }

    if (!heap_reserve(HEADER + need)) return 0;
    block *b = (block *)heap_top;
    heap_top += HEADER + need;
    b->size = need;
    b->tag = TAG_USED;
    return payload(b);
}

/* The header of a block tdm_alloc returned, or 0 for any other pointer. */
static block *used_block(void *ptr) {
    uintptr_t p = (uintptr_t)ptr;
    if (heap_start == 0 || p < heap_start + HEADER || p >= heap_top || (p & 7u) != 0) return 0;
    block *b = (block *)(p - HEADER);
    if (b->tag != TAG_USED || p + b->size > heap_top) return 0;
    return b;
}

static uintptr_t block_end(block *b) {
    return (uintptr_t)payload(b) + b->size;
}

static void free_block_at(void *ptr) {
    block *b = used_block(ptr);
    if (!b) return;
    b->tag = TAG_FREE;
    free_block *f = (free_block *)b;

    /* Insert sorted by address, then merge with the neighbours. */
    free_block *prev = 0, *next = free_list;
    while (next && next < f) {
        prev = next;
        next = next->next;
    }
    f->next = next;
    if (prev) prev->next = f;
    else free_list = f;
    if (next && block_end(&f->header) == (uintptr_t)next) {
        f->header.size += HEADER + next->header.size;
        f->next = next->next;
    }
    if (prev && block_end(&prev->header) == (uintptr_t)f) {
        prev->header.size += HEADER + f->header.size;
        prev->next = f->next;
        f = prev;
    }
    /* A free block at the top of the heap lowers the top (it is always the list's last). */
    if (f->next == 0 && block_end(&f->header) == heap_top) {
        heap_top = (uintptr_t)f;
        if (prev == f) {
            /* f merged into prev: find prev's predecessor to unlink it. */
            free_block **link = &free_list;
            while (*link != f) link = &(*link)->next;
            *link = 0;
        } else if (prev) {
            prev->next = 0;
        } else {
            free_list = 0;
        }
    }
}

__attribute__((export_name("tdm_alloc"))) void *tdm_alloc(size_t size) {
    TDM_FUEL_MARK(TDM_MARK_ALLOC_ENTER);
    void *ptr = alloc_block(size);
    TDM_FUEL_MARK(TDM_MARK_ALLOC_EXIT);
    return ptr;
}

__attribute__((export_name("tdm_free"))) void tdm_free(void *ptr, size_t size) {
    (void)size; /* the header knows */
    TDM_FUEL_MARK(TDM_MARK_ALLOC_ENTER);
    free_block_at(ptr);
    TDM_FUEL_MARK(TDM_MARK_ALLOC_EXIT);
}

static void *realloc_block(void *ptr, size_t new_size) {
    if (!ptr) return alloc_block(new_size);
    block *b = used_block(ptr);
    if (!b || new_size > MAX_PAYLOAD) return 0;
    if (new_size <= b->size) return ptr;
    uint32_t need = ((uint32_t)new_size + 7u) & ~7u;
    if (block_end(b) == heap_top) {
        /* The last block grows in place. */
        if (!heap_reserve(need - b->size)) return 0;
        heap_top += need - b->size;
        b->size = need;
        return ptr;
    }
    void *fresh = alloc_block(new_size);
    if (!fresh) return 0;
    memcpy(fresh, ptr, b->size);
    free_block_at(ptr);
    return fresh;
}

void *tdm_realloc(void *ptr, size_t new_size) {
    TDM_FUEL_MARK(TDM_MARK_ALLOC_ENTER);
    void *fresh = realloc_block(ptr, new_size);
    TDM_FUEL_MARK(TDM_MARK_ALLOC_EXIT);
    return fresh;
}

