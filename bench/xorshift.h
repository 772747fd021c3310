/* A fixed-seed xorshift64 generator, so every benchmark run generates the
 * same data. */
#ifndef FLOE_BENCH_XORSHIFT_H
#define FLOE_BENCH_XORSHIFT_H

#include <stdint.h>

static uint64_t bench_rng = 88172645463325252ull;

static inline uint64_t bench_next(void)
{
    bench_rng ^= bench_rng << 13;
    bench_rng ^= bench_rng >> 7;
    bench_rng ^= bench_rng << 17;
    return bench_rng;
}

#endif
