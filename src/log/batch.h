/* Kafka RecordBatch v2 (magic 2): parse, validate, patch in place,
 * decompress, iterate records, build.  No other magic is supported.
 *
 * Layout of one batch (big-endian, as on the wire and on disk):
 *   base_offset i64 | batch_length i32 | partition_leader_epoch i32 |
 *   magic i8 | crc u32 | attributes i16 | last_offset_delta i32 |
 *   base_timestamp i64 | max_timestamp i64 | producer_id i64 |
 *   producer_epoch i16 | base_sequence i32 | record_count i32 | records...
 * batch_length counts the bytes after itself; the CRC32C covers attributes
 * to the end.  A whole batch is therefore 12 + batch_length bytes.
 *
 * Everything here works on caller memory; nothing allocates except the
 * decompression output (a caller floe_buf_t) and the builder.
 *
 * Beyond LOG_CONTRACT.md: floe_batch_decode_hdr (no CRC check),
 * floe_batch_set_leader_epoch, floe_batch_update_crc,
 * floe_batch_validate_records, floe_header_iter_t, floe_batch_opts_t for
 * the builder's settings, and log/kcodec.h for the codecs alone. */
#ifndef FLOE_LOG_BATCH_H
#define FLOE_LOG_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

#define FLOE_BATCH_LOG_OVERHEAD 12 /* base_offset + batch_length */
#define FLOE_BATCH_HDR_SIZE 61     /* fixed header through record_count */
#define FLOE_BATCH_MAGIC 2
/* Offset of the CRC-covered part (attributes) within a batch. */
#define FLOE_BATCH_CRC_START 21

/* Attribute bits. */
#define FLOE_BATCH_ATTR_COMPRESSION_MASK 0x07
#define FLOE_BATCH_ATTR_LOG_APPEND_TIME 0x08
#define FLOE_BATCH_ATTR_TRANSACTIONAL 0x10
#define FLOE_BATCH_ATTR_CONTROL 0x20
/* KIP-534: the base timestamp is the delete horizon of the batch's
 * tombstones (set by log compaction, log/cleaner.c). */
#define FLOE_BATCH_ATTR_DELETE_HORIZON 0x40

/* Compression codecs (attribute bits 0-2), numbered as Kafka does. */
typedef enum floe_compression {
    FLOE_COMPRESSION_NONE = 0,
    FLOE_COMPRESSION_GZIP = 1,
    FLOE_COMPRESSION_SNAPPY = 2,
    FLOE_COMPRESSION_LZ4 = 3,
    FLOE_COMPRESSION_ZSTD = 4,
} floe_compression_t;

/* "none", "gzip", "snappy", "lz4", "zstd"; "unknown" otherwise. */
const char *floe_compression_name(floe_compression_t codec);
/* Name -> codec: "none" (or "uncompressed"), "gzip", "snappy", "lz4",
 * "zstd"; -1 for anything else (including Kafka's "producer"). */
int floe_compression_parse(const char *name);

/* Default cap on decompressed bytes of one batch (floe_batch_records). */
#define FLOE_BATCH_MAX_DECOMPRESSED (64u * 1024 * 1024)

typedef struct floe_batch_hdr {
    int64_t base_offset;
    int32_t batch_length;
    int32_t partition_leader_epoch;
    int8_t magic;
    uint32_t crc;
    int16_t attributes;
    int32_t last_offset_delta;
    int64_t base_timestamp; /* Kafka's "first timestamp" */
    int64_t max_timestamp;
    int64_t producer_id; /* -1 when not idempotent */
    int16_t producer_epoch;
    int32_t base_sequence;
    int32_t record_count;
} floe_batch_hdr_t;

/* The codec bits; 5..7 are not codecs (floe_batch_records refuses them). */
static inline floe_compression_t floe_batch_compression(const floe_batch_hdr_t *h)
{
    return (floe_compression_t)(h->attributes & FLOE_BATCH_ATTR_COMPRESSION_MASK);
}
static inline bool floe_batch_is_log_append_time(const floe_batch_hdr_t *h)
{
    return (h->attributes & FLOE_BATCH_ATTR_LOG_APPEND_TIME) != 0;
}
static inline bool floe_batch_is_transactional(const floe_batch_hdr_t *h)
{
    return (h->attributes & FLOE_BATCH_ATTR_TRANSACTIONAL) != 0;
}
static inline bool floe_batch_is_control(const floe_batch_hdr_t *h)
{
    return (h->attributes & FLOE_BATCH_ATTR_CONTROL) != 0;
}
/* Whole size of the batch on the wire / on disk. */
static inline size_t floe_batch_size(const floe_batch_hdr_t *h)
{
    return (size_t)FLOE_BATCH_LOG_OVERHEAD + (size_t)(uint32_t)h->batch_length;
}
/* base_offset + last_offset_delta; wraps instead of overflowing on hostile
 * headers (callers that store offsets check base_offset >= 0 and that the
 * result is not below it). */
