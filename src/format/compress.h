/* Block compression codecs shared by the Parquet and Avro writers/readers.
 *
 * One floe_codec_ctx_t per writer or reader caches the zstd contexts so that
 * per-page calls do not allocate.  Formats map their own codec numbers to
 * floe_codec_t (Parquet CompressionCodec, Avro "avro.codec"). */
#ifndef FLOE_FORMAT_COMPRESS_H
#define FLOE_FORMAT_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

typedef enum floe_codec {
    FLOE_CODEC_NONE = 0,
    FLOE_CODEC_SNAPPY,  /* raw snappy block (Parquet SNAPPY; Avro adds a CRC itself) */
    FLOE_CODEC_GZIP,    /* gzip member (Parquet GZIP) */
    FLOE_CODEC_DEFLATE, /* raw deflate, no header (Avro "deflate") */
    FLOE_CODEC_ZSTD,    /* one zstd frame */
    FLOE_CODEC_LZ4_RAW, /* raw lz4 block (Parquet LZ4_RAW) */
    FLOE_CODEC_COUNT
} floe_codec_t;

typedef struct floe_codec_ctx floe_codec_ctx_t;

/* A context; level applies to zstd (1..22, 0 = default 3) and gzip/deflate
 * (1..9, 0 = default 6).  Caller frees with floe_codec_ctx_free.  Returns
 * NULL when out of memory. */
floe_codec_ctx_t *floe_codec_ctx_new(int level);
void floe_codec_ctx_free(floe_codec_ctx_t *ctx);

/* Stable lower-case name ("zstd", "lz4_raw", ...); floe_codec_parse maps a
 * name back (also accepts "uncompressed", "null", "lz4").  Returns -1 for an
 * unknown name. */
const char *floe_codec_name(floe_codec_t c);
int floe_codec_parse(const char *name, floe_codec_t *out);

/* Append the compressed form of src[0..n) to out.  ctx may be NULL (a
 * temporary one is made).  Returns 0 or -1 with err filled. */
int floe_compress(floe_codec_ctx_t *ctx, floe_codec_t c, const void *src, size_t n, floe_buf_t *out,
                  floe_err_t *err);

/* Decompress src[0..n) into dst, which has room for exactly dst_len bytes;
 * the decompressed size must equal dst_len (Parquet pages know it).
 * Returns 0 or -1 (ECORRUPT) with err filled.  Never writes past dst_len. */
int floe_decompress_exact(floe_codec_ctx_t *ctx, floe_codec_t c, const void *src, size_t n,
                          void *dst, size_t dst_len, floe_err_t *err);

/* Decompress src[0..n) of unknown output size, appending to out, refusing
 * output past max_out bytes (a cap against decompression bombs).  Returns 0
 * or -1 with err filled. */
int floe_decompress(floe_codec_ctx_t *ctx, floe_codec_t c, const void *src, size_t n,
                    floe_buf_t *out, size_t max_out, floe_err_t *err);

#endif
