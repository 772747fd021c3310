/* Block compression core (compress.h) over zlib, snappy, lz4 and zstd.
 * Every decoder of unknown-size data writes into a caller buffer grown in
 * bounded steps and stops at the cap. */
#include "util/compress.h"

#include <limits.h>
#include <lz4.h>
#include <lz4frame.h>
#include <pthread.h>
#include <snappy-c.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include <zstd.h>

struct floe_codec_ctx {
    int level;
    ZSTD_CCtx *zc;
    ZSTD_DCtx *zd;
};

floe_codec_ctx_t *floe_codec_ctx_new(int level)
{
    floe_codec_ctx_t *c = calloc(1, sizeof *c);
    if (c) c->level = level;
    return c;
}

void floe_codec_ctx_free(floe_codec_ctx_t *ctx)
{
    if (!ctx) return;
    ZSTD_freeCCtx(ctx->zc);
    ZSTD_freeDCtx(ctx->zd);
    free(ctx);
}

static const char *const names[FLOE_CODEC_COUNT] = {"none", "snappy",  "gzip",     "deflate",
                                                    "zstd", "lz4_raw", "lz4_frame"};

const char *floe_codec_name(floe_codec_t c)
{
    return (unsigned)c < FLOE_CODEC_COUNT ? names[c] : "unknown";
}

int floe_codec_parse(const char *name, floe_codec_t *out)
{
    if (!name) return -1;
    for (int i = 0; i < FLOE_CODEC_COUNT; i++)
        if (strcasecmp(name, names[i]) == 0) {
            *out = (floe_codec_t)i;
            return 0;
        }
    if (!strcasecmp(name, "uncompressed") || !strcasecmp(name, "null")) {
        *out = FLOE_CODEC_NONE;
        return 0;
    }
    if (!strcasecmp(name, "lz4")) {
        *out = FLOE_CODEC_LZ4_RAW;
        return 0;
    }
    return -1;
}

/* ---- zstd decompression contexts ---- */

/* A caller without a context gets one per thread, kept between calls:
 * making one costs ~50 us, ten times the decompression of a small Kafka
 * batch.  Freed when the thread exits. */
static pthread_key_t zstd_key;
static pthread_once_t zstd_once = PTHREAD_ONCE_INIT;

static void zstd_free_ctx(void *p)
{
    ZSTD_freeDCtx(p);
}
static void zstd_make_key(void)
{
    pthread_key_create(&zstd_key, zstd_free_ctx);
}

static ZSTD_DCtx *new_dctx(void)
{
    ZSTD_DCtx *d = ZSTD_createDCtx();
    /* the window a frame may ask for is bounded too (128 MiB) */
    if (d) ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, 27);
    return d;
}

/* The caller's context, or this thread's; reset for a new frame. */
static ZSTD_DCtx *dctx_of(floe_codec_ctx_t *ctx)
{
    ZSTD_DCtx *d;
    if (ctx) {
        if (!ctx->zd) ctx->zd = new_dctx();
        d = ctx->zd;
    } else {
        pthread_once(&zstd_once, zstd_make_key);
        d = pthread_getspecific(zstd_key);
        if (!d) {
            if (!(d = new_dctx())) return NULL;
            if (pthread_setspecific(zstd_key, d) != 0) {
                ZSTD_freeDCtx(d);
                return NULL;
            }
        }
    }
    if (d) ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
    return d;
}

/* ---- compression ---- */