static inline int64_t floe_batch_last_offset(const floe_batch_hdr_t *h)
{
    return (int64_t)((uint64_t)h->base_offset + (uint64_t)(int64_t)h->last_offset_delta);
}
/* Last sequence of an idempotent batch (sequences wrap at INT32_MAX). */
int32_t floe_batch_last_sequence(const floe_batch_hdr_t *h);

/* Decode the fixed header without checking the CRC.  p holds n >= 61
 * bytes (more is fine; the records are not looked at).  Checks magic and
 * that batch_length is at least the header's own size.  Borrowed p. */
int floe_batch_decode_hdr(const uint8_t *p, size_t n, floe_batch_hdr_t *h, floe_err_t *err);

/* Parse and validate one whole batch at p: n must be >= the batch size
 * (12 + batch_length; extra bytes after it are ignored), magic 2, CRC32C
 * over attributes..end correct, record_count >= 0, last_offset_delta
 * consistent (>= record_count - 1 is not required: compaction leaves gaps,
 * but last_offset_delta >= 0 when record_count > 0).  Borrowed p.
 * Errors: FLOE_ETRUNC (too short), FLOE_ECORRUPT (magic, CRC, lengths). */
int floe_batch_parse_hdr(const uint8_t *p, size_t n, floe_batch_hdr_t *h, floe_err_t *err);

/* Iterate a buffer holding several concatenated batches (e.g. the Produce
 * records field).  Each step yields a whole, CRC-checked batch; trailing
 * garbage or a partial batch is an error (FLOE_ETRUNC / FLOE_ECORRUPT),
 * never silently dropped.  The iterator borrows the buffer. */
typedef struct floe_batch_iter {
    const uint8_t *p;
    size_t n;
    size_t off; /* offset of the next batch in p */
} floe_batch_iter_t;

void floe_batch_iter_init(floe_batch_iter_t *it, const uint8_t *p, size_t n);
/* Returns 1 and fills *batch, *len and *h (any may be NULL) for the next batch,
 * 0 at the clean end of the buffer, -1 on error (err filled; it->off is
 * the offset of the bad batch). */
int floe_batch_iter_next(floe_batch_iter_t *it, const uint8_t **batch, size_t *len,
                         floe_batch_hdr_t *h, floe_err_t *err);

/* In-place patches of a validated batch (b, len = its whole size).
 * base_offset and partition_leader_epoch are outside the CRC; setting
 * LogAppendTime changes attributes and max_timestamp (Kafka's rule: the
 * broker time becomes max_timestamp, readers use it for every record) and
 * recomputes the CRC. */
void floe_batch_set_base_offset(uint8_t *b, int64_t base_offset);
void floe_batch_set_leader_epoch(uint8_t *b, int32_t epoch);
void floe_batch_set_log_append_time(uint8_t *b, size_t len, int64_t ts_ms);
/* Recompute and store the CRC of a batch whose covered bytes changed. */
void floe_batch_update_crc(uint8_t *b, size_t len);

/* The records section of a validated batch (b, len = whole batch), as
 * plain bytes.  Uncompressed: *out points into b (borrowed, scratch
 * untouched).  Compressed: decompressed into scratch (reset first, grown
 * as needed, owned by the caller who frees it with floe_buf_free) and *out
 * points into scratch; more than max_out bytes (0 = the default cap
 * FLOE_BATCH_MAX_DECOMPRESSED) is an error (FLOE_ENOMEM).  Corrupt
 * compressed data: FLOE_ECORRUPT. */
int floe_batch_records(const uint8_t *b, size_t len, const floe_batch_hdr_t *h, floe_buf_t *scratch,
                       size_t max_out, floe_slice_t *out, floe_err_t *err);

/* ---- records ---- */

/* One record header.  Keys are strings in Kafka but bytes here (not checked
 * for UTF-8); a null value has value_null set and an empty value slice. */
typedef struct floe_record_header {
    floe_slice_t key;
    floe_slice_t value;
    bool value_null;
} floe_record_header_t;

/* One decoded record.  Slices borrow from the records bytes passed to the
 * iterator.  offset and timestamp are absolute: offset = base_offset +
 * offset_delta; timestamp = max_timestamp for LogAppendTime batches, else
 * base_timestamp + timestamp_delta. */
