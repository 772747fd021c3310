/* Parquet writer: dictionary encoding, an open-addressing hash of a
 * column chunk's distinct values. */
#include <stdlib.h>
#include <string.h>

#include "format/parquet_write_int.h"
#include "util/mem.h"

static inline uint64_t hash_bytes(const uint8_t *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull);
    while (n >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        h = (h ^ x) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    if (n) {
        /* the tail byte by byte: a variable-length memcpy would be a call */
        uint64_t x = 0;
        for (size_t i = 0; i < n; i++) x |= (uint64_t)p[i] << (8 * i);
        h = (h ^ x) * 0x94d049bb133111ebull;
    }
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    h ^= h >> 32;
    return h;
}

static int dict_grow(pq_col_t *c)
{
    size_t ns = c->nslots ? c->nslots * 2 : 1024;
    uint64_t *slots = calloc(ns, sizeof *slots);
    if (!slots) return -1;
    for (size_t i = 0; i < c->nslots; i++) {
        uint64_t x = c->slots[i];
        if (!x) continue;
        size_t s = (size_t)(x >> 32) & (ns - 1);
        while (slots[s]) s = (s + 1) & (ns - 1);
        slots[s] = x;
    }
    free(c->slots);
    c->slots = slots;
    c->nslots = ns;
    return 0;
}

static inline bool entry_eq(const pq_col_t *c, uint32_t e, const uint8_t *v, size_t n)
{
    if (c->width == 8) {
        uint64_t a, b;
        memcpy(&a, c->dvals.data + (size_t)e * 8, 8);
        memcpy(&b, v, 8);
        return a == b;
    }
    if (c->width == 4) {
        uint32_t a, b;
        memcpy(&a, c->dvals.data + (size_t)e * 4, 4);
        memcpy(&b, v, 4);
        return a == b;
    }
    if (c->width) return memcmp(c->dvals.data + (size_t)e * c->width, v, n) == 0;
    uint32_t a = c->doff[e], b = c->doff[e + 1];
    if (b - a != n) return false;
    if (n > 32) return memcmp(c->dvals.data + a, v, n) == 0;
    /* short values (the usual dictionary entry): inline, no call */
    return floe_mem_eq_short(c->dvals.data + a, v, n);
}

/* Index of value v (n bytes) in the dictionary, inserting it if new;
 * returns -1 when out of memory. */
int64_t pq_dict_put(pq_col_t *c, const uint8_t *v, size_t n)
{
    uint32_t h;
    if (c->width == 8 || c->width == 4) {
        uint64_t x = 0;
        memcpy(&x, v, c->width);
        x *= 0x9e3779b97f4a7c15ull;
        h = (uint32_t)(x >> 32) ^ (uint32_t)x;
    } else {
        h = (uint32_t)hash_bytes(v, n);
    }
    if ((c->dict_n + 1) * 2 > c->nslots && dict_grow(c) < 0) return -1;
    size_t mask = c->nslots - 1, s = h & mask;
    for (;;) {
        uint64_t x = c->slots[s];
        if (!x) break;
        if ((uint32_t)(x >> 32) == h) {
            uint32_t e = (uint32_t)x - 1;
            if (entry_eq(c, e, v, n)) return e;
        }
        s = (s + 1) & mask;
    }
    if (!c->width && c->dict_n + 2 > c->doff_cap) {
        bool first = !c->doff;
        if (floe_grow(&c->doff, &c->doff_cap, c->dict_n + 2, sizeof *c->doff) != 0) return -1;
        if (first) c->doff[0] = 0;
    }
    if (!c->width && c->dvals.len + n > UINT32_MAX) return -1;
    /* allocated even when every entry so far is empty: entries point into it */
    if (!c->dvals.data && floe_buf_reserve(&c->dvals, 64) < 0) return -1;
    if (floe_buf_append(&c->dvals, v, n) < 0) return -1;
    size_t e = c->dict_n++;
    if (!c->width) {
        c->doff[e + 1] = (uint32_t)c->dvals.len;
        c->dict_bytes += 4 + n;
    } else {
        c->dict_bytes += n;
    }
    c->slots[s] = ((uint64_t)h << 32) | (uint64_t)(e + 1);
    return (int64_t)e;
}
