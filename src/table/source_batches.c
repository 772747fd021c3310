/* Stored RecordBatch v2 bytes as messages (source_batches.h). */
#include "table/source_batches.h"

#include <stdint.h>
#include <string.h>

void floe_tbatches_init(floe_tbatches_t *d)
{
    memset(d, 0, sizeof *d);
    d->done = true;
}

void floe_tbatches_free(floe_tbatches_t *d)
{
    floe_buf_free(&d->scratch);
    floe_tbatches_init(d);
}

void floe_tbatches_start(floe_tbatches_t *d, const uint8_t *p, size_t n, int64_t from)
{
    floe_batch_iter_init(&d->batches, p, n);
    d->in_batch = false;
    d->done = false;
    d->pos = from;
}

/* The offset after o (hostile headers may say INT64_MAX). */
static int64_t after(int64_t o)
{
    return o < INT64_MAX ? o + 1 : o;
}

/* Offsets [offset, last] as bytes that do not decode (d->why says why). */
static int bad(floe_tbatches_t *d, floe_tmsg_t *m, int64_t offset, int64_t last, int64_t ts,
               const uint8_t *p, size_t n)
{
    memset(m, 0, sizeof *m);
    m->kind = FLOE_TMSG_BAD;
    m->offset = offset;
    m->last = last;
    m->timestamp = ts;
    m->key_null = true;
    m->value = floe_slice(p, n);
    m->value_null = n == 0;
    m->why = d->why.msg;
    d->pos = after(last);
    return 1;
}

/* The batch iterator stopped at a batch that fails its checks (the log
 * validated it on append: the disk changed it).  Its bytes go to the
 * dead-letter table and exactly that batch is skipped, when its header
 * still says which offsets it held. */
static int unreadable(floe_tbatches_t *d, floe_tmsg_t *m, floe_err_t *err)
{
    d->done = true;
    const uint8_t *p = d->batches.p + d->batches.off;
    size_t n = d->batches.n - d->batches.off;
    floe_batch_hdr_t h;
    floe_err_t he;
    if (floe_batch_decode_hdr(p, n, &h, &he) < 0 || floe_batch_last_offset(&h) < d->pos)
        return floe_err_set(err, FLOE_ECORRUPT, "stored batch unreadable: %s", d->why.msg);
    size_t size = floe_batch_size(&h);
    return bad(d, m, h.base_offset, floe_batch_last_offset(&h), h.base_timestamp, p,
               size <= n ? size : n);
}

int floe_tbatches_next(floe_tbatches_t *d, floe_tmsg_t *m, floe_err_t *err)
{
    for (;;) {
        if (d->in_batch) {
            floe_record_t r;
            int rc = floe_record_iter_next(&d->records, &r, &d->why);
            if (rc == 1) {
                if (r.offset < d->pos) continue;
                d->pos = after(r.offset);
                floe_tmsg_from_record(m, &r);
                return 1;
            }
            d->in_batch = false;
            if (rc < 0) /* the rest of the batch does not decode */
                return bad(d, m, d->pos, floe_batch_last_offset(&d->h), d->h.base_timestamp, d->b,
                           d->len);
            continue;
        }
        if (d->done) return 0;
        int rc = floe_batch_iter_next(&d->batches, &d->b, &d->len, &d->h, &d->why);
        if (rc < 0) return unreadable(d, m, err);
        if (rc == 0) {
            d->done = true;
            return 0;
        }
        int64_t last = floe_batch_last_offset(&d->h);
        if (last < d->pos) continue;
        if (floe_batch_is_control(&d->h)) { /* transaction markers */
            memset(m, 0, sizeof *m);
            m->kind = FLOE_TMSG_SKIP;
            m->offset = d->h.base_offset > d->pos ? d->h.base_offset : d->pos;
            m->last = last;
            d->pos = after(last);
            return 1;
        }
        floe_slice_t records;
        if (floe_batch_records(d->b, d->len, &d->h, &d->scratch, FLOE_BATCH_MAX_DECOMPRESSED,
                               &records, &d->why) < 0)
            return bad(d, m, d->h.base_offset, last, d->h.base_timestamp, d->b, d->len);
        floe_record_iter_init(&d->records, &d->h, records);
        d->in_batch = true;
    }
}