typedef struct floe_record {
    int8_t attributes;
    int64_t timestamp_delta;
    int32_t offset_delta;
    int64_t offset;
    int64_t timestamp;
    floe_slice_t key;
    bool key_null;
    floe_slice_t value;
    bool value_null;
    int32_t header_count;
    floe_slice_t headers_raw; /* the encoded headers, validated */
} floe_record_t;

typedef struct floe_record_iter {
    const uint8_t *p;
    size_t n;
    size_t off;
    int32_t remaining; /* records still expected */
    int32_t index;     /* records yielded so far */
    int64_t base_offset;
    int64_t base_timestamp;
    int64_t max_timestamp;
    bool log_append_time;
} floe_record_iter_t;

/* Iterate the records (plain bytes from floe_batch_records) of batch h.
 * Borrows records and reads h now (h may go away after init). */
void floe_record_iter_init(floe_record_iter_t *it, const floe_batch_hdr_t *h, floe_slice_t records);
/* Returns 1 and fills *r, 0 after the last record (checks that exactly
 * record_count records consumed all the bytes), -1 on a malformed record
 * (every varint, length and count is checked; FLOE_ECORRUPT/ETRUNC). */
int floe_record_iter_next(floe_record_iter_t *it, floe_record_t *r, floe_err_t *err);

/* Iterate r's headers (already validated by floe_record_iter_next). */
typedef struct floe_header_iter {
    const uint8_t *p;
    size_t n;
    size_t off;
    int32_t remaining;
} floe_header_iter_t;

void floe_header_iter_init(floe_header_iter_t *hi, const floe_record_t *r);
/* 1 and *out filled, 0 at the end, -1 if the bytes are malformed. */
int floe_header_iter_next(floe_header_iter_t *hi, floe_record_header_t *out);

/* Check that a validated batch's records decode fully: decompresses
 * (cap as in floe_batch_records, scratch as there), walks every record
 * and header, checks the count and that offset deltas are 0,1,2,... as
 * producers write them.  Used on the produce path. */
int floe_batch_validate_records(const uint8_t *b, size_t len, const floe_batch_hdr_t *h,
                                floe_buf_t *scratch, size_t max_out, floe_err_t *err);
/* floe_batch_validate_records with more checks (flags):
 * FLOE_BATCH_KEYS_REQUIRED refuses a record with a null key (FLOE_EINVAL),
 * as a compacted topic must (Kafka answers INVALID_RECORD). */
#define FLOE_BATCH_KEYS_REQUIRED 1u
int floe_batch_check_records(const uint8_t *b, size_t len, const floe_batch_hdr_t *h,
                             floe_buf_t *scratch, size_t max_out, unsigned flags, floe_err_t *err);

/* ---- building ---- */

typedef struct floe_batch_opts {
    floe_compression_t compression; /* default NONE */
    int compression_level;          /* 0 = codec default */
    int64_t base_offset;            /* default 0 (the log re-assigns it) */
    int32_t partition_leader_epoch; /* default -1 */
    int64_t producer_id;            /* default -1 */
    int16_t producer_epoch;         /* default -1 */
    int32_t base_sequence;          /* default -1 */
    bool transactional;
    bool control;
    bool log_append_time; /* timestamp type bit */
} floe_batch_opts_t;

void floe_batch_opts_default(floe_batch_opts_t *o);

typedef struct floe_batch_builder floe_batch_builder_t;

/* A builder of one batch; opts copied.  NULL when out of memory.
 * Free with floe_batch_builder_free. */
floe_batch_builder_t *floe_batch_builder_new(const floe_batch_opts_t *opts);
void floe_batch_builder_free(floe_batch_builder_t *b);
/* Start over (empty, same buffers) with new opts (NULL keeps the old). */
void floe_batch_builder_reset(floe_batch_builder_t *b, const floe_batch_opts_t *opts);

/* Append one record; key/value NULL means a null key/value; bytes copied.
 * headers: nheaders entries, copied.  The record's offset delta is its
 * index in the batch. */
int floe_batch_builder_add(floe_batch_builder_t *b, int64_t timestamp_ms, const floe_slice_t *key,
                           const floe_slice_t *value, const floe_record_header_t *headers,
                           size_t nheaders, floe_err_t *err);

size_t floe_batch_builder_count(const floe_batch_builder_t *b);
/* Bytes of the uncompressed records so far (to cap batch sizes). */
size_t floe_batch_builder_records_size(const floe_batch_builder_t *b);

/* Compress (per opts), write header and CRC, and append the whole batch to
 * out (caller-owned).  An empty builder is an error (FLOE_EINVAL).  The
 * builder keeps its records; reset it to build the next batch. */
int floe_batch_builder_finish(floe_batch_builder_t *b, floe_buf_t *out, floe_err_t *err);

#endif