static int zlib_compress(int level, int window_bits, const void *src, size_t n, floe_buf_t *out,
                         floe_err_t *err)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (level <= 0 || level > 9) level = 6;
    if (deflateInit2(&zs, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return floe_err_set(err, FLOE_ENOMEM, "deflateInit failed");
    size_t bound = deflateBound(&zs, (uLong)n);
    if (floe_buf_reserve(out, bound) < 0) {
        deflateEnd(&zs);
        return floe_err_oom(err);
    }
    zs.next_in = (Bytef *)(uintptr_t)src;
    zs.avail_in = (uInt)n;
    zs.next_out = out->data + out->len;
    zs.avail_out = (uInt)bound;
    int rc = deflate(&zs, Z_FINISH);
    size_t produced = bound - zs.avail_out;
    deflateEnd(&zs);
    if (rc != Z_STREAM_END) return floe_err_set(err, FLOE_EIO, "deflate failed (%d)", rc);
    out->len += produced;
    return 0;
}

static int zstd_compress(floe_codec_ctx_t *ctx, const void *src, size_t n, floe_buf_t *out,
                         floe_err_t *err)
{
    size_t cap = ZSTD_compressBound(n);
    /* the bound, not the next power of two past it: a page buffer reused
     * for every page stays at one page's size */
    if (floe_buf_reserve_settle(out, cap, out->len + cap + cap / 16) < 0) return floe_err_oom(err);
    int level = ctx && ctx->level ? ctx->level : 3;
    size_t r;
    if (ctx) {
        if (!ctx->zc && !(ctx->zc = ZSTD_createCCtx()))
            return floe_err_set(err, FLOE_ENOMEM, "ZSTD_createCCtx failed");
        r = ZSTD_compressCCtx(ctx->zc, out->data + out->len, cap, src, n, level);
    } else {
        r = ZSTD_compress(out->data + out->len, cap, src, n, level);
    }
    if (ZSTD_isError(r)) return floe_err_set(err, FLOE_EIO, "zstd: %s", ZSTD_getErrorName(r));
    out->len += r;
    return 0;
}

static int lz4_frame_compress(int level, const void *src, size_t n, floe_buf_t *out,
                              floe_err_t *err)
{
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof prefs);
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.contentSize = n;
    prefs.compressionLevel = level;
    size_t bound = LZ4F_compressFrameBound(n, &prefs);
    if (floe_buf_reserve(out, bound) != 0) return floe_err_oom(err);
    size_t got = LZ4F_compressFrame(out->data + out->len, bound, src, n, &prefs);
    if (LZ4F_isError(got)) return floe_err_set(err, FLOE_EIO, "lz4: %s", LZ4F_getErrorName(got));
    out->len += got;
    return 0;
}

int floe_compress(floe_codec_ctx_t *ctx, floe_codec_t c, const void *src, size_t n, floe_buf_t *out,
                  floe_err_t *err)
{
    if (n > INT_MAX)
        return floe_err_set(err, FLOE_ERANGE, "block of %zu bytes too large to compress", n);
    int level = ctx ? ctx->level : 0;
    switch (c) {
    case FLOE_CODEC_NONE:
        if (floe_buf_append(out, src, n) < 0) return floe_err_oom(err);
        return 0;
    case FLOE_CODEC_SNAPPY: {
        size_t cap = snappy_max_compressed_length(n);
        if (floe_buf_reserve(out, cap) < 0) return floe_err_oom(err);
        if (snappy_compress(src, n, (char *)out->data + out->len, &cap) != SNAPPY_OK)
            return floe_err_set(err, FLOE_EIO, "snappy compression failed");
        out->len += cap;
        return 0;
    }
    case FLOE_CODEC_GZIP: return zlib_compress(level, 15 + 16, src, n, out, err);
    case FLOE_CODEC_DEFLATE: return zlib_compress(level, -15, src, n, out, err);
    case FLOE_CODEC_ZSTD: return zstd_compress(ctx, src, n, out, err);
    case FLOE_CODEC_LZ4_RAW: {
        int cap = LZ4_compressBound((int)n);
        if (cap <= 0 || floe_buf_reserve(out, (size_t)cap) < 0) return floe_err_oom(err);
        int r = LZ4_compress_default(src, (char *)out->data + out->len, (int)n, cap);
        if (r <= 0 && n > 0) return floe_err_set(err, FLOE_EIO, "lz4 compression failed");
        out->len += (size_t)r;
        return 0;
    }
    case FLOE_CODEC_LZ4_FRAME: return lz4_frame_compress(level, src, n, out, err);
    default: return floe_err_set(err, FLOE_EUNSUPPORTED, "unknown codec %d", (int)c);
    }
}

