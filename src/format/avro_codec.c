/* Avro container block codecs: null, deflate (raw RFC 1951, zlib), snappy
 * (with the 4-byte big-endian CRC32 of the uncompressed bytes after the
 * compressed ones) and zstandard.  Decompression is capped so a small
 * hostile block cannot expand without bound. */
#include <snappy-c.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "format/avro_int.h"

static const char *const codec_names[] = {"null", "deflate", "snappy", "zstandard"};

const char *floe_avro_codec_name(floe_avro_codec_t c)
{
    if ((unsigned)c < sizeof codec_names / sizeof codec_names[0]) return codec_names[c];
    return "unknown";
}

int floe_avro_codec_parse(const char *name, floe_avro_codec_t *out, floe_err_t *err)
{
    for (int i = 0; i < (int)(sizeof codec_names / sizeof codec_names[0]); i++)
        if (strcmp(name, codec_names[i]) == 0) {
            *out = (floe_avro_codec_t)i;
            return 0;
        }
    if (strcmp(name, "zstd") == 0) { /* accepted as an alias when reading options */
        *out = FLOE_AVRO_CODEC_ZSTD;
        return 0;
    }
    return floe_err_set(err, FLOE_EUNSUPPORTED,
                        "avro: codec \"%s\" not supported (null, deflate, snappy, zstandard)", name);
}

static int oom(floe_err_t *err)
{
    return floe_err_set(err, FLOE_ENOMEM, "avro: out of memory in codec");
}

static int deflate_into(int level, const uint8_t *p, size_t n, floe_buf_t *out, floe_err_t *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (level < 0 || level > 9) level = 9;
    if (deflateInit2(&z, level ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return oom(err);
    size_t bound = deflateBound(&z, (uLong)n);
    if (floe_buf_reserve(out, bound) != 0) {
        deflateEnd(&z);
        return oom(err);
    }
    z.next_in = (Bytef *)(uintptr_t)p;
    z.avail_in = (uInt)n;
    z.next_out = out->data + out->len;
    z.avail_out = (uInt)bound;
    int rc = deflate(&z, Z_FINISH);
    size_t produced = bound - z.avail_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) return floe_err_set(err, FLOE_EIO, "avro: deflate failed (%d)", rc);
    out->len += produced;
    return 0;
}

int avro_codec_compress(floe_avro_codec_t c, int level, const uint8_t *p, size_t n,
                        floe_buf_t *out, floe_err_t *err)
{
    switch (c) {
    case FLOE_AVRO_CODEC_NULL:
        return floe_buf_append(out, p, n) ? oom(err) : 0;
    case FLOE_AVRO_CODEC_DEFLATE:
        if (n > UINT32_MAX) return floe_err_set(err, FLOE_EINVAL, "avro: block too big for deflate");
        return deflate_into(level, p, n, out, err);
    case FLOE_AVRO_CODEC_SNAPPY: {
        size_t bound = snappy_max_compressed_length(n);
        if (floe_buf_reserve(out, bound + 4) != 0) return oom(err);
        size_t clen = bound;
        if (snappy_compress((const char *)p, n, (char *)out->data + out->len, &clen) != SNAPPY_OK)
            return floe_err_set(err, FLOE_EIO, "avro: snappy compression failed");
        out->len += clen;
        uint32_t crc = (uint32_t)crc32(0L, p, (uInt)n);
        return floe_buf_append_be32(out, crc) ? oom(err) : 0;
    }
    case FLOE_AVRO_CODEC_ZSTD: {
        size_t bound = ZSTD_compressBound(n);
        if (floe_buf_reserve(out, bound) != 0) return oom(err);
        size_t r = ZSTD_compress(out->data + out->len, bound, p, n, level ? level : 3);
        if (ZSTD_isError(r))
            return floe_err_set(err, FLOE_EIO, "avro: zstd compression failed: %s", ZSTD_getErrorName(r));
        out->len += r;
        return 0;
    }
    }
    return floe_err_set(err, FLOE_EINVAL, "avro: bad codec %d", (int)c);
}

static int too_big(size_t max_out, floe_err_t *err)
{
    return floe_err_set(err, FLOE_ECORRUPT, "avro: block decompresses past the %zu-byte limit", max_out);
}

/* Room for the next piece of output, or 0 at the limit. */
static size_t next_room(size_t produced, size_t max_out)
{
    size_t room = max_out - produced;
    return room > (1u << 20) ? (1u << 20) : room;
}

static int inflate_into(const uint8_t *p, size_t n, size_t max_out, floe_buf_t *out,
                        floe_err_t *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -15) != Z_OK) return oom(err);
    z.next_in = (Bytef *)(uintptr_t)p;
    z.avail_in = (uInt)n;
    size_t start = out->len;
    int rc = 0;
    for (;;) {
        size_t room = next_room(out->len - start, max_out);
        uint8_t probe;
        if (room && floe_buf_reserve(out, room) != 0) {
            rc = oom(err);
            break;
        }
        /* at the limit, a one-byte probe tells "ends here" from "too big" */
        z.next_out = room ? out->data + out->len : &probe;
        z.avail_out = room ? (uInt)room : 1;
        int zr = inflate(&z, Z_NO_FLUSH);
        size_t got = (room ? room : 1) - z.avail_out;
        if (!room && got) {
            rc = too_big(max_out, err);
            break;
        }
        out->len += room ? got : 0;
        if (zr == Z_STREAM_END) break;
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            rc = floe_err_set(err, FLOE_ECORRUPT, "avro: bad deflate data (%s)",
                              z.msg ? z.msg : "inflate error");
            break;
        }
        if (z.avail_in == 0 && z.avail_out > 0) {
            rc = floe_err_set(err, FLOE_ETRUNC, "avro: deflate data ends early");
            break;
        }
    }
    inflateEnd(&z);
    return rc;
}

