/* Parquet value and level encodings: RLE/bit-packed hybrid,
 * DELTA_BINARY_PACKED, bit-packed booleans; and their checked decoders. */
#include <string.h>

#include "format/parquet_int.h"
#include "util/varint.h"

static inline uint8_t *put_uvarint(uint8_t *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

/* Pack 8 values of bw (<= 32) bits LSB-first into bw bytes. */
static inline uint8_t *pack8(uint8_t *o, const uint32_t *v, int bw)
{
    uint64_t acc = 0;
    int nb = 0;
    for (int k = 0; k < 8; k++) {
        acc |= (uint64_t)v[k] << nb;
        nb += bw;
        while (nb >= 8) {
            *o++ = (uint8_t)acc;
            acc >>= 8;
            nb -= 8;
        }
    }
    return o;
}

#define RLE_ENCODER(NAME, T)                                                                 \
    int NAME(floe_buf_t *out, const T *v, size_t n, int bw)                                  \
    {                                                                                        \
        size_t vb = (size_t)(bw + 7) / 8;                                                    \
        size_t worst = n / 8 * (size_t)bw + (n / 8 + 2) * 12 + 32;                           \
        if (floe_buf_reserve(out, worst) < 0) return -1;                                     \
        uint8_t *o = out->data + out->len;                                                   \
        size_t i = 0;                                                                        \
        uint32_t tmp[8];                                                                     \
        while (i < n) {                                                                      \
            T x = v[i];                                                                      \
            size_t j = i + 1;                                                                \
            while (j < n && v[j] == x) j++;                                                  \
            if (j - i >= 8 || j == n) {                                                      \
                o = put_uvarint(o, (uint64_t)(j - i) << 1);                                  \
                uint32_t u = (uint32_t)x;                                                    \
                for (size_t b = 0; b < vb; b++) *o++ = (uint8_t)(u >> (8 * b));              \
                i = j;                                                                       \
                continue;                                                                    \
            }                                                                                \
            uint8_t *hdr = o++;                                                              \
            size_t groups = 0;                                                               \
            while (i < n && groups < 63) {                                                   \
                if (groups > 0 && i + 8 <= n) {                                              \
                    T y = v[i];                                                              \
                    size_t k = 1;                                                            \
                    while (k < 8 && v[i + k] == y) k++;                                      \
                    if (k == 8) break;                                                       \
                }                                                                            \
                if (i + 8 <= n) {                                                            \
                    for (int k = 0; k < 8; k++) tmp[k] = (uint32_t)v[i + k];                 \
                } else {                                                                     \
                    for (int k = 0; k < 8; k++) tmp[k] = i + k < n ? (uint32_t)v[i + k] : 0; \
                }                                                                            \
                o = pack8(o, tmp, bw);                                                       \
                i += 8;                                                                      \
                groups++;                                                                    \
            }                                                                                \
            *hdr = (uint8_t)((groups << 1) | 1);                                             \
            if (i > n) i = n;                                                                \
        }                                                                                    \
        out->len = (size_t)(o - out->data);                                                  \
        return 0;                                                                            \
    }

RLE_ENCODER(pq_rle_encode_u32, uint32_t)
RLE_ENCODER(pq_rle_encode_u8, uint8_t)

int pq_bool_pack(floe_buf_t *out, const uint8_t *v, size_t n)
{
    if (floe_buf_reserve(out, n / 8 + 1) < 0) return -1;
    uint8_t *o = out->data + out->len;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint8_t b = 0;
        for (int k = 0; k < 8; k++) b |= (uint8_t)((v[i + k] != 0) << k);
        *o++ = b;
    }
    if (i < n) {
        uint8_t b = 0;
        for (int k = 0; i + (size_t)k < n; k++) b |= (uint8_t)((v[i + k] != 0) << k);
        *o++ = b;
    }
    out->len = (size_t)(o - out->data);
    return 0;
}

/* Pack 32 values of bw (<= 64) bits LSB-first. */
static uint8_t *pack32_64(uint8_t *o, const uint64_t *v, int bw)
{
    if (bw == 0) return o;
    unsigned __int128 acc = 0;
    int nb = 0;
    for (int k = 0; k < 32; k++) {
        acc |= (unsigned __int128)v[k] << nb;
        nb += bw;
        while (nb >= 8) {
            *o++ = (uint8_t)acc;
            acc >>= 8;
            nb -= 8;
        }
    }
    return o;
}

