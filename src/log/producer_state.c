/* Idempotent producer state of one log: per producer id the epoch and the
 * last five batches' sequence ranges and offsets, with Kafka's rules for
 * duplicates, gaps and fencing.  Snapshots make restart cheap; the log
 * rebuilds whatever a snapshot lacks from the batch headers. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/log_int.h"
#include "util/crc32c.h"
#include "util/fs.h"

void floe_pstate_init(floe_pstate_t *ps)
{
    memset(ps, 0, sizeof *ps);
}

void floe_pstate_clear(floe_pstate_t *ps)
{
    for (size_t i = 0; i < ps->nbuckets; i++) {
        floe_pentry_t *e = ps->buckets[i];
        while (e) {
            floe_pentry_t *n = e->next;
            free(e);
            e = n;
        }
        ps->buckets[i] = NULL;
    }
    ps->count = 0;
}

void floe_pstate_free(floe_pstate_t *ps)
{
    floe_pstate_clear(ps);
    free(ps->buckets);
    memset(ps, 0, sizeof *ps);
}

static size_t bucket_of(int64_t pid, size_t nb)
{
    uint64_t x = (uint64_t)pid * 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 32) & (nb - 1);
}

floe_pentry_t *floe_pstate_find(const floe_pstate_t *ps, int64_t pid)
{
    if (!ps->nbuckets) return NULL;
    for (floe_pentry_t *e = ps->buckets[bucket_of(pid, ps->nbuckets)]; e; e = e->next)
        if (e->pid == pid) return e;
    return NULL;
}

static int grow_table(floe_pstate_t *ps)
{
    size_t nb = ps->nbuckets ? ps->nbuckets * 2 : 16;
    floe_pentry_t **b = calloc(nb, sizeof *b);
    if (!b) return -1;
    for (size_t i = 0; i < ps->nbuckets; i++) {
        floe_pentry_t *e = ps->buckets[i];
        while (e) {
            floe_pentry_t *n = e->next;
            size_t k = bucket_of(e->pid, nb);
            e->next = b[k];
            b[k] = e;
            e = n;
        }
    }
    free(ps->buckets);
    ps->buckets = b;
    ps->nbuckets = nb;
    return 0;
}

static floe_pentry_t *get_or_add(floe_pstate_t *ps, int64_t pid)
{
    floe_pentry_t *e = floe_pstate_find(ps, pid);
    if (e) return e;
    if (ps->count + 1 > ps->nbuckets && grow_table(ps) != 0) return NULL;
    e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->pid = pid;
    size_t k = bucket_of(pid, ps->nbuckets);
    e->next = ps->buckets[k];
    ps->buckets[k] = e;
    ps->count++;
    return e;
}

static const floe_pbatch_t *newest(const floe_pentry_t *e)
{
    return e->n ? &e->b[(e->head + e->n - 1) % FLOE_PSTATE_BATCHES] : NULL;
}

static bool in_sequence(int32_t last, int32_t next)
{
    return next == (last == INT32_MAX ? 0 : last + 1);
}

int floe_pstate_check(const floe_pstate_t *ps, const floe_batch_hdr_t *h, floe_pbatch_t *dup,
                      int16_t *kerr, floe_err_t *err)
{
    const floe_pentry_t *e = floe_pstate_find(ps, h->producer_id);
    /* unknown producer (new, or its batches were all deleted): any
     * sequence is accepted, as Kafka does */
    if (!e) return 0;
    if (h->producer_epoch < e->epoch) {
        *kerr = FLOE_LOG_KERR_INVALID_PRODUCER_EPOCH;
        return floe_err_set(err, FLOE_EINVAL,
                            "producer %lld epoch %d is older than the current epoch %d",
                            (long long)h->producer_id, h->producer_epoch, e->epoch);
    }
    if (h->producer_epoch > e->epoch) {
        if (h->base_sequence != 0) {
            *kerr = FLOE_LOG_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
            return floe_err_set(err, FLOE_EINVAL,
                                "producer %lld new epoch %d must start at sequence 0, not %d",
                                (long long)h->producer_id, h->producer_epoch, h->base_sequence);
        }
        return 0;
    }
    int32_t last_seq = floe_batch_last_sequence(h);
    for (int i = 0; i < e->n; i++) {
        const floe_pbatch_t *b = &e->b[(e->head + i) % FLOE_PSTATE_BATCHES];
        if (b->first_seq == h->base_sequence && b->last_seq == last_seq) {
            *dup = *b;
            return 1;
        }
    }
    const floe_pbatch_t *nb = newest(e);
    if (nb && !in_sequence(nb->last_seq, h->base_sequence)) {
        *kerr = FLOE_LOG_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
        return floe_err_set(
            err, FLOE_EINVAL, "producer %lld epoch %d: sequence %d does not follow %d",
            (long long)h->producer_id, h->producer_epoch, h->base_sequence, nb->last_seq);
    }
    return 0;
}