/* ---- decompression of unknown size ---- */

/* Grow step for streaming decoders: at most this much past what is in. */
#define STEP (256u * 1024)

/* Make room for up to `want` more bytes, never past max_out in total
 * (counting from base).  Returns the room made (> 0), or 0 at the cap, or
 * (size_t)-1 on allocation failure. */
static size_t grow(floe_buf_t *out, size_t base, size_t max_out, size_t want)
{
    size_t produced = out->len - base;
    if (produced >= max_out) return 0;
    size_t room = max_out - produced;
    if (want > room) want = room;
    if (want == 0) want = 1;
    if (out->cap - out->len < want && floe_buf_reserve(out, want) != 0) return (size_t)-1;
    size_t have = out->cap - out->len;
    return have < room ? have : room;
}

/* First output reservation of a streaming decoder: a few times the input
 * (blocks compress 2-10x), at least 4 KiB, at most STEP; later ones
 * double.  Small blocks then cost small buffers. */
static size_t first_step(size_t n)
{
    size_t w = n < STEP / 4 ? n * 4 : STEP;
    return w < 4096 ? 4096 : w;
}

static size_t next_step(size_t step)
{
    return step * 2 < STEP ? step * 2 : STEP;
}

static int cap_err(floe_err_t *err, floe_codec_t c, size_t max_out)
{
    return floe_err_set(err, FLOE_ERANGE, "%s: decompressed data exceeds the cap of %zu bytes",
                        floe_codec_name(c), max_out);
}

/* Room for a streaming decoder's next step (the step then doubles); 0
 * with err filled at the cap or when out of memory. */
static size_t step_room(floe_buf_t *out, size_t base, size_t max_out, size_t *step, floe_codec_t c,
                        floe_err_t *err)
{
    size_t room = grow(out, base, max_out, *step);
    *step = next_step(*step);
    if (room == (size_t)-1) {
        floe_err_oom(err);
        return 0;
    }
    if (room == 0) cap_err(err, c, max_out);
    return room;
}

/* gzip (also zlib-wrapped, and gzip members back to back, which Java's
 * GZIPInputStream accepts), or one raw deflate stream (bytes after its end
 * are ignored). */
static int zlib_decompress(floe_codec_t c, const uint8_t *in, size_t n, floe_buf_t *out,
                           size_t base, size_t max_out, floe_err_t *err)
{
    bool gzip = c == FLOE_CODEC_GZIP;
    const char *name = floe_codec_name(c);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, gzip ? 15 + 32 : -15) != Z_OK)
        return floe_err_set(err, FLOE_ENOMEM, "%s: inflateInit failed", name);
    int rc = -1;
    const uint8_t *p = in;
    size_t left = n, step = first_step(n);
    for (;;) {
        size_t room = step_room(out, base, max_out, &step, c, err);
        if (room == 0) goto done;
        if (room > UINT_MAX) room = UINT_MAX;
        unsigned in_chunk = left > UINT_MAX ? UINT_MAX : (unsigned)left;
        zs.next_in = (Bytef *)p;
        zs.avail_in = in_chunk;
        zs.next_out = out->data + out->len;
        zs.avail_out = (unsigned)room;
        int z = inflate(&zs, Z_NO_FLUSH);
        size_t used_in = in_chunk - zs.avail_in;
        p += used_in;
        left -= used_in;
        out->len += room - zs.avail_out;
        if (z == Z_STREAM_END) {
            if (left == 0 || !gzip) {
                rc = 0;
                goto done;
            }
            /* another gzip member follows */
            if (inflateReset(&zs) != Z_OK) {
                floe_err_set(err, FLOE_ECORRUPT, "%s: reset failed", name);
                goto done;
            }
            continue;
        }
        if (z == Z_BUF_ERROR && zs.avail_out != 0) {
            floe_err_set(err, FLOE_ETRUNC, "%s: truncated stream", name);
            goto done;
        }
        if (z != Z_OK && z != Z_BUF_ERROR) {
            floe_err_set(err, FLOE_ECORRUPT, "%s: %s", name, zs.msg ? zs.msg : "bad data");
            goto done;
        }
        if (left == 0 && zs.avail_out != 0) {
            floe_err_set(err, FLOE_ETRUNC, "%s: truncated stream", name);
            goto done;
        }
    }