#define DBP_BLOCK 128
#define DBP_MINI 4

static int delta_encode(floe_buf_t *out, const void *vals, size_t n, bool is32, bool src32)
{
    if (floe_buf_reserve(out, 32 + (n / DBP_BLOCK + 1) * (10 + DBP_MINI) + n * (is32 ? 4 : 8) +
                                  8 * 32) < 0)
        return -1;
    const int64_t *v64 = vals;
    const int32_t *v32 = vals;
#define VAL(i) (src32 ? (int64_t)v32[i] : v64[i])
    uint8_t *o = out->data + out->len;
    o = put_uvarint(o, DBP_BLOCK);
    o = put_uvarint(o, DBP_MINI);
    o = put_uvarint(o, n);
    int64_t first = n ? VAL(0) : 0;
    o = put_uvarint(o, is32 ? floe_zigzag32((int32_t)first) : floe_zigzag64(first));
    uint64_t d[DBP_BLOCK];
    size_t i = 1;
    int64_t prev = first;
    while (i < n) {
        size_t cnt = n - i < DBP_BLOCK ? n - i : DBP_BLOCK;
        int64_t mn = INT64_MAX;
        for (size_t k = 0; k < cnt; k++) {
            int64_t x = VAL(i + k);
            int64_t dd = is32 ? (int64_t)(int32_t)((uint32_t)x - (uint32_t)prev)
                              : (int64_t)((uint64_t)x - (uint64_t)prev);
            prev = x;
            d[k] = (uint64_t)dd;
            if (dd < mn) mn = dd;
        }
        o = put_uvarint(o, is32 ? floe_zigzag32((int32_t)mn) : floe_zigzag64(mn));
        uint8_t *widths = o;
        o += DBP_MINI;
        for (size_t k = 0; k < cnt; k++) {
            d[k] = is32 ? (uint64_t)(uint32_t)((uint32_t)d[k] - (uint32_t)mn) : d[k] - (uint64_t)mn;
        }
        for (size_t k = cnt; k < DBP_BLOCK; k++) d[k] = 0;
        for (int m = 0; m < DBP_MINI; m++) {
            size_t s = (size_t)m * 32;
            if (s >= cnt) {
                widths[m] = 0;
                continue;
            }
            uint64_t orv = 0;
            for (int k = 0; k < 32; k++) orv |= d[s + (size_t)k];
            int bw = pq_bit_width(orv);
            widths[m] = (uint8_t)bw;
            o = pack32_64(o, d + s, bw);
        }
        i += cnt;
    }
#undef VAL
    out->len = (size_t)(o - out->data);
    return 0;
}

int pq_delta_encode(floe_buf_t *out, const int64_t *v, size_t n, bool is32)
{
    return delta_encode(out, v, n, is32, false);
}

int pq_delta_encode_i32(floe_buf_t *out, const int32_t *v, size_t n)
{
    return delta_encode(out, v, n, true, true);
}

/* ---- decoders ---- */

/* Value idx of bw (<= 64) bits from LSB-first packed data; caller checked
 * that the bytes exist. */
static inline uint64_t unpack_at(const uint8_t *p, size_t idx, int bw)
{
    if (bw == 0) return 0;
    if (bw <= 56) {
        /* the value's bytes all exist; read only those */
        size_t bit = idx * (size_t)bw;
        const uint8_t *b = p + (bit >> 3);
        int sh = (int)(bit & 7);
        int nbytes = (sh + bw + 7) / 8;
        uint64_t x = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (nbytes == 8) memcpy(&x, b, 8);
        else
#endif
            for (int k = 0; k < nbytes; k++) x |= (uint64_t)b[k] << (8 * k);
        return (x >> sh) & ((1ull << bw) - 1);
    }
    size_t bit = idx * (size_t)bw;
    const uint8_t *b = p + (bit >> 3);
    int sh = (int)(bit & 7);
    int nbytes = (sh + bw + 7) / 8;
    unsigned __int128 acc = 0;
    for (int k = 0; k < nbytes; k++) acc |= (unsigned __int128)b[k] << (8 * k);
    acc >>= sh;
    return bw == 64 ? (uint64_t)acc : (uint64_t)acc & ((1ull << bw) - 1);
}

