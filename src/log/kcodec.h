/* Kafka record-batch compression (attribute bits 0-2, floe_compression_t)
 * over the core in util/compress.h: gzip, snappy (one raw block, or the
 * xerial stream framing that Java clients write), lz4 (frame format) and
 * zstd.  Used by batch.c; exposed for tests and fuzzers. */
#ifndef FLOE_LOG_KCODEC_H
#define FLOE_LOG_KCODEC_H

#include <stddef.h>
#include <stdint.h>

#include "log/batch.h"
#include "util/buf.h"
#include "util/err.h"

/* Decompress in[0..n) with codec (not NONE) and append the result to out
 * (caller-owned).  More than max_out output bytes is an error (FLOE_ENOMEM)
 * and nothing past the cap is allocated.  Malformed input: FLOE_ECORRUPT
 * (or FLOE_ETRUNC when it ends early); an unknown codec: FLOE_ECORRUPT.
 * On error out->len is restored. */
int floe_kcodec_decompress(floe_compression_t codec, const uint8_t *in, size_t n, floe_buf_t *out,
                           size_t max_out, floe_err_t *err);

/* Compress in[0..n) with codec (not NONE) and append to out
 * (caller-owned).  level 0 is the codec's default.  Snappy is written raw
 * (one block), as librdkafka does; lz4 as a frame; gzip with a gzip
 * header. */
int floe_kcodec_compress(floe_compression_t codec, int level, const uint8_t *in, size_t n,
                         floe_buf_t *out, floe_err_t *err);

#endif
