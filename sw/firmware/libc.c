// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: the few C library functions the firmware (and gcc) use, freestanding.
#include <stddef.h>
#include <stdint.h>

// word-wise when the pointers are word-aligned (structure copies, table clears: a byte at a time,
// the recovery's sort of its log records took half of a recovery's cycles, issue 35); never turned
// into calls to themselves
#define ATS_LIBC __attribute__((optimize("no-tree-loop-distribute-patterns")))

ATS_LIBC void *memset(void *d, int c, size_t n) {
    uint8_t *p = d;
    if (((uintptr_t)p & 3u) == 0) {
        const uint32_t w = 0x01010101u * (uint8_t)c;
        uint32_t *pw = (uint32_t *)p;
        for (; n >= 4u; n -= 4u) *pw++ = w;
        p = (uint8_t *)pw;
    }
    while (n--) *p++ = (uint8_t)c;
    return d;
}

ATS_LIBC void *memcpy(void *d, const void *s, size_t n) {
    uint8_t *p = d;
    const uint8_t *q = s;
    if ((((uintptr_t)p | (uintptr_t)q) & 3u) == 0) {
        uint32_t *pw = (uint32_t *)p;
        const uint32_t *qw = (const uint32_t *)q;
        for (; n >= 4u; n -= 4u) *pw++ = *qw++;
        p = (uint8_t *)pw;
        q = (const uint8_t *)qw;
    }
    while (n--) *p++ = *q++;
    return d;
}

int strcmp(const char *a, const char *b) {
    while (*a && *a == *b) { a++; b++; }
    return (unsigned char)*a - (unsigned char)*b;
}