void pq_rle_dec_init(pq_rle_dec_t *d, const uint8_t *p, size_t n, int bw)
{
    memset(d, 0, sizeof *d);
    d->p = p;
    d->end = p + n;
    d->bw = bw;
}

static int rle_next_run(pq_rle_dec_t *d)
{
    uint64_t h;
    int k = floe_uvarint64_decode(d->p, (size_t)(d->end - d->p), &h);
    if (k < 0) return -1;
    d->p += k;
    if (h & 1) {
        uint64_t groups = h >> 1;
        size_t avail = (size_t)(d->end - d->p);
        size_t need = (size_t)groups * (size_t)d->bw;
        if (groups > (1u << 26)) return -1;
        /* tolerate a short final run: only values whose bits are present */
        size_t nvals = groups * 8;
        if (need > avail) {
            if (d->bw == 0) return -1;
            nvals = avail * 8 / (size_t)d->bw;
            need = avail;
        }
        d->bp = d->p;
        d->bp_len = need;
        d->bp_idx = 0;
        d->bp_left = nvals;
        d->p += need;
    } else {
        size_t vb = (size_t)(d->bw + 7) / 8;
        if ((size_t)(d->end - d->p) < vb) return -1;
        uint32_t x = 0;
        for (size_t b = 0; b < vb; b++) x |= (uint32_t)d->p[b] << (8 * b);
        d->p += vb;
        if (h >> 1 > UINT32_MAX) return -1;
        d->rle_left = (uint32_t)(h >> 1);
        d->rle_val = x;
    }
    return 0;
}

int pq_rle_dec_u32(pq_rle_dec_t *d, uint32_t *out, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (d->rle_left) {
            size_t k = n - i < d->rle_left ? n - i : d->rle_left;
            for (size_t j = 0; j < k; j++) out[i + j] = d->rle_val;
            i += k;
            d->rle_left -= (uint32_t)k;
        } else if (d->bp_left) {
            size_t k = n - i < d->bp_left ? n - i : d->bp_left, j = 0;
            if (d->bw <= 32) {
                /* one unaligned 8-byte load per value while 8 bytes remain
                 * in the run (a value spans at most 5) */
                const int bw = d->bw;
                const uint64_t mask = (1ull << bw) - 1;
                for (; j < k; j++) {
                    size_t bit = (d->bp_idx + j) * (size_t)bw;
                    if ((bit >> 3) + 8 > d->bp_len) break;
                    uint64_t x;
                    memcpy(&x, d->bp + (bit >> 3), 8);
                    out[i + j] = (uint32_t)((x >> (bit & 7)) & mask);
                }
            }
            for (; j < k; j++) out[i + j] = (uint32_t)unpack_at(d->bp, d->bp_idx + j, d->bw);
            d->bp_idx += k;
            d->bp_left -= k;
            i += k;
        } else {
            if (d->p >= d->end || rle_next_run(d) < 0) return -1;
        }
    }
    return 0;
}

int pq_rle_count(pq_rle_dec_t *d, size_t n, uint32_t max, uint32_t want, uint64_t *count,
                 uint32_t *first)
{
    uint32_t buf[256];
    uint64_t c = 0;
    size_t i = 0;
    while (i < n) {
        if (d->rle_left) {
            /* a run: counted whole */
            size_t k = n - i < d->rle_left ? n - i : d->rle_left;
            if (d->rle_val > max) return -1;
            if (i == 0) *first = d->rle_val;
            if (d->rle_val == want) c += k;
            d->rle_left -= (uint32_t)k;
            i += k;
        } else if (d->bp_left) {
            size_t k = n - i < d->bp_left ? n - i : d->bp_left;
            if (k > 256) k = 256;
            if (pq_rle_dec_u32(d, buf, k) < 0) return -1;
            if (i == 0) *first = buf[0];
            uint32_t top = 0;
            for (size_t j = 0; j < k; j++) {
                top = buf[j] > top ? buf[j] : top;
                c += buf[j] == want;
            }
            if (top > max) return -1;
            i += k;
        } else if (d->p >= d->end || rle_next_run(d) < 0) {
            return -1;
        }
    }
    *count = c;
    return 0;
}

