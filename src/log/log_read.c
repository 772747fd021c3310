/* Reads of a log: whole stored batches for Fetch, and offset-for-timestamp
 * for ListOffsets.  The lock is held only to pick and pin a segment and to
 * learn how many of its bytes are complete; file reads run outside it. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log_int.h"
#include "util/diag.h"

/* Index of the segment holding offset (last with base <= offset), or of
 * the first segment after a gap.  Caller holds the lock; nsegs >= 1. */
static size_t seg_for(const floe_log_t *l, int64_t offset)
{
    size_t lo = 0, hi = l->nsegs; /* first with base > offset */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (l->segs[mid]->base <= offset) lo = mid + 1;
        else
            hi = mid;
    }
    size_t i = lo ? lo - 1 : 0;
    while (i + 1 < l->nsegs && l->segs[i]->next <= offset) i++;
    return i;
}

/* Unpin cur and pin the segment after it; NULL when none or when it
 * starts at or past `end`, the end offset when the read began: a segment
 * that was active then may have grown since, and its newer batches (past
 * that end) must not be skipped by jumping to a later segment.  NULL too
 * when cur was deleted (retention, DeleteRecords) during the read: the
 * segments after it may be gone as well, and jumping to the first one
 * left would hand the reader a gap it cannot see; the read ends with cur
 * and the next one is out of range.  Takes and releases the lock. */
static floe_segment_t *pin_next(floe_log_t *l, floe_segment_t *cur, int64_t end, uint64_t *limit)
{
    pthread_mutex_lock(&l->mu);
    floe_segment_t *n = NULL;
    for (size_t i = 0; i < l->nsegs && !cur->deleted; i++)
        if (l->segs[i]->base > cur->base) {
            n = l->segs[i];
            break;
        }
    if (n && n->base >= end) n = NULL;
    if (n) {
        n->refs++;
        *limit = n->size;
    }
    floe_log_unpin(l, cur);
    pthread_mutex_unlock(&l->mu);
    return n;
}

static void unpin_locked(floe_log_t *l, floe_segment_t *s)
{
    pthread_mutex_lock(&l->mu);
    floe_log_unpin(l, s);
    pthread_mutex_unlock(&l->mu);
}