int floe_pstate_update(floe_pstate_t *ps, const floe_batch_hdr_t *h, int64_t now_ms)
{
    if (h->producer_id < 0 || h->base_sequence < 0 || h->record_count < 0) return 0;
    floe_pentry_t *e = get_or_add(ps, h->producer_id);
    if (!e) return -1;
    if (now_ms > e->last_ms) e->last_ms = now_ms;
    if (h->producer_epoch != e->epoch || e->n == 0) {
        if (h->producer_epoch != e->epoch) e->n = 0;
        e->epoch = h->producer_epoch;
    }
    floe_pbatch_t nb = {h->base_sequence, floe_batch_last_sequence(h), h->base_offset,
                        floe_batch_last_offset(h)};
    if (e->n == FLOE_PSTATE_BATCHES) {
        e->b[e->head] = nb;
        e->head = (uint8_t)((e->head + 1) % FLOE_PSTATE_BATCHES);
    } else {
        e->b[(e->head + e->n) % FLOE_PSTATE_BATCHES] = nb;
        e->n++;
    }
    return 0;
}

size_t floe_pstate_expire(floe_pstate_t *ps, int64_t before_ms)
{
    size_t n = 0;
    for (size_t i = 0; i < ps->nbuckets; i++) {
        floe_pentry_t **pp = &ps->buckets[i];
        while (*pp) {
            floe_pentry_t *e = *pp;
            if (e->last_ms < before_ms) {
                *pp = e->next;
                free(e);
                ps->count--;
                n++;
            } else {
                pp = &e->next;
            }
        }
    }
    return n;
}

/* Snapshot file: "FLPS" | u32 version 2 | i64 upto | u32 count |
 * count x (i64 pid, i16 epoch, i64 last_ms, u8 n, n x (i32 first_seq,
 * i32 last_seq, i64 first_off, i64 last_off)) | u32 crc32c of all before. */
#define PS_MAGIC "FLPS"

int floe_pstate_save(const floe_pstate_t *ps, const char *path, int64_t upto, bool durable,
                     floe_err_t *err)
{
    floe_buf_t b = FLOE_BUF_INIT;
    int rc = floe_buf_append(&b, PS_MAGIC, 4);
    rc |= floe_buf_append_be32(&b, 2);
    rc |= floe_buf_append_be64(&b, (uint64_t)upto);
    rc |= floe_buf_append_be32(&b, (uint32_t)ps->count);
    for (size_t i = 0; i < ps->nbuckets; i++)
        for (const floe_pentry_t *e = ps->buckets[i]; e; e = e->next) {
            rc |= floe_buf_append_be64(&b, (uint64_t)e->pid);
            rc |= floe_buf_append_be16(&b, (uint16_t)e->epoch);
            rc |= floe_buf_append_be64(&b, (uint64_t)e->last_ms);
            rc |= floe_buf_append_u8(&b, e->n);
            for (int k = 0; k < e->n; k++) {
                const floe_pbatch_t *pb = &e->b[(e->head + k) % FLOE_PSTATE_BATCHES];
                rc |= floe_buf_append_be32(&b, (uint32_t)pb->first_seq);
                rc |= floe_buf_append_be32(&b, (uint32_t)pb->last_seq);
                rc |= floe_buf_append_be64(&b, (uint64_t)pb->first_off);
                rc |= floe_buf_append_be64(&b, (uint64_t)pb->last_off);
            }
        }
    if (rc == 0) rc = floe_buf_append_be32(&b, floe_crc32c(0, b.data, b.len));
    if (rc != 0) {
        floe_buf_free(&b);
        return floe_err_set(err, FLOE_ENOMEM, "out of memory writing producer state");
    }
    rc = durable ? floe_fs_write_atomic(path, b.data, b.len, err)
                 : floe_fs_write_nosync(path, b.data, b.len, err);
    floe_buf_free(&b);
    return rc;
}

