/* SPDX-License-Identifier: Apache-2.0
 * Small helpers of the demo and test programs (not the library): xorshift32, CRC-32, little-endian
 * fields, hex. The Python tests re-implement xorshift32 from this definition:
 *   x ^= x << 13; x ^= x >> 17; x ^= x << 5   (32 bits; the seed must not be 0) */
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

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32) */
static inline uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c >> 1 ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

static inline void le_put(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t le_get(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static inline int hex_nibble(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* `n` bytes from 2n hex digits; -1 when `s` is not exactly that */
static inline int hex_decode(uint8_t *out, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++) {
        int h = hex_nibble(s[2 * i]), l = h < 0 ? -1 : hex_nibble(s[2 * i + 1]);
        if (h < 0 || l < 0)
            return -1;
        out[i] = (uint8_t)(h << 4 | l);
    }
    return hex_nibble(s[2 * n]) < 0 ? 0 : -1;
}

static inline void hex_encode(char *out, const uint8_t *p, size_t n)
{
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = d[p[i] >> 4];
        out[2 * i + 1] = d[p[i] & 15];
    }
    out[2 * n] = 0;
}
#endif