done:
    inflateEnd(&zs);
    return rc;
}

/* One raw snappy block, checked before its announced size is allocated. */
static int snappy_decompress(const uint8_t *in, size_t n, floe_buf_t *out, size_t base,
                             size_t max_out, floe_err_t *err)
{
    size_t ulen;
    if (snappy_uncompressed_length((const char *)in, n, &ulen) != SNAPPY_OK)
        return floe_err_set(err, FLOE_ECORRUPT, "snappy: bad block header");
    if (ulen > max_out - (out->len - base)) return cap_err(err, FLOE_CODEC_SNAPPY, max_out);
    if (snappy_validate_compressed_buffer((const char *)in, n) != SNAPPY_OK)
        return floe_err_set(err, FLOE_ECORRUPT, "snappy: corrupt block");
    if (floe_buf_reserve(out, ulen ? ulen : 1) != 0) return floe_err_oom(err);
    size_t got = ulen;
    if (snappy_uncompress((const char *)in, n, (char *)out->data + out->len, &got) != SNAPPY_OK ||
        got != ulen)
        return floe_err_set(err, FLOE_ECORRUPT, "snappy: corrupt block");
    out->len += got;
    return 0;
}

static int zstd_decompress(floe_codec_ctx_t *ctx, const uint8_t *in, size_t n, floe_buf_t *out,
                           size_t base, size_t max_out, floe_err_t *err)
{
    ZSTD_DCtx *ds = dctx_of(ctx);
    if (!ds) return floe_err_set(err, FLOE_ENOMEM, "zstd: cannot create context");
    unsigned long long sz = ZSTD_getFrameContentSize(in, n);
    if (sz != ZSTD_CONTENTSIZE_UNKNOWN && sz != ZSTD_CONTENTSIZE_ERROR &&
        ZSTD_findFrameCompressedSize(in, n) == n) {
        /* one frame that says its size: one allocation, one pass */
        if (sz > max_out - (out->len - base)) return cap_err(err, FLOE_CODEC_ZSTD, max_out);
        if (floe_buf_reserve(out, sz ? (size_t)sz : 1) != 0) return floe_err_oom(err);
        size_t r = ZSTD_decompressDCtx(ds, out->data + out->len, (size_t)sz, in, n);
        if (ZSTD_isError(r))
            return floe_err_set(err, FLOE_ECORRUPT, "zstd: %s", ZSTD_getErrorName(r));
        if (r != sz)
            return floe_err_set(err, FLOE_ECORRUPT,
                                "zstd: frame of %zu bytes, not the %llu it says", r, sz);
        out->len += r;
        return 0;
    }
    ZSTD_inBuffer ib = {in, n, 0};
    size_t last = 1, step = first_step(n);
    for (;;) {
        /* all in and the last frame complete: done, also exactly at the cap */
        if (ib.pos == ib.size && last == 0) break;
        size_t room = step_room(out, base, max_out, &step, FLOE_CODEC_ZSTD, err);
        if (room == 0) return -1;
        ZSTD_outBuffer ob = {out->data + out->len, room, 0};
        last = ZSTD_decompressStream(ds, &ob, &ib);
        if (ZSTD_isError(last))
            return floe_err_set(err, FLOE_ECORRUPT, "zstd: %s", ZSTD_getErrorName(last));
        out->len += ob.pos;
        if (ib.pos == ib.size && ob.pos < ob.size) {
            if (last != 0) return floe_err_set(err, FLOE_ETRUNC, "zstd: truncated frame");
            break;
        }
    }
    return 0;
}

