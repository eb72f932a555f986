/* SPDX-License-Identifier: Apache-2.0
 * Small helpers shared by the demo and the test programs: xorshift32 (the generator the Python
 * tests replay: x ^= x << 13; x ^= x >> 17; x ^= x << 5, on 32 bits) and CRC-32 (zlib's). */
#ifndef ATSTX_DEMO_UTIL_H
#define ATSTX_DEMO_UTIL_H
#include <stddef.h>
#include <stdint.h>

static inline uint32_t xs32(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

/* `n` bytes of the xorshift32 stream seeded with `seed` (0 is replaced by 1), 4 bytes a step,
 * little endian */
static inline void fill_pattern(uint8_t *p, size_t n, uint32_t seed)
{
    uint32_t x = seed ? seed : 1;
    for (size_t i = 0; i < n; i += 4) {
        uint32_t v = xs32(&x);
        for (size_t k = 0; k < 4 && i + k < n; k++)
            p[i + k] = (uint8_t)(v >> (8 * k));
    }
}

static inline uint32_t crc32_z(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c >> 1 ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}
#endif
