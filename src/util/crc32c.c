#include "util/crc32c.h"

#include <string.h>

#define POLY 0x82F63B78u /* reflected Castagnoli polynomial */

static uint32_t table[8][256];
static int table_ready;

static void make_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (POLY & (0u - (c & 1)));
        table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
    __atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

uint32_t floe_crc32c_sw(uint32_t crc, const void *buf, size_t n)
{
    if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) make_table();
    const uint8_t *p = buf;
    uint32_t c = ~crc;
    while (n && ((uintptr_t)p & 7)) {
        c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
        n--;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= c; /* little-endian: low byte first */
        c = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^
            table[4][(w >> 24) & 0xff] ^ table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
            table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n--) c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
    return ~c;
}

#if defined(__x86_64__)
#include <pthread.h>

/* The hardware path runs three independent streams over three adjacent
 * blocks of BLK bytes (the crc32 instruction has a latency of about three
 * cycles but accepts one per cycle), then joins them.  The raw CRC state
 * (no pre/post inversion) is affine: state(s, A||B) = Z(state(s, A)) ^
 * state(0, B), where Z advances a state over BLK zero bytes.  Z is linear
 * in the 32-bit state, so it is four table lookups (shift_tab), built once
 * by running the instruction over zeros. */
#define BLK 1024
static uint32_t shift_tab[4][256];
static pthread_once_t shift_once = PTHREAD_ONCE_INIT;

__attribute__((target("sse4.2"))) static uint32_t zeros_hw(uint32_t c, size_t n)
{
    uint64_t v = c;
    for (size_t i = 0; i < n / 8; i++) v = __builtin_ia32_crc32di(v, 0);
    return (uint32_t)v;
}

static void make_shift_tab(void)
{
    for (int k = 0; k < 4; k++)
        for (uint32_t v = 0; v < 256; v++) shift_tab[k][v] = zeros_hw(v << (8 * k), BLK);
}

static inline uint32_t shift_blk(uint32_t c)
{
    return shift_tab[0][c & 0xff] ^ shift_tab[1][(c >> 8) & 0xff] ^ shift_tab[2][(c >> 16) & 0xff] ^
           shift_tab[3][c >> 24];
}

__attribute__((target("sse4.2"))) uint32_t floe_crc32c_hw(uint32_t crc, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    uint64_t c = ~crc;
    while (n && ((uintptr_t)p & 7)) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        n--;
    }
    if (n >= 3 * BLK) {
        pthread_once(&shift_once, make_shift_tab);
        do {
            uint64_t c0 = c, c1 = 0, c2 = 0;
            for (size_t i = 0; i < BLK; i += 8) {
                uint64_t w0, w1, w2;
                memcpy(&w0, p + i, 8);
                memcpy(&w1, p + BLK + i, 8);
                memcpy(&w2, p + 2 * BLK + i, 8);
                c0 = __builtin_ia32_crc32di(c0, w0);
                c1 = __builtin_ia32_crc32di(c1, w1);
                c2 = __builtin_ia32_crc32di(c2, w2);
            }
            c = shift_blk(shift_blk((uint32_t)c0) ^ (uint32_t)c1) ^ (uint32_t)c2;
            p += 3 * BLK;
            n -= 3 * BLK;
        } while (n >= 3 * BLK);
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        n -= 8;
    }
    while (n--) c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    return ~(uint32_t)c;
}

bool floe_crc32c_hw_available(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}
#else
uint32_t floe_crc32c_hw(uint32_t crc, const void *buf, size_t n)
{
    return floe_crc32c_sw(crc, buf, n);
}

bool floe_crc32c_hw_available(void)
{
    return false;
}
#endif

uint32_t floe_crc32c(uint32_t crc, const void *p, size_t n)
{
    static int use_hw = -1;
    int hw = __atomic_load_n(&use_hw, __ATOMIC_RELAXED);
    if (hw < 0) {
        hw = floe_crc32c_hw_available() ? 1 : 0;
        __atomic_store_n(&use_hw, hw, __ATOMIC_RELAXED);
    }
    return hw ? floe_crc32c_hw(crc, p, n) : floe_crc32c_sw(crc, p, n);
}
