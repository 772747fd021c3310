/* Codec wrappers over zstd, snappy, zlib and lz4 (Debian libraries). */
#include "format/compress.h"

#include <limits.h>
#include <lz4.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>
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

static const char *const names[FLOE_CODEC_COUNT] = {"none",    "snappy", "gzip",
                                                    "deflate", "zstd",   "lz4_raw"};

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
        return floe_err_set(err, FLOE_ENOMEM, "out of memory compressing");
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

int floe_compress(floe_codec_ctx_t *ctx, floe_codec_t c, const void *src, size_t n, floe_buf_t *out,
                  floe_err_t *err)
{
    if (n > INT_MAX)
        return floe_err_set(err, FLOE_ERANGE, "block of %zu bytes too large to compress", n);
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
    case FLOE_CODEC_GZIP: return zlib_compress(ctx ? ctx->level : 0, 15 + 16, src, n, out, err);
    case FLOE_CODEC_DEFLATE: return zlib_compress(ctx ? ctx->level : 0, -15, src, n, out, err);
    case FLOE_CODEC_ZSTD: {
        size_t cap = ZSTD_compressBound(n);
        /* the bound, not the next power of two past it: a page buffer
         * reused for every page stays at one page's size */
        if (floe_buf_reserve_settle(out, cap, out->len + cap + cap / 16) < 0)
            return floe_err_oom(err);
        int level = ctx && ctx->level > 0 ? ctx->level : 3;
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
    case FLOE_CODEC_LZ4_RAW: {
        int cap = LZ4_compressBound((int)n);
        if (cap <= 0 || floe_buf_reserve(out, (size_t)cap) < 0) return floe_err_oom(err);
        int r = LZ4_compress_default(src, (char *)out->data + out->len, (int)n, cap);
        if (r <= 0 && n > 0) return floe_err_set(err, FLOE_EIO, "lz4 compression failed");
        out->len += (size_t)r;
        return 0;
    }
    default: return floe_err_set(err, FLOE_EUNSUPPORTED, "unknown codec %d", (int)c);
    }
}

/* Inflate into out up to max_out bytes; window_bits selects gzip/raw. */
static int zlib_inflate(int window_bits, const void *src, size_t n, floe_buf_t *out, size_t max_out,
                        size_t exact, floe_err_t *err)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, window_bits) != Z_OK)
        return floe_err_set(err, FLOE_ENOMEM, "inflateInit failed");
    zs.next_in = (Bytef *)(uintptr_t)src;
    zs.avail_in = (uInt)n;
    size_t start = out->len;
    int rc = Z_OK;
    for (;;) {
        size_t have = out->len - start;
        if (have >= max_out) {
            rc = Z_BUF_ERROR;
            break;
        }
        size_t chunk = exact ? exact - have : (n * 4 > 65536 ? n * 4 : 65536);
        if (chunk > max_out - have) chunk = max_out - have;
        if (chunk > UINT_MAX) chunk = UINT_MAX;
        if (floe_buf_reserve(out, chunk) < 0) {
            inflateEnd(&zs);
            return floe_err_oom(err);
        }
        zs.next_out = out->data + out->len;
        zs.avail_out = (uInt)chunk;
        rc = inflate(&zs, Z_NO_FLUSH);
        out->len += chunk - zs.avail_out;
        if (rc == Z_STREAM_END) {
            /* a gzip stream may hold several members; Parquet writers emit one */
            break;
        }
        if (rc != Z_OK) break;
        if (zs.avail_in == 0 && zs.avail_out != 0) {
            rc = Z_DATA_ERROR;
            break;
        }
    }
    inflateEnd(&zs);
    if (rc != Z_STREAM_END) {
        out->len = start;
        return floe_err_set(err, FLOE_ECORRUPT, "%s data is corrupt or too large",
                            window_bits < 0 ? "deflate" : "gzip");
    }
    return 0;
}

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
    case FLOE_CODEC_GZIP:
    case FLOE_CODEC_DEFLATE: {
        floe_buf_t tmp = FLOE_BUF_INIT;
        if (zlib_inflate(c == FLOE_CODEC_GZIP ? 15 + 32 : -15, src, n, &tmp, dst_len + 1,
                         dst_len + 1, err) < 0) {
            floe_buf_free(&tmp);
            return -1;
        }
        int ok = tmp.len == dst_len;
        if (ok && dst_len) memcpy(dst, tmp.data, dst_len);
        floe_buf_free(&tmp);
        if (!ok) goto size;
        return 0;
    }
    case FLOE_CODEC_ZSTD: {
        size_t r;
        if (ctx) {
            if (!ctx->zd && !(ctx->zd = ZSTD_createDCtx()))
                return floe_err_set(err, FLOE_ENOMEM, "ZSTD_createDCtx failed");
            r = ZSTD_decompressDCtx(ctx->zd, dst, dst_len, src, n);
        } else {
            r = ZSTD_decompress(dst, dst_len, src, n);
        }
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
    default: return floe_err_set(err, FLOE_EUNSUPPORTED, "unknown codec %d", (int)c);
    }