static int lz4_frame_decompress(const uint8_t *in, size_t n, floe_buf_t *out, size_t base,
                                size_t max_out, floe_err_t *err)
{
    LZ4F_dctx *dctx;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
        return floe_err_set(err, FLOE_ENOMEM, "lz4: cannot create context");
    int rc = -1;
    size_t off = 0;
    size_t hint = 1, step = first_step(n);
    while (off < n) {
        size_t room = step_room(out, base, max_out, &step, FLOE_CODEC_LZ4_FRAME, err);
        if (room == 0) goto done;
        size_t dst = room, src = n - off;
        hint = LZ4F_decompress(dctx, out->data + out->len, &dst, in + off, &src, NULL);
        if (LZ4F_isError(hint)) {
            floe_err_set(err, FLOE_ECORRUPT, "lz4: %s", LZ4F_getErrorName(hint));
            goto done;
        }
        off += src;
        out->len += dst;
        if (hint == 0 && off < n) {
            /* a frame ended; another may follow */
            continue;
        }
        if (src == 0 && dst == 0) break;
    }
    /* the input may end with output still buffered in the context */
    while (hint != 0) {
        size_t room = step_room(out, base, max_out, &step, FLOE_CODEC_LZ4_FRAME, err);
        if (room == 0) goto done;
        size_t dst = room, src = 0;
        hint = LZ4F_decompress(dctx, out->data + out->len, &dst, in + n, &src, NULL);
        if (LZ4F_isError(hint)) {
            floe_err_set(err, FLOE_ECORRUPT, "lz4: %s", LZ4F_getErrorName(hint));
            goto done;
        }
        out->len += dst;
        if (dst == 0 && hint != 0) {
            floe_err_set(err, FLOE_ETRUNC, "lz4: truncated frame");
            goto done;
        }
    }
    rc = 0;
done:
    LZ4F_freeDecompressionContext(dctx);
    return rc;
}

/* Raw lz4 blocks carry no size: grow until it fits, up to the cap. */
static int lz4_raw_decompress(const uint8_t *in, size_t n, floe_buf_t *out, size_t max_out,
                              floe_err_t *err)
{
    if (n > INT_MAX) return floe_err_set(err, FLOE_ERANGE, "lz4_raw: block too large");
    size_t cap = n * 4 + 64;
    for (;;) {
        if (cap > max_out) cap = max_out;
        if (cap > INT_MAX) cap = INT_MAX;
        if (floe_buf_reserve(out, cap ? cap : 1) < 0) return floe_err_oom(err);
        int r =
            LZ4_decompress_safe((const char *)in, (char *)out->data + out->len, (int)n, (int)cap);
        if (r >= 0) {
            out->len += (size_t)r;
            return 0;
        }
        if (cap >= max_out || cap >= INT_MAX)
            return floe_err_set(err, FLOE_ECORRUPT,
                                "lz4_raw: data is corrupt or exceeds the cap of %zu bytes",
                                max_out);
        cap *= 2;
    }
}