static int unzstd_into(const uint8_t *p, size_t n, size_t max_out, floe_buf_t *out,
                       floe_err_t *err)
{
    ZSTD_DCtx *d = ZSTD_createDCtx();
    if (!d) return oom(err);
    ZSTD_inBuffer in = {p, n, 0};
    size_t start = out->len;
    size_t r = 1; /* nonzero: a frame is not complete */
    int rc = 0;
    while (!(in.pos == in.size && r == 0)) {
        size_t room = next_room(out->len - start, max_out);
        uint8_t probe;
        if (room && floe_buf_reserve(out, room) != 0) {
            rc = oom(err);
            break;
        }
        ZSTD_outBuffer o = {room ? out->data + out->len : &probe, room ? room : 1, 0};
        r = ZSTD_decompressStream(d, &o, &in);
        if (ZSTD_isError(r)) {
            rc = floe_err_set(err, FLOE_ECORRUPT, "avro: bad zstd data: %s", ZSTD_getErrorName(r));
            break;
        }
        if (!room && o.pos) {
            rc = too_big(max_out, err);
            break;
        }
        out->len += room ? o.pos : 0;
        if (in.pos == in.size && r != 0 && o.pos < o.size) {
            rc = floe_err_set(err, FLOE_ETRUNC, "avro: zstd data ends early");
            break;
        }
    }
    ZSTD_freeDCtx(d);
    return rc;
}

int avro_codec_decompress(floe_avro_codec_t c, const uint8_t *p, size_t n, size_t max_out,
                          floe_buf_t *out, floe_err_t *err)
{
    switch (c) {
    case FLOE_AVRO_CODEC_NULL:
        if (n > max_out) return too_big(max_out, err);
        return floe_buf_append(out, p, n) ? oom(err) : 0;
    case FLOE_AVRO_CODEC_DEFLATE:
        if (n > UINT32_MAX) return floe_err_set(err, FLOE_ECORRUPT, "avro: deflate block too big");
        return inflate_into(p, n, max_out, out, err);
    case FLOE_AVRO_CODEC_SNAPPY: {
        if (n < 4) return floe_err_set(err, FLOE_ETRUNC, "avro: snappy block shorter than its CRC");
        size_t len;
        if (snappy_uncompressed_length((const char *)p, n - 4, &len) != SNAPPY_OK)
            return floe_err_set(err, FLOE_ECORRUPT, "avro: bad snappy block header");
        if (len > max_out) return too_big(max_out, err);
        if (floe_buf_reserve(out, len ? len : 1) != 0) return oom(err);
        size_t got = len;
        if (snappy_uncompress((const char *)p, n - 4, (char *)out->data + out->len, &got) !=
                SNAPPY_OK ||
            got != len)
            return floe_err_set(err, FLOE_ECORRUPT, "avro: bad snappy data");
        uint32_t want = floe_rd_be32(p + n - 4);
        uint32_t crc = (uint32_t)crc32(0L, out->data + out->len, (uInt)len);
        if (crc != want)
            return floe_err_set(err, FLOE_ECORRUPT,
                                "avro: snappy block CRC32 mismatch (stored %08x, computed %08x)", want, crc);
        out->len += len;
        return 0;
    }
    case FLOE_AVRO_CODEC_ZSTD:
        return unzstd_into(p, n, max_out, out, err);
    }
    return floe_err_set(err, FLOE_EINVAL, "avro: bad codec %d", (int)c);
}
