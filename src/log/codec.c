/* Record-batch compression codecs over the Debian libraries (zlib, snappy,
 * lz4 frame, zstd).  Every decoder writes into a caller buffer grown in
 * bounded steps and stops at max_out, so a small hostile input cannot make
 * us allocate more than the cap. */
#include "log/codec.h"

#include <limits.h>
#include <pthread.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "log/batch.h"

/* Grow step for streaming decoders: at most this much past what is in. */
#define CODEC_STEP (256u * 1024)

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
 * (batches compress 2-10x), at least 4 KiB, at most CODEC_STEP; later ones
 * double.  Small batches then cost small buffers. */
static size_t first_step(size_t n)
{
    size_t w = n < CODEC_STEP / 4 ? n * 4 : CODEC_STEP;
    return w < 4096 ? 4096 : w;
}

static size_t next_step(size_t step)
{
    return step * 2 < CODEC_STEP ? step * 2 : CODEC_STEP;
}

static int cap_err(floe_err_t *err, const char *codec, size_t max_out)
{
    return floe_err_set(err, FLOE_ENOMEM, "%s: decompressed data exceeds the cap of %zu bytes",
                        codec, max_out);
}

/* gzip (also zlib-wrapped, and concatenated gzip members, which Java's
 * GZIPInputStream accepts). */
static int gzip_decompress(const uint8_t *in, size_t n, floe_buf_t *out, size_t base,
                           size_t max_out, floe_err_t *err)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 15 + 32) != Z_OK)
        return floe_err_set(err, FLOE_ENOMEM, "gzip: inflateInit failed");
    int rc = -1;
    const uint8_t *p = in;
    size_t left = n, step = first_step(n);
    for (;;) {
        size_t room = grow(out, base, max_out, step);
        step = next_step(step);
        if (room == (size_t)-1) {
            floe_err_set(err, FLOE_ENOMEM, "gzip: out of memory");
            goto done;
        }
        if (room == 0) {
            cap_err(err, "gzip", max_out);
            goto done;
        }
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
            if (left == 0) {
                rc = 0;
                goto done;
            }
            /* another gzip member follows */
            if (inflateReset(&zs) != Z_OK) {
                floe_err_set(err, FLOE_ECORRUPT, "gzip: reset failed");
                goto done;
            }
            continue;
        }
        if (z == Z_BUF_ERROR && zs.avail_out != 0) {
            floe_err_set(err, FLOE_ECORRUPT, "gzip: truncated stream");
            goto done;
        }
        if (z != Z_OK && z != Z_BUF_ERROR) {
            floe_err_set(err, FLOE_ECORRUPT, "gzip: %s", zs.msg ? zs.msg : "bad data");
            goto done;
        }
        if (left == 0 && zs.avail_out != 0) {
            floe_err_set(err, FLOE_ECORRUPT, "gzip: truncated stream");
            goto done;
        }
    }
done:
    inflateEnd(&zs);
    return rc;
}

/* One raw snappy block, appended to out under the cap. */
static int snappy_block(const uint8_t *in, size_t n, floe_buf_t *out, size_t base, size_t max_out,
                        floe_err_t *err)
{
    size_t ulen;
    if (snappy_uncompressed_length((const char *)in, n, &ulen) != SNAPPY_OK)
        return floe_err_set(err, FLOE_ECORRUPT, "snappy: bad block header");
    if (ulen > max_out - (out->len - base)) return cap_err(err, "snappy", max_out);
    if (snappy_validate_compressed_buffer((const char *)in, n) != SNAPPY_OK)
        return floe_err_set(err, FLOE_ECORRUPT, "snappy: corrupt block");
    if (floe_buf_reserve(out, ulen ? ulen : 1) != 0)
        return floe_err_set(err, FLOE_ENOMEM, "snappy: out of memory");
    size_t got = ulen;
    if (snappy_uncompress((const char *)in, n, (char *)out->data + out->len, &got) != SNAPPY_OK ||
        got != ulen)
        return floe_err_set(err, FLOE_ECORRUPT, "snappy: corrupt block");
    out->len += got;
    return 0;
}

static const uint8_t xerial_magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};

