/* Block compression over the Debian libraries (zlib, snappy, lz4, zstd):
 * the one core under the Kafka record-batch codecs (log/kcodec.h) and the
 * Parquet and Avro codecs (format/).  Each of those numbers its codecs its
 * own way and maps them to floe_codec_t with an explicit function; no
 * other numbering is passed in its place.
 *
 * Decompression of data whose size is not known is capped by the caller
 * (max_out) and grows its output in bounded steps, so a small hostile
 * input cannot make it allocate past the cap.  Thread-safe; a context is
 * used by one thread at a time. */
#ifndef FLOE_UTIL_COMPRESS_H
#define FLOE_UTIL_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

typedef enum floe_codec {
    FLOE_CODEC_NONE = 0,
    FLOE_CODEC_SNAPPY,    /* one raw snappy block */
    FLOE_CODEC_GZIP,      /* gzip (RFC 1952); decoding also takes a zlib stream and
                           * several gzip members back to back */
    FLOE_CODEC_DEFLATE,   /* one raw deflate stream (RFC 1951), no header */
    FLOE_CODEC_ZSTD,      /* zstd; decoding takes several frames back to back */
    FLOE_CODEC_LZ4_RAW,   /* one raw lz4 block, no header */
    FLOE_CODEC_LZ4_FRAME, /* lz4 frame format: 64 KiB blocks, the content size
                           * in the header; decoding takes several frames */
    FLOE_CODEC_COUNT
} floe_codec_t;

typedef struct floe_codec_ctx floe_codec_ctx_t;

/* A context: the compression level and cached zstd contexts, so that a
 * writer or reader compressing page after page does not allocate.  level:
 * zstd 0 = 3, else as given; gzip and deflate 1..9, anything else 6; lz4
 * frame as given (0 = fast, 3..12 = high compression); snappy and raw lz4
 * have none.  Caller frees with floe_codec_ctx_free; NULL when out of
 * memory. */
floe_codec_ctx_t *floe_codec_ctx_new(int level);
void floe_codec_ctx_free(floe_codec_ctx_t *ctx);

/* Stable lower-case name ("zstd", "lz4_raw", "lz4_frame", ...), "unknown"
 * past the enum.  floe_codec_parse maps a name back (case-insensitive;
 * also "uncompressed" and "null" for none, "lz4" for lz4_raw) and returns
 * -1 for an unknown name. */
const char *floe_codec_name(floe_codec_t c);
int floe_codec_parse(const char *name, floe_codec_t *out);

/* Append the compressed form of src[0..n) to out (caller-owned).  ctx may
 * be NULL (default levels, no cached context).  Inputs over INT_MAX bytes
 * are FLOE_ERANGE.  Returns 0 or -1 with err filled (out->len unchanged). */
int floe_compress(floe_codec_ctx_t *ctx, floe_codec_t c, const void *src, size_t n, floe_buf_t *out,
                  floe_err_t *err);

/* Decompress src[0..n) into dst, which has room for exactly dst_len bytes;
 * the decompressed size must equal dst_len (Parquet pages know it).  ctx
 * may be NULL.  Never writes past dst_len.  Returns 0 or -1 with err
 * filled (FLOE_ECORRUPT). */
int floe_decompress_exact(floe_codec_ctx_t *ctx, floe_codec_t c, const void *src, size_t n,
                          void *dst, size_t dst_len, floe_err_t *err);

/* Decompress src[0..n), whose decompressed size is not known, appending it
 * to out (caller-owned).  More than max_out bytes of output is FLOE_ERANGE
 * ("exceeds the cap"): the output grows in steps of at most 256 KiB and
 * never past the cap, and a header announcing more than the cap is
 * refused before anything is allocated.  Malformed input: FLOE_ECORRUPT;
 * input that ends early: FLOE_ETRUNC (or FLOE_ECORRUPT where the library
 * cannot tell).  ctx may be NULL (a per-thread zstd context is used).  On
 * error out->len is restored.  Returns 0 or -1. */
int floe_decompress(floe_codec_ctx_t *ctx, floe_codec_t c, const void *src, size_t n,
                    floe_buf_t *out, size_t max_out, floe_err_t *err);

#endif
