/* Compression codecs of Kafka record batches: gzip (zlib), snappy (raw, or
 * the xerial stream framing that Java clients write), lz4 (frame format),
 * zstd.  Used by batch.c; exposed for tests and the table engine. */
#ifndef FLOE_LOG_CODEC_H
#define FLOE_LOG_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

/* Decompress in[0..n) with codec (floe_compression_t, not NONE) and append
 * the result to out (caller-owned).  More than max_out output bytes is an
 * error (FLOE_ENOMEM) and nothing past the cap is allocated.  Malformed
 * input: FLOE_ECORRUPT.  On error out->len is restored. */
int floe_codec_decompress(int codec, const uint8_t *in, size_t n, floe_buf_t *out, size_t max_out,
                          floe_err_t *err);

/* Compress in[0..n) with codec and append to out (caller-owned).  level 0
 * is the codec's default.  Snappy is written raw (one block), as
 * librdkafka does; lz4 as a frame; gzip with a gzip header. */
int floe_codec_compress(int codec, int level, const uint8_t *in, size_t n, floe_buf_t *out,
                        floe_err_t *err);

#endif
