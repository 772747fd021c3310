/* Kafka's record-batch codecs on the compression core: which core codec
 * each Kafka codec is, snappy-java's stream framing, and the cap error
 * Kafka callers expect. */
#include "log/kcodec.h"

#include <string.h>

#include "util/compress.h"

/* The core codec that reads and writes Kafka codec c; -1 for NONE and
 * numbers Kafka does not define. */
static int core_codec(floe_compression_t c, floe_codec_t *out)
{
    switch (c) {
    case FLOE_COMPRESSION_GZIP: *out = FLOE_CODEC_GZIP; return 0;
    case FLOE_COMPRESSION_SNAPPY: *out = FLOE_CODEC_SNAPPY; return 0;
    case FLOE_COMPRESSION_LZ4: *out = FLOE_CODEC_LZ4_FRAME; return 0;
    case FLOE_COMPRESSION_ZSTD: *out = FLOE_CODEC_ZSTD; return 0;
    default: return -1;
    }
}

static const uint8_t xerial_magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};

/* snappy-java's stream framing: a 16-byte header (magic, version,
 * compatible version) then [be32 length][raw snappy block]...  Appends to
 * out; the cap counts from base. */
static int xerial_decompress(const uint8_t *in, size_t n, floe_buf_t *out, size_t base,
                             size_t max_out, floe_err_t *err)
{
    size_t off = 16;
    while (off < n) {
        if (n - off < 4)
            return floe_err_set(err, FLOE_ETRUNC, "snappy-java: truncated block length");
        uint32_t bl = floe_rd_be32(in + off);
        off += 4;
        if (bl > n - off)
            return floe_err_set(err, FLOE_ETRUNC, "snappy-java: block of %u bytes past the end",
                                bl);
        if (floe_decompress(NULL, FLOE_CODEC_SNAPPY, in + off, bl, out, max_out - (out->len - base),
                            err) != 0)
            return -1;
        off += bl;
    }
    return 0;
}

int floe_kcodec_decompress(floe_compression_t codec, const uint8_t *in, size_t n, floe_buf_t *out,
                           size_t max_out, floe_err_t *err)
{
    floe_codec_t c;
    if (core_codec(codec, &c) != 0)
        return floe_err_set(err, FLOE_ECORRUPT, "unknown compression codec %d", (int)codec);
    size_t base = out->len;
    int rc;
    if (codec == FLOE_COMPRESSION_SNAPPY && n >= 16 && memcmp(in, xerial_magic, 8) == 0)
        rc = xerial_decompress(in, n, out, base, max_out, err);
    else
        rc = floe_decompress(NULL, c, in, n, out, max_out, err);
    if (rc == 0) return 0;
    out->len = base;
    /* the core's cap error is FLOE_ERANGE; Kafka callers document ENOMEM */
    if (err && err->code == FLOE_ERANGE)
        floe_err_set(err, FLOE_ENOMEM, "%s: decompressed data exceeds the cap of %zu bytes",
                     floe_compression_name(codec), max_out);
    return -1;
}

int floe_kcodec_compress(floe_compression_t codec, int level, const uint8_t *in, size_t n,
                         floe_buf_t *out, floe_err_t *err)
{
    floe_codec_t c;
    if (core_codec(codec, &c) != 0)
        return floe_err_set(err, FLOE_EINVAL, "cannot compress with codec %d", (int)codec);
    if (level == 0) return floe_compress(NULL, c, in, n, out, err);
    floe_codec_ctx_t *ctx = floe_codec_ctx_new(level);
    if (!ctx) return floe_err_oom(err);
    int rc = floe_compress(ctx, c, in, n, out, err);
    floe_codec_ctx_free(ctx);
    return rc;
}