int pq_rle_dec_i16(pq_rle_dec_t *d, int16_t *out, size_t n, int16_t max)
{
    uint32_t buf[256];
    size_t i = 0;
    while (i < n) {
        size_t k = n - i < 256 ? n - i : 256;
        if (pq_rle_dec_u32(d, buf, k) < 0) return -1;
        for (size_t j = 0; j < k; j++) {
            if (buf[j] > (uint32_t)max) return -1;
            out[i + j] = (int16_t)buf[j];
        }
        i += k;
    }
    return 0;
}

static int hdr_uvarint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    int k = floe_uvarint64_decode(*p, (size_t)(end - *p), v);
    if (k < 0) return -1;
    *p += k;
    return 0;
}

int pq_delta_count(const uint8_t *p, size_t n, size_t *count, floe_err_t *err)
{
    const uint8_t *end = p + n;
    uint64_t bs, mb, cnt;
    if (hdr_uvarint(&p, end, &bs) < 0 || hdr_uvarint(&p, end, &mb) < 0 ||
        hdr_uvarint(&p, end, &cnt) < 0)
        return floe_err_set(err, FLOE_ECORRUPT, "truncated DELTA_BINARY_PACKED header");
    if (cnt > (1u << 31))
        return floe_err_set(err, FLOE_ECORRUPT, "DELTA_BINARY_PACKED count too large");
    *count = (size_t)cnt;
    return 0;
}

int pq_delta_decode(const uint8_t *p, size_t n, int64_t *out, size_t count, bool is32,
                    size_t *consumed, floe_err_t *err)
{
    const uint8_t *start = p, *end = p + n;
    uint64_t bs, mb, total, zfirst;
    if (hdr_uvarint(&p, end, &bs) < 0 || hdr_uvarint(&p, end, &mb) < 0 ||
        hdr_uvarint(&p, end, &total) < 0 || hdr_uvarint(&p, end, &zfirst) < 0)
        return floe_err_set(err, FLOE_ECORRUPT, "truncated DELTA_BINARY_PACKED header");
    if (bs == 0 || bs % 128 || bs > 65536 || mb == 0 || bs % mb || (bs / mb) % 32 || mb > 512)
        return floe_err_set(err, FLOE_ECORRUPT, "bad DELTA_BINARY_PACKED block layout");
    if (total != count)
        return floe_err_set(err, FLOE_ECORRUPT,
                            "DELTA_BINARY_PACKED holds %llu values, expected %zu",
                            (unsigned long long)total, count);
    size_t per_mb = (size_t)(bs / mb);
    int64_t prev = floe_unzigzag64(zfirst);
    if (is32) prev = (int32_t)prev;
    size_t i = 0;
    if (count > 0) out[i++] = prev;
    while (i < count) {
        uint64_t zmin;
        if (hdr_uvarint(&p, end, &zmin) < 0) goto trunc;
        int64_t mn = floe_unzigzag64(zmin);
        if ((size_t)(end - p) < mb) goto trunc;
        const uint8_t *widths = p;
        p += mb;
        for (size_t m = 0; m < mb && i < count; m++) {
            int bw = widths[m];
            if (bw > 64)
                return floe_err_set(err, FLOE_ECORRUPT, "DELTA_BINARY_PACKED bit width %d", bw);
            size_t bytes = per_mb * (size_t)bw / 8;
            size_t k = count - i < per_mb ? count - i : per_mb;
            size_t need = (k * (size_t)bw + 7) / 8;
            if ((size_t)(end - p) < need) goto trunc;
            for (size_t j = 0; j < k; j++) {
                uint64_t u = unpack_at(p, j, bw);
                if (is32) prev = (int32_t)((uint32_t)prev + (uint32_t)mn + (uint32_t)u);
                else
                    prev = (int64_t)((uint64_t)prev + (uint64_t)mn + u);
                out[i++] = prev;
            }
            p += (size_t)(end - p) < bytes ? (size_t)(end - p) : bytes;
        }
    }
    if (consumed) *consumed = (size_t)(p - start);
    return 0;
trunc:
    return floe_err_set(err, FLOE_ECORRUPT, "truncated DELTA_BINARY_PACKED data");
}
