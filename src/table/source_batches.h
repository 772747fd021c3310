/* Messages from stored RecordBatch v2 bytes: how a source that holds
 * whole batches (the broker's partition logs, source_logs.h) hands the
 * engine messages (source.h).  Records are decoded in place as they are
 * taken; a transaction marker batch becomes a SKIP, bytes that do not
 * decode a BAD carrying them, so the engine never looks at batches.
 *
 * Not thread-safe: one reader per decoder. */
#ifndef FLOE_TABLE_SOURCE_BATCHES_H
#define FLOE_TABLE_SOURCE_BATCHES_H

#include "log/batch.h"
#include "table/source.h"

typedef struct floe_tbatches {
    floe_batch_iter_t batches;
    const uint8_t *b; /* the batch whose records are being handed out */
    size_t len;
    floe_batch_hdr_t h;
    bool in_batch;
    bool done; /* the bytes are used up, or the rest is unreadable */
    floe_record_iter_t records;
    int64_t pos;        /* offsets below are not handed out */
    floe_buf_t scratch; /* decompressed records of the batch */
    floe_err_t why;     /* reason of the last BAD */
} floe_tbatches_t;

/* A decoder with nothing to decode; free with floe_tbatches_free. */
void floe_tbatches_init(floe_tbatches_t *d);
void floe_tbatches_free(floe_tbatches_t *d);
/* Decode the concatenated batches p[0..n) (borrowed until the next start)
 * from offset `from` on. */
void floe_tbatches_start(floe_tbatches_t *d, const uint8_t *p, size_t n, int64_t from);
/* The next message (source.h, next()): 1 with *m (borrowing from the bytes
 * and the decoder), 0 at the end, -1 with *err (FLOE_ECORRUPT) when a
 * stored batch fails its checks and its header does not say which offsets
 * it held: the rest cannot be skipped. */
int floe_tbatches_next(floe_tbatches_t *d, floe_tmsg_t *m, floe_err_t *err);

/* The message of a decoded record r (borrowed: m points into it). */
static inline void floe_tmsg_from_record(floe_tmsg_t *m, const floe_record_t *r)
{
    m->kind = FLOE_TMSG_RECORD;
    m->offset = m->last = r->offset;
    m->timestamp = r->timestamp;
    m->key = r->key;
    m->key_null = r->key_null;
    m->value = r->value;
    m->value_null = r->value_null;
    m->headers.count = r->header_count > 0 ? (size_t)r->header_count : 0;
    m->headers.list = NULL;
    m->headers.raw = r->headers_raw;
    m->why = NULL;
}

#endif