int floe_decompress(floe_codec_ctx_t *ctx, floe_codec_t c, const void *src, size_t n,
                    floe_buf_t *out, size_t max_out, floe_err_t *err)
{
    const uint8_t *in = src;
    size_t base = out->len;
    int rc;
    switch (c) {
    case FLOE_CODEC_NONE:
        if (n > max_out) return cap_err(err, c, max_out);
        if (floe_buf_append(out, src, n) < 0) return floe_err_oom(err);
        return 0;
    case FLOE_CODEC_SNAPPY: rc = snappy_decompress(in, n, out, base, max_out, err); break;
    case FLOE_CODEC_GZIP:
    case FLOE_CODEC_DEFLATE: rc = zlib_decompress(c, in, n, out, base, max_out, err); break;
    case FLOE_CODEC_ZSTD: rc = zstd_decompress(ctx, in, n, out, base, max_out, err); break;
    case FLOE_CODEC_LZ4_RAW: rc = lz4_raw_decompress(in, n, out, max_out, err); break;
    case FLOE_CODEC_LZ4_FRAME: rc = lz4_frame_decompress(in, n, out, base, max_out, err); break;
    default: return floe_err_set(err, FLOE_EUNSUPPORTED, "unknown codec %d", (int)c);
    }
    if (rc != 0) out->len = base;
    return rc;
}

/* ---- decompression of known size ---- */

int floe_decompress_exact(floe_codec_ctx_t *ctx, floe_codec_t c, const void *src, size_t n,
                          void *dst, size_t dst_len, floe_err_t *err)
{
    const char *name = floe_codec_name(c);
    switch (c) {
    case FLOE_CODEC_NONE:
        if (n != dst_len) goto size;
        if (n) memcpy(dst, src, n);
        return 0;
    case FLOE_CODEC_SNAPPY: {
        size_t ulen;
        if (snappy_uncompressed_length(src, n, &ulen) != SNAPPY_OK || ulen != dst_len) goto size;
        if (snappy_uncompress(src, n, dst, &ulen) != SNAPPY_OK || ulen != dst_len) goto corrupt;
        return 0;
    }
    case FLOE_CODEC_ZSTD: {
        ZSTD_DCtx *d = dctx_of(ctx);
        if (!d) return floe_err_set(err, FLOE_ENOMEM, "zstd: cannot create context");
        size_t r = ZSTD_decompressDCtx(d, dst, dst_len, src, n);
        if (ZSTD_isError(r))
            return floe_err_set(err, FLOE_ECORRUPT, "zstd: %s", ZSTD_getErrorName(r));
        if (r != dst_len) goto size;
        return 0;
    }
    case FLOE_CODEC_LZ4_RAW: {
        if (n > INT_MAX || dst_len > INT_MAX) goto size;
        int r = LZ4_decompress_safe(src, dst, (int)n, (int)dst_len);
        if (r < 0) goto corrupt;
        if ((size_t)r != dst_len) goto size;
        return 0;
    }
    case FLOE_CODEC_GZIP:
    case FLOE_CODEC_DEFLATE:
    case FLOE_CODEC_LZ4_FRAME: {
        /* streams: decode with room for one byte more than expected (made
         * up front, so in one pass), then compare */
        floe_buf_t tmp = FLOE_BUF_INIT;
        int rc = floe_buf_reserve(&tmp, dst_len + 1);
        if (rc < 0) floe_err_oom(err);
        else
            rc = floe_decompress(ctx, c, src, n, &tmp, dst_len + 1, err);
        bool ok = rc == 0 && tmp.len == dst_len;
        if (ok && dst_len) memcpy(dst, tmp.data, dst_len);
        floe_buf_free(&tmp);
        if (ok) return 0;
        if (rc == 0 || (err && err->code == FLOE_ERANGE)) goto size;
        if (err && err->code == FLOE_ETRUNC) err->code = FLOE_ECORRUPT;
        return -1;
    }
    default: return floe_err_set(err, FLOE_EUNSUPPORTED, "unknown codec %d", (int)c);
    }
size:
    return floe_err_set(err, FLOE_ECORRUPT,
                        "%s block does not decompress to the expected %zu bytes", name, dst_len);
corrupt:
    return floe_err_set(err, FLOE_ECORRUPT, "%s data is corrupt", name);
}