size:
    return floe_err_set(err, FLOE_ECORRUPT,
                        "%s block does not decompress to the expected %zu bytes", name, dst_len);
corrupt:
    return floe_err_set(err, FLOE_ECORRUPT, "%s data is corrupt", name);
}

int floe_decompress(floe_codec_ctx_t *ctx, floe_codec_t c, const void *src, size_t n,
                    floe_buf_t *out, size_t max_out, floe_err_t *err)
{
    switch (c) {
    case FLOE_CODEC_NONE:
        if (n > max_out)
            return floe_err_set(err, FLOE_ERANGE, "block larger than %zu bytes", max_out);
        if (floe_buf_append(out, src, n) < 0) return floe_err_oom(err);
        return 0;
    case FLOE_CODEC_SNAPPY: {
        size_t ulen;
        if (snappy_uncompressed_length(src, n, &ulen) != SNAPPY_OK)
            return floe_err_set(err, FLOE_ECORRUPT, "snappy data is corrupt");
        if (ulen > max_out)
            return floe_err_set(err, FLOE_ERANGE, "snappy block larger than %zu bytes", max_out);
        if (floe_buf_reserve(out, ulen) < 0) return floe_err_oom(err);
        if (floe_decompress_exact(ctx, c, src, n, out->data + out->len, ulen, err) < 0) return -1;
        out->len += ulen;
        return 0;
    }
    case FLOE_CODEC_GZIP: return zlib_inflate(15 + 32, src, n, out, max_out, 0, err);
    case FLOE_CODEC_DEFLATE: return zlib_inflate(-15, src, n, out, max_out, 0, err);
    case FLOE_CODEC_ZSTD: {
        unsigned long long sz = ZSTD_getFrameContentSize(src, n);
        if (sz != ZSTD_CONTENTSIZE_UNKNOWN && sz != ZSTD_CONTENTSIZE_ERROR) {
            if (sz > max_out)
                return floe_err_set(err, FLOE_ERANGE, "zstd block larger than %zu bytes", max_out);
            if (floe_buf_reserve(out, (size_t)sz) < 0) return floe_err_oom(err);
            if (floe_decompress_exact(ctx, c, src, n, out->data + out->len, (size_t)sz, err) < 0)
                return -1;
            out->len += (size_t)sz;
            return 0;
        }
        /* streaming decode for frames without a content size */
        ZSTD_DStream *ds = ZSTD_createDStream();
        if (!ds) return floe_err_oom(err);
        ZSTD_inBuffer in = {src, n, 0};
        size_t start = out->len, r = 1;
        while (in.pos < in.size || r != 0) {
            if (out->len - start >= max_out) {
                r = (size_t)-1;
                break;
            }
            size_t chunk = ZSTD_DStreamOutSize();
            if (floe_buf_reserve(out, chunk) < 0) {
                ZSTD_freeDStream(ds);
                out->len = start;
                return floe_err_oom(err);
            }
            ZSTD_outBuffer ob = {out->data + out->len, chunk, 0};
            r = ZSTD_decompressStream(ds, &ob, &in);
            out->len += ob.pos;
            if (ZSTD_isError(r)) break;
            if (in.pos == in.size && ob.pos == 0 && r != 0) {
                r = (size_t)-1;
                break;
            }
        }
        ZSTD_freeDStream(ds);
        if (r != 0 || out->len - start > max_out) {
            out->len = start;
            return floe_err_set(err, FLOE_ECORRUPT, "zstd data is corrupt or too large");
        }
        return 0;
    }
    case FLOE_CODEC_LZ4_RAW: {
        /* raw lz4 blocks carry no size: grow until it fits, up to max_out */
        size_t cap = n * 4 + 64;
        for (;;) {
            if (cap > max_out) cap = max_out;
            if (cap > INT_MAX || n > INT_MAX)
                return floe_err_set(err, FLOE_ERANGE, "lz4 block too large");
            if (floe_buf_reserve(out, cap) < 0) return floe_err_oom(err);
            int r = LZ4_decompress_safe(src, (char *)out->data + out->len, (int)n, (int)cap);
            if (r >= 0) {
                out->len += (size_t)r;
                return 0;
            }
            if (cap >= max_out)
                return floe_err_set(err, FLOE_ECORRUPT, "lz4 data is corrupt or too large");
            cap *= 2;
        }
    }
    default: return floe_err_set(err, FLOE_EUNSUPPORTED, "unknown codec %d", (int)c);
    }
}