/* Snappy as Kafka clients write it: either one raw block (librdkafka,
 * kafkajs) or snappy-java's stream framing: a 16-byte header (magic,
 * version, compatible version) then [be32 length][raw block]... */
static int snappy_decompress(const uint8_t *in, size_t n, floe_buf_t *out, size_t base,
                             size_t max_out, floe_err_t *err)
{
    if (n >= 16 && memcmp(in, xerial_magic, 8) == 0) {
        size_t off = 16;
        while (off < n) {
            if (n - off < 4)
                return floe_err_set(err, FLOE_ETRUNC, "snappy-java: truncated block length");
            uint32_t bl = floe_rd_be32(in + off);
            off += 4;
            if (bl > n - off)
                return floe_err_set(err, FLOE_ETRUNC, "snappy-java: block of %u bytes past the end",
                                    bl);
            if (snappy_block(in + off, bl, out, base, max_out, err) != 0) return -1;
            off += bl;
        }
        return 0;
    }
    return snappy_block(in, n, out, base, max_out, err);
}

static int lz4_decompress(const uint8_t *in, size_t n, floe_buf_t *out, size_t base, size_t max_out,
                          floe_err_t *err)
{
    LZ4F_dctx *dctx;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
        return floe_err_set(err, FLOE_ENOMEM, "lz4: cannot create context");
    int rc = -1;
    size_t off = 0;
    size_t hint = 1, step = first_step(n);
    while (off < n) {
        size_t room = grow(out, base, max_out, step);
        step = next_step(step);
        if (room == (size_t)-1) {
            floe_err_set(err, FLOE_ENOMEM, "lz4: out of memory");
            goto done;
        }
        if (room == 0) {
            cap_err(err, "lz4", max_out);
            goto done;
        }
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
        size_t room = grow(out, base, max_out, step);
        step = next_step(step);
        if (room == (size_t)-1) {
            floe_err_set(err, FLOE_ENOMEM, "lz4: out of memory");
            goto done;
        }
        if (room == 0) {
            cap_err(err, "lz4", max_out);
            goto done;
        }
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

/* One zstd decompression context per thread, kept between calls: making
 * one costs ~50 us, ten times the decompression of a small batch.  Freed
 * when the thread exits. */
static pthread_key_t zstd_key;
static pthread_once_t zstd_once = PTHREAD_ONCE_INIT;

static void zstd_free_ctx(void *p)
{
    ZSTD_freeDStream(p);
}
static void zstd_make_key(void)
{
    pthread_key_create(&zstd_key, zstd_free_ctx);
}

static ZSTD_DStream *zstd_ctx(void)
{
    pthread_once(&zstd_once, zstd_make_key);
    ZSTD_DStream *ds = pthread_getspecific(zstd_key);
    if (!ds) {
        ds = ZSTD_createDStream();
        if (!ds) return NULL;
        /* the window a frame may ask for is bounded too */
        ZSTD_DCtx_setParameter(ds, ZSTD_d_windowLogMax, 27);
        if (pthread_setspecific(zstd_key, ds) != 0) {
            ZSTD_freeDStream(ds);
            return NULL;
        }
    } else {
        ZSTD_DCtx_reset(ds, ZSTD_reset_session_only);
    }
    return ds;
}

static int zstd_decompress(const uint8_t *in, size_t n, floe_buf_t *out, size_t base,
                           size_t max_out, floe_err_t *err)
{
    ZSTD_DStream *ds = zstd_ctx();
    if (!ds) return floe_err_set(err, FLOE_ENOMEM, "zstd: cannot create context");
    ZSTD_inBuffer ib = {in, n, 0};
    size_t last = 1, step = first_step(n);
    for (;;) {
        size_t room = grow(out, base, max_out, step);
        step = next_step(step);
        if (room == (size_t)-1) return floe_err_set(err, FLOE_ENOMEM, "zstd: out of memory");
        if (room == 0) {
            /* a frame could be complete exactly at the cap */
            if (ib.pos == ib.size && last == 0) break;
            return cap_err(err, "zstd", max_out);
        }
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

int floe_codec_decompress(int codec, const uint8_t *in, size_t n, floe_buf_t *out, size_t max_out,
                          floe_err_t *err)
{
    size_t base = out->len;
    int rc;
    switch (codec) {
    case FLOE_COMPRESSION_GZIP: rc = gzip_decompress(in, n, out, base, max_out, err); break;
    case FLOE_COMPRESSION_SNAPPY: rc = snappy_decompress(in, n, out, base, max_out, err); break;
    case FLOE_COMPRESSION_LZ4: rc = lz4_decompress(in, n, out, base, max_out, err); break;
    case FLOE_COMPRESSION_ZSTD: rc = zstd_decompress(in, n, out, base, max_out, err); break;
    default: return floe_err_set(err, FLOE_ECORRUPT, "unknown compression codec %d", codec);
    }
    if (rc != 0) out->len = base;
    return rc;
}

static int gzip_compress(int level, const uint8_t *in, size_t n, floe_buf_t *out, floe_err_t *err)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, level ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return floe_err_set(err, FLOE_EINVAL, "gzip: bad level %d", level);
    size_t base = out->len;
    uLong bound = deflateBound(&zs, (uLong)n) + 32;
    if (floe_buf_reserve(out, bound) != 0) {
        deflateEnd(&zs);
        return floe_err_set(err, FLOE_ENOMEM, "gzip: out of memory");
    }
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)n;
    zs.next_out = out->data + out->len;
    zs.avail_out = (uInt)bound;
    int z = deflate(&zs, Z_FINISH);
    out->len = base + (bound - zs.avail_out);
    deflateEnd(&zs);
    if (z != Z_STREAM_END) {
        out->len = base;
        return floe_err_set(err, FLOE_EIO, "gzip: deflate failed (%d)", z);
    }
    return 0;
}

int floe_codec_compress(int codec, int level, const uint8_t *in, size_t n, floe_buf_t *out,
                        floe_err_t *err)
{
    switch (codec) {
    case FLOE_COMPRESSION_GZIP:
        if (n > UINT_MAX / 2) return floe_err_set(err, FLOE_ERANGE, "gzip: input too large");
        return gzip_compress(level, in, n, out, err);
    case FLOE_COMPRESSION_SNAPPY: {
        size_t bound = snappy_max_compressed_length(n);
        if (floe_buf_reserve(out, bound) != 0)
            return floe_err_set(err, FLOE_ENOMEM, "snappy: out of memory");
        size_t got = bound;
        if (snappy_compress((const char *)in, n, (char *)out->data + out->len, &got) != SNAPPY_OK)
            return floe_err_set(err, FLOE_EIO, "snappy: compress failed");
        out->len += got;
        return 0;
    }
    case FLOE_COMPRESSION_LZ4: {
        LZ4F_preferences_t prefs;
        memset(&prefs, 0, sizeof prefs);
        prefs.frameInfo.blockSizeID = LZ4F_max64KB;
        prefs.frameInfo.contentSize = n;
        prefs.compressionLevel = level;
        size_t bound = LZ4F_compressFrameBound(n, &prefs);
        if (floe_buf_reserve(out, bound) != 0)
            return floe_err_set(err, FLOE_ENOMEM, "lz4: out of memory");
        size_t got = LZ4F_compressFrame(out->data + out->len, bound, in, n, &prefs);
        if (LZ4F_isError(got))
            return floe_err_set(err, FLOE_EIO, "lz4: %s", LZ4F_getErrorName(got));
        out->len += got;
        return 0;
    }
    case FLOE_COMPRESSION_ZSTD: {
        size_t bound = ZSTD_compressBound(n);
        if (floe_buf_reserve(out, bound) != 0)
            return floe_err_set(err, FLOE_ENOMEM, "zstd: out of memory");
        size_t got = ZSTD_compress(out->data + out->len, bound, in, n, level ? level : 3);
        if (ZSTD_isError(got))
            return floe_err_set(err, FLOE_EIO, "zstd: %s", ZSTD_getErrorName(got));
        out->len += got;
        return 0;
    }
    default: return floe_err_set(err, FLOE_EINVAL, "cannot compress with codec %d", codec);
    }
}