static int pread_all(int fd, uint8_t *p, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, p + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Append to out the whole batches of one segment's .log (fd) from the
 * one holding offset on, from position start up to limit, while *got
 * stays within max_bytes (the first batch of the read always whole).
 * Returns 1 when the read is done (budget used up or the next batch does
 * not fit), 0 when the segment is exhausted, -1 with *err. */
static int read_segment(int fd, uint64_t start, int64_t offset, uint64_t limit, size_t max_bytes,
                        size_t *got, floe_buf_t *out, floe_err_t *err)
{
    uint64_t pos;
    floe_batch_hdr_t h;
    int f = floe_segment_find(fd, start, offset, limit, &pos, &h, err);
    if (f < 0) return -1;
    if (f > 0) return 0;
    size_t first = floe_batch_size(&h);
    size_t want = max_bytes > *got ? max_bytes - *got : 0;
    if (*got == 0 && want < first) want = first;
    if (want > limit - pos) want = (size_t)(limit - pos);
    if (want < first) return 1; /* the next batch does not fit */
    if (floe_buf_reserve(out, want) != 0)
        return floe_err_set(err, FLOE_ENOMEM, "out of memory reading the log");
    uint8_t *dst = out->data + out->len;
    if (pread_all(fd, dst, want, pos) != 0)
        return floe_err_errno(err, errno ? errno : EIO, "read segment");
    /* keep whole batches only */
    size_t take = 0;
    while (take + FLOE_BATCH_LOG_OVERHEAD <= want) {
        uint32_t bl = floe_rd_be32(dst + take + 8);
        size_t sz = FLOE_BATCH_LOG_OVERHEAD + (size_t)bl;
        if (bl < FLOE_BATCH_HDR_SIZE - FLOE_BATCH_LOG_OVERHEAD || sz > want - take) break;
        take += sz;
    }
    out->len += take;
    *got += take;
    return take < want || pos + take < limit ? 1 : 0; /* budget used up? */
}

int floe_log_read(floe_log_t *l, int64_t offset, size_t max_bytes, floe_buf_t *out,
                  floe_log_read_info_t *info, floe_err_t *err)
{
    floe_log_read_info_t dummy;
    if (!info) info = &dummy;
    memset(info, 0, sizeof *info);
    pthread_mutex_lock(&l->mu);
    int64_t end = l->segs[l->nsegs - 1]->next;
    info->high_watermark = info->end_offset = end;
    info->log_start_offset = l->log_start;
    if (offset < l->log_start || offset > end) {
        int64_t start = l->log_start;
        pthread_mutex_unlock(&l->mu);
        info->error_code = FLOE_LOG_KERR_OFFSET_OUT_OF_RANGE;
        return floe_err_set(err, FLOE_ERANGE,
                            "offset %" PRId64 " is outside the log [%" PRId64 ", %" PRId64 "]",
                            offset, start, end);
    }
    if (offset == end) {
        pthread_mutex_unlock(&l->mu);
        return 0;
    }
    floe_segment_t *s = l->segs[seg_for(l, offset)];
    s->refs++;
    uint64_t limit = s->size;
    uint64_t start = floe_segment_lookup_pos(s, offset);
    pthread_mutex_unlock(&l->mu);

    size_t got = 0;
    size_t base_len = out->len;
    int rc = 0;
    while (s) {
        int fd = floe_fdc_get(&s->log, err);
        int r = fd < 0 ? -1 : read_segment(fd, start, offset, limit, max_bytes, &got, out, err);
        if (fd >= 0) floe_fdc_put(&s->log);
        if (r < 0) {
            rc = -1;
            break;
        }
        if (r > 0 || max_bytes <= got) break;
        /* this segment is exhausted: go on with the next one */
        s = pin_next(l, s, end, &limit);
        if (s) offset = s->base;
        start = 0;
    }
    if (s) unpin_locked(l, s);
    if (rc != 0) out->len = base_len;
    info->bytes = out->len - base_len;
    return rc;
}

/* First record at or after ts in the batch at pos of a .log (fd),
 * already known to hold max_timestamp >= ts.  Returns 0 with off and
 * ts_found set, 1 if none. */
static int first_in_batch(int fd, uint64_t pos, const floe_batch_hdr_t *h, int64_t ts,
                          int64_t min_off, int64_t *off, int64_t *ts_found, floe_err_t *err)
{
    size_t sz = floe_batch_size(h);
    uint8_t *b = malloc(sz);
    if (!b) return floe_err_set(err, FLOE_ENOMEM, "out of memory reading a batch");
    int rc = 1;
    floe_buf_t scratch = FLOE_BUF_INIT;
    if (pread_all(fd, b, sz, pos) != 0) {
        rc = floe_err_errno(err, errno ? errno : EIO, "read segment");
        goto out;
    }
    floe_slice_t recs;
    if (floe_batch_records(b, sz, h, &scratch, 0, &recs, err) != 0) {
        rc = -1;
        goto out;
    }
    floe_record_iter_t it;
    floe_record_iter_init(&it, h, recs);
    floe_record_t r;
    int k;
    while ((k = floe_record_iter_next(&it, &r, err)) == 1) {
        if (r.timestamp >= ts && r.offset >= min_off) {
            *off = r.offset;
            *ts_found = r.timestamp;
            rc = 0;
            goto out;
        }
    }
    if (k < 0) rc = -1;
out:
    floe_buf_free(&scratch);
    free(b);
    return rc;
}

/* The first record at or after ts_ms (and min_off) in one segment's .log
 * (fd), from the batch holding offset `from` (position start) up to
 * limit.  Returns 1 with *found and *ts_found, 0 when the segment has
 * none, -1 with *err. */
static int time_in_segment(int fd, uint64_t start, int64_t from, uint64_t limit, int64_t ts_ms,
                           int64_t min_off, int64_t *found, int64_t *ts_found, floe_err_t *err)
{
    uint64_t pos;
    floe_batch_hdr_t h;
    int f = floe_segment_find(fd, start, from, limit, &pos, &h, err);
    if (f != 0) return f < 0 ? -1 : 0;
    for (;;) {
        if (h.max_timestamp >= ts_ms) {
            int k = first_in_batch(fd, pos, &h, ts_ms, min_off, found, ts_found, err);
            if (k <= 0) return k < 0 ? -1 : 1;
        }
        pos += floe_batch_size(&h);
        if (pos + FLOE_BATCH_HDR_SIZE > limit) return 0;
        uint8_t hb[FLOE_BATCH_HDR_SIZE];
        errno = 0;
        if (pread_all(fd, hb, sizeof hb, pos) != 0 ||
            floe_batch_decode_hdr(hb, sizeof hb, &h, err) != 0) {
            if (errno) floe_err_errno(err, errno, "read segment");
            return -1;
        }
    }
}

int64_t floe_log_offset_for_time(floe_log_t *l, int64_t ts_ms, int64_t *ts_out)
{
    if (ts_out) *ts_out = -1;
    floe_err_t err = {0};
    pthread_mutex_lock(&l->mu);
    int64_t min_off = l->log_start;
    int64_t end = l->segs[l->nsegs - 1]->next;
    floe_segment_t *s = NULL;
    for (size_t i = 0; i < l->nsegs; i++) {
        floe_segment_t *c = l->segs[i];
        if (c->size > 0 && c->max_ts >= ts_ms && c->next > min_off) {
            s = c;
            break;
        }
    }
    if (!s) {
        pthread_mutex_unlock(&l->mu);
        return -1;
    }
    s->refs++;
    uint64_t limit = s->size;
    int64_t from = floe_segment_lookup_time(s, ts_ms);
    if (from < min_off) from = min_off;
    uint64_t start = floe_segment_lookup_pos(s, from);
    pthread_mutex_unlock(&l->mu);

    int64_t found = -1;
    int f = 0;
    while (s) {
        int64_t off = -1, tsf = -1;
        int fd = floe_fdc_get(&s->log, &err);
        f = fd < 0 ? -1 : time_in_segment(fd, start, from, limit, ts_ms, min_off, &off, &tsf, &err);
        if (fd >= 0) floe_fdc_put(&s->log);
        if (f > 0) {
            found = off;
            if (ts_out) *ts_out = tsf;
        }
        if (f != 0) break;
        s = pin_next(l, s, end, &limit);
        if (s) from = s->base;
        start = 0;
    }
    if (s) unpin_locked(l, s);
    if (found < 0 && s)
        FLOE_WARN("log: %s: offset for time %" PRId64 ": %s", l->dir, ts_ms, err.msg);
    return found;
}
