/* Random bytes for identifiers (rand.h). */
#include "util/rand.h"

#include <stdatomic.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static _Atomic uint64_t fallback_calls;

void floe_rand_bytes(void *out, size_t n)
{
    uint8_t *p = out;
    while (n) {
        ssize_t r = getrandom(p, n, GRND_NONBLOCK);
        if (r <= 0) break;
        p += r;
        n -= (size_t)r;
    }
    if (!n) return;
    /* splitmix64 over the clock, the pid and a per-process counter */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 48) ^
                 (atomic_fetch_add(&fallback_calls, 1) * 0x9e3779b97f4a7c15ULL);
    while (n) {
        x += 0x9e3779b97f4a7c15ULL;
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        for (int i = 0; i < 8 && n; i++, n--) *p++ = (uint8_t)(z >> (8 * i));
    }
}

uint64_t floe_rand_u64(void)
{
    uint64_t v;
    floe_rand_bytes(&v, sizeof v);
    return v;
}