int floe_pstate_load(floe_pstate_t *ps, const char *path, int64_t *upto, floe_err_t *err)
{
    floe_pstate_clear(ps);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return floe_err_errno(err, errno, path);
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < 24 || st.st_size > (1 << 30)) {
        close(fd);
        return floe_err_set(err, FLOE_ECORRUPT, "%s: bad size", path);
    }
    size_t n = (size_t)st.st_size;
    uint8_t *p = malloc(n);
    if (!p) {
        close(fd);
        return floe_err_set(err, FLOE_ENOMEM, "out of memory reading %s", path);
    }
    ssize_t r = pread(fd, p, n, 0);
    close(fd);
    int rc = -1;
    if (r != (ssize_t)n) {
        floe_err_set(err, FLOE_EIO, "%s: short read", path);
        goto out;
    }
    if (memcmp(p, PS_MAGIC, 4) != 0 || floe_rd_be32(p + 4) != 2 ||
        floe_crc32c(0, p, n - 4) != floe_rd_be32(p + n - 4)) {
        floe_err_set(err, FLOE_ECORRUPT, "%s: bad magic, version or CRC", path);
        goto out;
    }
    *upto = (int64_t)floe_rd_be64(p + 8);
    uint32_t count = floe_rd_be32(p + 16);
    size_t off = 20, end = n - 4;
    for (uint32_t i = 0; i < count; i++) {
        if (end - off < 19) goto corrupt;
        floe_batch_hdr_t h;
        memset(&h, 0, sizeof h);
        h.producer_id = (int64_t)floe_rd_be64(p + off);
        h.producer_epoch = (int16_t)floe_rd_be16(p + off + 8);
        int64_t last_ms = (int64_t)floe_rd_be64(p + off + 10);
        uint8_t nb = p[off + 18];
        off += 19;
        if (nb > FLOE_PSTATE_BATCHES || end - off < (size_t)nb * 24) goto corrupt;
        for (uint8_t k = 0; k < nb; k++) {
            int32_t fs = (int32_t)floe_rd_be32(p + off), ls = (int32_t)floe_rd_be32(p + off + 4);
            int64_t fo = (int64_t)floe_rd_be64(p + off + 8),
                    lo = (int64_t)floe_rd_be64(p + off + 16);
            off += 24;
            if (fs < 0 || fo < 0 || lo < fo || lo - fo >= INT32_MAX) goto corrupt;
            h.base_sequence = fs;
            h.base_offset = fo;
            h.last_offset_delta = (int32_t)(lo - fo);
            h.record_count = h.last_offset_delta + 1;
            if (floe_batch_last_sequence(&h) != ls) goto corrupt;
            if (floe_pstate_update(ps, &h, last_ms) != 0) {
                floe_err_set(err, FLOE_ENOMEM, "out of memory loading %s", path);
                goto out;
            }
        }
    }
    if (off != end) goto corrupt;
    rc = 0;
    goto out;
corrupt:
    floe_err_set(err, FLOE_ECORRUPT, "%s: malformed entries", path);
out:
    if (rc != 0) floe_pstate_clear(ps);
    free(p);
    return rc;
}
