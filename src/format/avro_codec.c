/* Avro container block codecs over the compression core (util/compress.h): null,
 * deflate (raw RFC 1951), snappy (plus the 4-byte big-endian CRC32 of the
 * uncompressed bytes that Avro appends) and zstandard.  Decompression is
 * capped so a small hostile block cannot expand without bound. */
#include <string.h>
#include <zlib.h>

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
                        "avro: codec \"%s\" not supported (null, deflate, snappy, zstandard)",
                        name);
}

/* The core codec of Avro codec c (the caller checked c). */
static floe_codec_t core_codec(floe_avro_codec_t c)
{
    switch (c) {
    case FLOE_AVRO_CODEC_DEFLATE: return FLOE_CODEC_DEFLATE;
    case FLOE_AVRO_CODEC_SNAPPY: return FLOE_CODEC_SNAPPY;
    case FLOE_AVRO_CODEC_ZSTD: return FLOE_CODEC_ZSTD;
    default: return FLOE_CODEC_NONE;
    }
}

int avro_codec_compress(floe_codec_ctx_t *ctx, floe_avro_codec_t c, const uint8_t *p, size_t n,
                        floe_buf_t *out, floe_err_t *err)
{
    if ((unsigned)c > FLOE_AVRO_CODEC_ZSTD)
        return floe_err_set(err, FLOE_EINVAL, "avro: bad codec %d", (int)c);
    if (n > UINT32_MAX)
        return floe_err_set(err, FLOE_EINVAL, "avro: block of %zu bytes too big", n);
    if (floe_compress(ctx, core_codec(c), p, n, out, err) != 0) {
        floe_err_wrap(err, "avro: %s", floe_avro_codec_name(c));
        return -1;
    }
    if (c == FLOE_AVRO_CODEC_SNAPPY &&
        floe_buf_append_be32(out, (uint32_t)crc32(0L, p, (uInt)n)) != 0)
        return floe_err_set(err, FLOE_ENOMEM, "avro: out of memory in codec");
    return 0;
}

int avro_codec_decompress(floe_codec_ctx_t *ctx, floe_avro_codec_t c, const uint8_t *p, size_t n,
                          size_t max_out, floe_buf_t *out, floe_err_t *err)
{
    if ((unsigned)c > FLOE_AVRO_CODEC_ZSTD)
        return floe_err_set(err, FLOE_EINVAL, "avro: bad codec %d", (int)c);
    if (n > UINT32_MAX)
        return floe_err_set(err, FLOE_ECORRUPT, "avro: block of %zu bytes too big", n);
    size_t data_n = n;
    if (c == FLOE_AVRO_CODEC_SNAPPY) {
        if (n < 4) return floe_err_set(err, FLOE_ETRUNC, "avro: snappy block shorter than its CRC");
        data_n = n - 4;
    }
    size_t start = out->len;
    if (floe_decompress(ctx, core_codec(c), p, data_n, out, max_out, err) != 0) {
        if (err && err->code == FLOE_ERANGE)
            return floe_err_set(err, FLOE_ECORRUPT,
                                "avro: %s block decompresses past the %zu-byte limit",
                                floe_avro_codec_name(c), max_out);
        floe_err_wrap(err, "avro: %s block", floe_avro_codec_name(c));
        if (err) err->code = FLOE_ECORRUPT;
        return -1;
    }
    if (c == FLOE_AVRO_CODEC_SNAPPY) {
        uint32_t want = floe_rd_be32(p + data_n);
        uint32_t crc = (uint32_t)crc32(0L, out->data + start, (uInt)(out->len - start));
        if (crc != want) {
            out->len = start;
            return floe_err_set(err, FLOE_ECORRUPT,
                                "avro: snappy block CRC32 mismatch (stored %08x, computed %08x)",
                                want, crc);
        }
    }
    return 0;
}
