/* Log compaction (cleanup.policy=compact, log.h floe_log_clean): keep the
 * latest record of every key in the sealed segments, as Kafka's log
 * cleaner does.
 *
 * One run: map every key of the dirty segments (from the cleaner
 * checkpoint on) to its latest offset, then rewrite the sealed segments
 * from the log's start through the mapped ones, in groups of consecutive
 * segments that fit in segment.bytes, each group into one new segment
 * with the group's first base offset.  A record stays when it is the
 * latest of its key (or newer than anything mapped); a tombstone (null
 * value) stays until the delete horizon its batch got when it was first
 * cleaned (KIP-534: attribute bit 6 and the base timestamp hold
 * now + delete.retention.ms) has passed.  Batches keep their base offset
 * and last offset delta, so offsets never change and the gaps are inside
 * batches or between them; a batch all of whose records go but which is
 * the last one of a producer the log still knows stays as an empty
 * header, so that the producer's sequence survives (Kafka's
 * RETAIN_EMPTY).  Control batches are copied as they are (floe writes
 * none: no transactions).
 *
 * Crash safety, per group: the new segment is written to
 * "<base>.log.cleaned" and fsynced; renamed to "<base>.log.<end>.swap"
 * (the dir fsynced: from here on it replaces the segments with base in
 * [base, end)); the old segments' files are unlinked (dir fsynced); the
 * swap file is renamed to "<base>.log" (dir fsynced).  floe_log_open
 * removes a leftover .cleaned and finishes a swap it finds, so a crash at
 * any instant leaves the old segments or the new one, never neither.
 * The swap runs under the log lock (three directory fsyncs), the reading
 * and writing before it outside; readers of an old segment keep its
 * descriptor until they let go.
 *
 * The checkpoint "cleaner-offset-checkpoint" in the log's folder holds
 * the offset below which the log is clean and the earliest delete horizon
 * of a tombstone still kept (written atomically after each run). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/kcodec.h"
#include "log/log_int.h"
#include "util/diag.h"
#include "util/fs.h"
#include "util/mem.h"
#include "util/murmur3.h"
#include "util/parse.h"
#include "util/varint.h"

#define CHECKPOINT_FILE "cleaner-offset-checkpoint"
#define DEFAULT_MAX_KEYS (1u << 20)
#define DEFAULT_MAX_DIRTY (256ull << 20)

/* ---- the offset map: key hash -> latest offset ---- */

typedef struct slot {
    uint64_t h;   /* two murmur3 hashes of the key */
    uint32_t h2;  /* a third one */
    uint32_t len; /* and its length: 96 bits + length, as Kafka's MD5 */
    int64_t off;  /* -1: empty */
} slot_t;

typedef struct omap {
    slot_t *s;
    size_t cap, count, max;
    int64_t latest; /* highest offset put in */
} omap_t;

static void key_hash(floe_slice_t k, slot_t *out)
{
    out->h = (uint64_t)floe_murmur3_32(k.ptr, k.len, 0x9747b28c) << 32 |
             floe_murmur3_32(k.ptr, k.len, 0x5bd1e995);
    out->h2 = floe_murmur3_32(k.ptr, k.len, 0x1b873593);
    out->len = (uint32_t)k.len;
}

static size_t slot_of(const omap_t *m, const slot_t *k)
{
    size_t i = (size_t)(k->h ^ (k->h >> 29) ^ k->h2) & (m->cap - 1);
    while (m->s[i].off >= 0 && (m->s[i].h != k->h || m->s[i].h2 != k->h2 || m->s[i].len != k->len))
        i = (i + 1) & (m->cap - 1);
    return i;
}

static int omap_grow(omap_t *m)
{
    size_t nc = m->cap ? m->cap * 2 : 1024;
    slot_t *ns = malloc(nc * sizeof *ns);
    if (!ns) return -1;
    for (size_t i = 0; i < nc; i++) ns[i].off = -1;
    omap_t n = {ns, nc, 0, m->max, m->latest};
    for (size_t i = 0; i < m->cap; i++)
        if (m->s[i].off >= 0) {
            n.s[slot_of(&n, &m->s[i])] = m->s[i];
            n.count++;
        }
    free(m->s);
    *m = n;
    return 0;
}

/* 1 when put, 0 when the map is full (the key not put), -1 out of memory. */
static int omap_put(omap_t *m, floe_slice_t key, int64_t off)
{
    slot_t k;
    key_hash(key, &k);
    if (m->cap == 0 || (m->count + 1) * 2 > m->cap) {
        if (m->count >= m->max) {
            size_t i = m->cap ? slot_of(m, &k) : 0;
            if (!m->cap || m->s[i].off < 0) return 0;
        } else if (omap_grow(m) != 0) {
            return -1;
        }
    }
    size_t i = slot_of(m, &k);
    if (m->s[i].off < 0) {
        if (m->count >= m->max) return 0;
        m->count++;
    }
    k.off = off;
    m->s[i] = k;
    if (off > m->latest) m->latest = off;
    return 1;
}

static int64_t omap_get(const omap_t *m, floe_slice_t key)
{
    if (!m->cap) return -1;
    slot_t k;
    key_hash(key, &k);
    return m->s[slot_of(m, &k)].off;
}

/* ---- checkpoint ---- */

static int checkpoint_path(const char *dir, char *out, size_t n, floe_err_t *err)
{
    return floe_path_join(out, n, dir, CHECKPOINT_FILE, err);
}

void floe_cleaner_load_checkpoint(floe_log_t *l)
{
    char path[PATH_MAX], text[64] = {0};
    l->clean_upto = 0;
    l->clean_horizon = -1;
    if (checkpoint_path(l->dir, path, sizeof path, NULL) != 0) return;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t r = read(fd, text, sizeof text - 1);
    close(fd);
    long long upto, horizon;
    if (r <= 0 || sscanf(text, "%lld %lld", &upto, &horizon) != 2 || upto < 0) {
        FLOE_WARN("log: %s: unreadable cleaner checkpoint, cleaning from the start", path);
        return;
    }
    l->clean_upto = upto;
    l->clean_horizon = horizon;
}

static int save_checkpoint(const char *dir, int64_t upto, int64_t horizon, floe_err_t *err)
{
    char path[PATH_MAX], text[64];
    if (checkpoint_path(dir, path, sizeof path, err) != 0) return -1;
    int n = snprintf(text, sizeof text, "%" PRId64 " %" PRId64 "\n", upto, horizon);
    return floe_fs_write_atomic(path, text, (size_t)n, err);
}

/* ---- recovery at open ---- */

/* "<20 digits>.log.cleaned" -> base; "<20>.log.<20>.swap" -> base, end. */
static bool parse_cleaned(const char *name, int64_t *base)
{
    return strlen(name) == 32 && !strcmp(name + 20, ".log.cleaned") &&
           sscanf(name, "%20" SCNd64, base) == 1;
}
static bool parse_swap(const char *name, int64_t *base, int64_t *end)
{
    return strlen(name) == 50 && !strncmp(name + 20, ".log.", 5) && !strcmp(name + 45, ".swap") &&
           sscanf(name, "%20" SCNd64, base) == 1 && sscanf(name + 25, "%20" SCNd64, end) == 1;
}

static int swap_path(char *out, size_t n, const char *dir, int64_t base, int64_t end,
                     floe_err_t *err)
{
    return floe_path_fmt(out, n, err, "%s/%020" PRId64 ".log.%020" PRId64 ".swap", dir, base, end);
}

static void unlink_base(const char *dir, int64_t base)
{
    floe_segment_t fake = {.base = base};
    floe_segment_unlink(dir, &fake);
}

int floe_cleaner_recover(const char *dir, floe_err_t *err)
{
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? 0 : floe_err_errno(err, errno, dir);
    int rc = 0;
    struct dirent *de;
    int64_t *logs = NULL;
    size_t nlogs = 0, cap = 0;
    struct swap {
        int64_t base, end;
    } *swaps = NULL;
    size_t nswaps = 0, capswaps = 0;
    while ((de = readdir(d)) != NULL) {
        int64_t b, e;
        char path[PATH_MAX];
        size_t len = strlen(de->d_name);
        if (parse_cleaned(de->d_name, &b)) {
            if (floe_path_join(path, sizeof path, dir, de->d_name, NULL) == 0) unlink(path);
        } else if (parse_swap(de->d_name, &b, &e)) {
            if (floe_grow(&swaps, &capswaps, nswaps + 1, sizeof *swaps) != 0) goto oom;
            swaps[nswaps++] = (struct swap){b, e};
        } else if (len == 24 && !strcmp(de->d_name + 20, ".log") &&
                   sscanf(de->d_name, "%20" SCNd64, &b) == 1) {
            if (floe_grow(&logs, &cap, nlogs + 1, sizeof *logs) != 0) goto oom;
            logs[nlogs++] = b;
        }
    }
    for (size_t i = 0; i < nswaps && rc == 0; i++) {
        /* the swap file is whole and durable: it replaces [base, end) */
        FLOE_INFO("log: %s: finishing the swap of cleaned segment %020" PRId64, dir, swaps[i].base);
        for (size_t k = 0; k < nlogs; k++)
            if (logs[k] >= swaps[i].base && logs[k] < swaps[i].end) unlink_base(dir, logs[k]);
        unlink_base(dir, swaps[i].base);
        char from[PATH_MAX], to[PATH_MAX];
        rc = floe_fs_fsync_dir(dir, err);
        if (!rc) rc = swap_path(from, sizeof from, dir, swaps[i].base, swaps[i].end, err);
        if (!rc) rc = floe_segment_path(to, sizeof to, dir, swaps[i].base, "log", err);
        if (!rc) rc = floe_fs_rename(from, to, false, err);
    }
    closedir(d);
    free(logs);
    free(swaps);
    return rc;
oom:
    closedir(d);
    free(logs);
    free(swaps);
    return floe_err_oom(err);
}

/* ---- one run ---- */

typedef struct prod {
    int64_t pid, last_off;
} prod_t;

static int cmp_pid(const void *a, const void *b)
{
    int64_t x = ((const prod_t *)a)->pid, y = ((const prod_t *)b)->pid;
    return x < y ? -1 : x > y;
}

/* The state of a run. */
typedef struct run {
    floe_log_t *l;
    floe_log_config_t cfg;
    const floe_log_clean_opts_t *o;
    int64_t now;
    omap_t map;
    prod_t *prods; /* last batch of each producer the log knows, by pid */
    size_t nprods;
    floe_buf_t win, scratch, recs, z, out; /* win: read-ahead of a segment */
    uint64_t wstart;                       /* file position of win.data[0] */
    const uint8_t *bp;                     /* the current batch, in win */
    size_t blen;
    int64_t map_from;   /* records below it were mapped by earlier runs */
    int64_t keep_above; /* records past it stay (the map filled up there) */
    int64_t horizon;    /* earliest delete horizon of a kept tombstone, -1 */
    floe_log_clean_stats_t *st;
    floe_segment_t *sh; /* the indexes of the group being written */
    uint64_t written;   /* bytes of it in the .cleaned file */
} run_t;

static int pread_all(int fd, void *p, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (uint8_t *)p + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (r == 0) errno = EIO;
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, (const uint8_t *)p + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        done += (size_t)w;
    }
    return 0;
}

/* Make [pos, pos+need) of a segment file (fd, size bytes) readable in
 * r->win, reading ahead a window; returns a pointer to it, NULL on a
 * read error (errno). */
#define WINDOW (1u << 20)
static const uint8_t *win_get(run_t *r, int fd, uint64_t size, uint64_t pos, size_t need)
{
    if (pos >= r->wstart && pos + need <= r->wstart + r->win.len)
        return r->win.data + (pos - r->wstart);
    size_t want = need > WINDOW ? need : WINDOW;
    if (want > size - pos) want = (size_t)(size - pos);
    floe_buf_reset(&r->win);
    if (floe_buf_reserve(&r->win, want) != 0) {
        errno = ENOMEM;
        return NULL;
    }
    if (pread_all(fd, r->win.data, want, pos) != 0) return NULL;
    r->win.len = want;
    r->wstart = pos;
    return r->win.data;
}

/* Call fn for every whole, CRC-checked batch of a sealed segment (the
 * bytes at r->bp, r->blen).  fn returns 0 to go on, -1 to stop with *err. */
typedef int (*batch_fn)(run_t *r, const floe_batch_hdr_t *h, floe_err_t *err);
static int each_batch(run_t *r, floe_segment_t *s, uint64_t size, batch_fn fn, floe_err_t *err)
{
    int fd = floe_fdc_get(&s->log, err);
    if (fd < 0) return -1;
    floe_buf_reset(&r->win);
    r->wstart = 0;
    uint64_t pos = 0;
    int rc = 0;
    while (rc == 0 && pos + FLOE_BATCH_HDR_SIZE <= size) {
        floe_batch_hdr_t h;
        const uint8_t *p = win_get(r, fd, size, pos, FLOE_BATCH_HDR_SIZE);
        if (!p) {
            rc = floe_err_errno(err, errno, s->log.path);
            break;
        }
        if (floe_batch_decode_hdr(p, FLOE_BATCH_HDR_SIZE, &h, err) != 0 ||
            floe_batch_size(&h) > size - pos) {
            rc = floe_err_set(err, FLOE_ECORRUPT, "%s: bad batch at %" PRIu64, s->log.path, pos);
            break;
        }
        size_t bs = floe_batch_size(&h);
        if (!(p = win_get(r, fd, size, pos, bs))) {
            rc = floe_err_errno(err, errno, s->log.path);
            break;
        }
        if (floe_batch_parse_hdr(p, bs, &h, err) != 0) {
            floe_err_wrap(err, "%s at %" PRIu64, s->log.path, pos);
            rc = -1;
            break;
        }
        r->bp = p;
        r->blen = bs;
        rc = fn(r, &h, err);
        pos += bs;
    }
    floe_fdc_put(&s->log);
    return rc;
}

/* Map the keys of one batch (a dirty segment's). */
static int map_batch(run_t *r, const floe_batch_hdr_t *h, floe_err_t *err)
{
    if (floe_batch_is_control(h) || h->record_count == 0) return 0;
    floe_slice_t recs;
    if (floe_batch_records(r->bp, r->blen, h, &r->scratch, 0, &recs, err) != 0) return -1;
    floe_record_iter_t it;
    floe_record_iter_init(&it, h, recs);
    floe_record_t rec;
    int k;
    while ((k = floe_record_iter_next(&it, &rec, err)) == 1) {
        if (rec.key_null || rec.offset < r->map_from) continue;
        int p = omap_put(&r->map, rec.key, rec.offset);
        if (p < 0) return floe_err_oom(err);
        if (p == 0) { /* full: what lies past the last key put stays */
            r->keep_above = r->map.latest;
            return 1;
        }
    }
    return k < 0 ? -1 : 0;
}

static int put_varint(floe_buf_t *o, int64_t v, bool lng)
{
    uint8_t tmp[FLOE_VARINT64_MAX_LEN];
    size_t n = lng ? floe_varlong_encode(tmp, v) : floe_varint_encode(tmp, (int32_t)v);
    return floe_buf_append(o, tmp, n);
}

/* One record again, with its timestamp delta against base_ts. */
static int put_record(floe_buf_t *o, const floe_record_t *rec, int64_t ts_delta)
{
    floe_buf_t body = FLOE_BUF_INIT;
    int rc = floe_buf_append_u8(&body, (uint8_t)rec->attributes);
    rc |= put_varint(&body, ts_delta, true);
    rc |= put_varint(&body, rec->offset_delta, false);
    rc |= put_varint(&body, rec->key_null ? -1 : (int64_t)rec->key.len, false);
    if (!rec->key_null) rc |= floe_buf_append(&body, rec->key.ptr, rec->key.len);
    rc |= put_varint(&body, rec->value_null ? -1 : (int64_t)rec->value.len, false);
    if (!rec->value_null) rc |= floe_buf_append(&body, rec->value.ptr, rec->value.len);
    rc |= put_varint(&body, rec->header_count, false);
    rc |= floe_buf_append(&body, rec->headers_raw.ptr, rec->headers_raw.len);
    rc |= put_varint(o, (int64_t)body.len, false);
    rc |= floe_buf_append(o, body.data, body.len);
    floe_buf_free(&body);
    return rc ? -1 : 0;
}

static bool last_of_producer(const run_t *r, const floe_batch_hdr_t *h)
{
    if (h->producer_id < 0 || !r->nprods) return false;
    prod_t key = {h->producer_id, 0};
    const prod_t *p = bsearch(&key, r->prods, r->nprods, sizeof *p, cmp_pid);
    return p && p->last_off == floe_batch_last_offset(h);
}

/* Write a batch header (and body) built from h into r->out; CRC set. */
static int emit(run_t *r, const floe_batch_hdr_t *h, int16_t attr, int64_t base_ts, int64_t max_ts,
                int32_t count, const uint8_t *body, size_t body_len, floe_err_t *err)
{
    size_t total = FLOE_BATCH_HDR_SIZE + body_len;
    if (floe_buf_reserve(&r->out, total) != 0) return floe_err_oom(err);
    uint8_t *p = r->out.data + r->out.len;
    floe_wr_be64(p, (uint64_t)h->base_offset);
    floe_wr_be32(p + 8, (uint32_t)(total - FLOE_BATCH_LOG_OVERHEAD));
    floe_wr_be32(p + 12, (uint32_t)h->partition_leader_epoch);
    p[16] = FLOE_BATCH_MAGIC;
    p[21] = (uint8_t)((uint16_t)attr >> 8);
    p[22] = (uint8_t)attr;
    floe_wr_be32(p + 23, (uint32_t)h->last_offset_delta);
    floe_wr_be64(p + 27, (uint64_t)base_ts);
    floe_wr_be64(p + 35, (uint64_t)max_ts);
    floe_wr_be64(p + 43, (uint64_t)h->producer_id);
    p[51] = (uint8_t)((uint16_t)h->producer_epoch >> 8);
    p[52] = (uint8_t)h->producer_epoch;
    floe_wr_be32(p + 53, (uint32_t)h->base_sequence);
    floe_wr_be32(p + 57, (uint32_t)count);
    if (body_len) memcpy(p + FLOE_BATCH_HDR_SIZE, body, body_len);
    floe_batch_update_crc(p, total);
    r->out.len += total;
    return 0;
}

/* Does a record of a segment being cleaned stay?  Past what the map
 * covers (it filled up): yes.  Without a key: no (a topic that became
 * compacted).  Else when it is its key's latest, and for a tombstone,
 * while its batch's delete horizon (or the one it is about to get) has
 * not passed. */
static bool keep_record(const run_t *r, const floe_record_t *rec, bool has_horizon, int64_t horizon)
{
    if (rec->offset > r->keep_above) return true;
    if (rec->key_null) return false;
    int64_t latest = omap_get(&r->map, rec->key);
    if (latest >= 0 && rec->offset < latest) return false;
    return !(rec->value_null && has_horizon && r->now >= horizon);
}

/* Filter one batch of a segment being cleaned into r->out. */
static int clean_batch(run_t *r, const floe_batch_hdr_t *h, floe_err_t *err)
{
    floe_log_clean_stats_t *st = r->st;
    st->bytes_before += r->blen;
    if (floe_batch_is_control(h) || h->record_count == 0) {
        st->bytes_after += r->blen;
        return floe_buf_append(&r->out, r->bp, r->blen) ? floe_err_oom(err) : 0;
    }
    floe_slice_t recs;
    if (floe_batch_records(r->bp, r->blen, h, &r->scratch, 0, &recs, err) != 0) return -1;
    bool has_horizon = (h->attributes & FLOE_BATCH_ATTR_DELETE_HORIZON) != 0;
    int64_t horizon = has_horizon ? h->base_timestamp : r->now + r->cfg.delete_retention_ms;
    if (!has_horizon && horizon < r->now) horizon = INT64_MAX; /* overflow */
    floe_record_iter_t it;
    floe_record_iter_init(&it, h, recs);
    floe_record_t rec;
    int k;
    int32_t kept = 0, tombs = 0;
    int64_t max_ts = -1;
    /* pass 1: which records stay */
    while ((k = floe_record_iter_next(&it, &rec, err)) == 1) {
        st->records_before++;
        if (!keep_record(r, &rec, has_horizon, horizon)) {
            st->records_removed++;
            if (rec.value_null) st->tombstones_removed++;
            continue;
        }
        kept++;
        /* a tombstone past the map is not cleaned yet: no horizon */
        if (rec.value_null && rec.offset <= r->keep_above) tombs++;
        if (rec.timestamp > max_ts) max_ts = rec.timestamp;
    }
    if (k < 0) return -1;
    if (tombs && (r->horizon < 0 || horizon < r->horizon)) r->horizon = horizon;
    bool set_horizon = tombs && !has_horizon;
    if (kept == h->record_count && !set_horizon) { /* unchanged */
        st->bytes_after += r->blen;
        return floe_buf_append(&r->out, r->bp, r->blen) ? floe_err_oom(err) : 0;
    }
    r->st->changed = true;
    size_t before = r->out.len;
    int16_t attr = h->attributes;
    if (kept == 0) {
        if (!last_of_producer(r, h)) return 0;
        /* an empty header keeps the producer's last sequence (RETAIN_EMPTY) */
        attr &= (int16_t) ~(FLOE_BATCH_ATTR_COMPRESSION_MASK | FLOE_BATCH_ATTR_DELETE_HORIZON);
        if (emit(r, h, attr, h->max_timestamp, h->max_timestamp, 0, NULL, 0, err) != 0) return -1;
        st->bytes_after += r->out.len - before;
        return 0;
    }
    /* pass 2: the kept records, timestamps against the new base */
    int64_t base_ts = set_horizon ? horizon : h->base_timestamp;
    if (set_horizon) attr |= FLOE_BATCH_ATTR_DELETE_HORIZON;
    floe_buf_reset(&r->recs);
    floe_record_iter_init(&it, h, recs);
    while ((k = floe_record_iter_next(&it, &rec, err)) == 1) {
        if (!keep_record(r, &rec, has_horizon, horizon)) continue;
        int64_t delta = floe_batch_is_log_append_time(h)
                            ? rec.timestamp_delta
                            : (int64_t)((uint64_t)rec.timestamp - (uint64_t)base_ts);
        if (put_record(&r->recs, &rec, delta) != 0) return floe_err_oom(err);
    }
    if (k < 0) return -1;
    const uint8_t *body = r->recs.data;
    size_t body_len = r->recs.len;
    if (floe_batch_compression(h) != FLOE_COMPRESSION_NONE) {
        floe_buf_reset(&r->z);
        if (floe_kcodec_compress(floe_batch_compression(h), 0, r->recs.data, r->recs.len, &r->z,
                                 err) != 0)
            return -1;
        body = r->z.data;
        body_len = r->z.len;
    }
    if (floe_batch_is_log_append_time(h)) max_ts = h->max_timestamp;
    if (emit(r, h, attr, base_ts, max_ts, kept, body, body_len, err) != 0) return -1;
    st->bytes_after += r->out.len - before;
    return 0;
}

/* Index the batches in r->out (the group's indexes, in memory), write
 * them to fd and empty r->out. */
static int drain(run_t *r, int fd, const char *path, floe_err_t *err)
{
    for (size_t off = 0; off < r->out.len;) {
        floe_batch_hdr_t h;
        floe_batch_decode_hdr(r->out.data + off, r->out.len - off, &h, NULL);
        if (floe_segment_index_batch(r->sh, &h, r->written + off, r->cfg.index_interval_bytes,
                                     err) != 0)
            return -1;
        off += floe_batch_size(&h);
    }
    if (r->out.len && write_all(fd, r->out.data, r->out.len) != 0)
        return floe_err_errno(err, errno, path);
    r->written += r->out.len;
    floe_buf_reset(&r->out);
    return 0;
}

/* An in-memory segment that only gathers index entries. */
static floe_segment_t *shadow_new(int64_t base)
{
    floe_segment_t *sh = calloc(1, sizeof *sh);
    if (!sh) return NULL;
    sh->base = sh->next = base;
    sh->max_ts = -1;
    sh->max_ts_off = base;
    sh->roll_base_ms = -1;
    return sh;
}

static void shadow_free(floe_segment_t *sh)
{
    if (!sh) return;
    free(sh->idx);
    free(sh->tidx);
    free(sh);
}

/* The new segment s takes the shadow's indexes (sh freed). */
static void shadow_adopt(floe_segment_t *s, floe_segment_t *sh)
{
    free(s->idx);
    free(s->tidx);
    s->idx = sh->idx;
    s->nidx = sh->nidx;
    s->capidx = sh->capidx;
    s->tidx = sh->tidx;
    s->ntidx = sh->ntidx;
    s->captidx = sh->captidx;
    s->max_ts = sh->max_ts;
    s->max_ts_off = sh->max_ts_off;
    s->since_index = sh->since_index;
    sh->idx = NULL;
    sh->tidx = NULL;
    shadow_free(sh);
}

static void step(run_t *r, int n)
{
    if (r->o && r->o->step) r->o->step(r->o->step_arg, n);
}

/* Swap the group segs[0..n) (pinned) for the cleaned file at `cleaned`.
 * Takes the lock.  Returns 0, 1 when the group changed meanwhile
 * (retention deleted part of it: the cleaned file is dropped), -1. */
static int swap_group(run_t *r, floe_segment_t **g, size_t n, const char *cleaned, floe_err_t *err)
{
    floe_log_t *l = r->l;
    int64_t base = g[0]->base, end = g[n - 1]->next;
    char swap[PATH_MAX], target[PATH_MAX];
    if (swap_path(swap, sizeof swap, l->dir, base, end, err) != 0 ||
        floe_segment_path(target, sizeof target, l->dir, base, "log", err) != 0)
        return -1;
    pthread_mutex_lock(&l->mu);
    size_t at = 0;
    while (at < l->nsegs && l->segs[at] != g[0]) at++;
    bool gone = at + n > l->nsegs;
    for (size_t i = 0; !gone && i < n; i++) gone = g[i]->deleted || l->segs[at + i] != g[i];
    if (gone) {
        pthread_mutex_unlock(&l->mu);
        unlink(cleaned);
        return 1;
    }
    int rc = floe_fs_rename(cleaned, swap, false, err);
    if (rc == 0) step(r, FLOE_CLEAN_STEP_SWAP_NAMED);
    /* the old files go; readers hold their descriptors until done */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        g[i]->held = floe_fdc_get(&g[i]->log, NULL) >= 0;
        floe_segment_unlink(l->dir, g[i]);
    }
    if (rc == 0) rc = floe_fs_fsync_dir(l->dir, err);
    if (rc == 0) step(r, FLOE_CLEAN_STEP_OLD_DELETED);
    if (rc == 0) rc = floe_fs_rename(swap, target, false, err);
    if (rc == 0) step(r, FLOE_CLEAN_STEP_RENAMED);
    floe_segment_t *s = NULL;
    if (rc == 0) rc = floe_segment_open(l->dir, base, false, &s, err);
    if (rc == 0) {
        /* the index files: from the entries made while writing; not
         * fsynced here (the next flush does; a lost one is rebuilt) */
        shadow_adopt(s, r->sh);
        r->sh = NULL;
        rc = floe_segment_truncate_indexes(s, err);
        if (rc == 0) rc = floe_segment_seal_timeindex(s, err);
        if (rc == 0) rc = floe_segment_write_indexes(s, err);
        if (rc == 0) {
            floe_segment_map_indexes(s);
            s->next = end;
            l->dir_dirty = true;
        }
    }
    if (rc != 0) {
        /* the files are as a crash would leave them: the next open
         * finishes the swap; meanwhile the old segments serve reads */
        if (s) floe_segment_free(s);
        pthread_mutex_unlock(&l->mu);
        return -1;
    }
    l->segs[at] = s;
    memmove(&l->segs[at + 1], &l->segs[at + n], (l->nsegs - at - n) * sizeof *l->segs);
    l->nsegs -= n - 1;
    for (size_t i = 0; i < n; i++) g[i]->deleted = true; /* freed when unpinned */
    pthread_mutex_unlock(&l->mu);
    return 0;
}

/* Clean one group segs g[0..n): write the cleaned file, then swap. */
static int clean_group(run_t *r, floe_segment_t **g, const uint64_t *sizes, size_t n,
                       floe_err_t *err)
{
    char cleaned[PATH_MAX];
    if (floe_path_fmt(cleaned, sizeof cleaned, err, "%s/%020" PRId64 ".log.cleaned", r->l->dir,
                      g[0]->base) != 0)
        return -1;
    shadow_free(r->sh);
    r->sh = shadow_new(g[0]->base);
    r->written = 0;
    if (!r->sh) return floe_err_oom(err);
    int fd = open(cleaned, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return floe_err_errno(err, errno, cleaned);
    bool was = r->st->changed;
    r->st->changed = n > 1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = each_batch(r, g[i], sizes[i], clean_batch, err);
        if (rc == 0) rc = drain(r, fd, cleaned, err);
        if (rc == 0 && i == 0) step(r, FLOE_CLEAN_STEP_WRITING);
    }
    bool changed = r->st->changed;
    r->st->changed = was || changed;
    if (rc == 0 && !changed) { /* one segment, nothing to drop */
        close(fd);
        unlink(cleaned);
        return 0;
    }
    if (rc == 0 && fdatasync(fd) != 0) rc = floe_err_errno(err, errno, cleaned);
    if (close(fd) != 0 && rc == 0) rc = floe_err_errno(err, errno, cleaned);
    if (rc != 0) {
        unlink(cleaned);
        return -1;
    }
    step(r, FLOE_CLEAN_STEP_CLEANED);
    rc = swap_group(r, g, n, cleaned, err);
    if (rc == 0) r->st->segments_cleaned += n;
    return rc;
}

/* The last batch of every producer the log knows (for RETAIN_EMPTY).
 * Caller holds the lock. */
static int collect_producers(run_t *r, floe_err_t *err)
{
    const floe_pstate_t *ps = &r->l->ps;
    if (!ps->count) return 0;
    r->prods = malloc(ps->count * sizeof *r->prods);
    if (!r->prods) return floe_err_oom(err);
    for (size_t b = 0; b < ps->nbuckets; b++)
        for (const floe_pentry_t *e = ps->buckets[b]; e; e = e->next)
            if (e->n && r->nprods < ps->count)
                r->prods[r->nprods++] =
                    (prod_t){e->pid, e->b[(e->head + e->n - 1) % FLOE_PSTATE_BATCHES].last_off};
    qsort(r->prods, r->nprods, sizeof *r->prods, cmp_pid);
    return 0;
}

/* Sealed segments compaction may touch: not the active one, none with a
 * record younger than min.compaction.lag.ms, nor any after it.  Caller
 * holds the lock. */
static size_t cleanable_count(floe_log_t *l, int64_t now, int64_t floor)
{
    size_t n = 0;
    int64_t lag = l->cfg.min_compaction_lag_ms;
    while (n + 1 < l->nsegs) {
        const floe_segment_t *s = l->segs[n];
        if (lag > 0 && s->max_ts >= 0 && s->max_ts > now - lag) break;
        if (floor > 0 && s->next > floor) break;
        n++;
    }
    return n;
}

double floe_log_dirty_ratio(floe_log_t *l, int64_t now_ms, uint64_t *dirty_bytes)
{
    pthread_mutex_lock(&l->mu);
    size_t n = cleanable_count(l, now_ms, 0);
    uint64_t clean = 0, dirty = 0;
    for (size_t i = 0; i < n; i++) {
        if (l->segs[i]->next > l->clean_upto) dirty += l->segs[i]->size;
        else
            clean += l->segs[i]->size;
    }
    pthread_mutex_unlock(&l->mu);
    if (dirty_bytes) *dirty_bytes = dirty;
    return clean + dirty ? (double)dirty / (double)(clean + dirty) : 0.0;
}

int64_t floe_log_clean_checkpoint(floe_log_t *l)
{
    pthread_mutex_lock(&l->mu);
    int64_t v = l->clean_upto;
    pthread_mutex_unlock(&l->mu);
    return v;
}

int floe_log_clean(floe_log_t *l, int64_t now_ms, const floe_log_clean_opts_t *o,
                   floe_log_clean_stats_t *st, floe_err_t *err)
{
    floe_log_clean_stats_t dummy;
    if (!st) st = &dummy;
    memset(st, 0, sizeof *st);
    run_t r = {.l = l, .o = o, .now = now_ms, .keep_above = INT64_MAX, .horizon = -1, .st = st};
    r.map.max = o && o->max_keys ? o->max_keys : DEFAULT_MAX_KEYS;
    r.map.latest = -1;
    uint64_t max_dirty = o && o->max_dirty_bytes ? o->max_dirty_bytes : DEFAULT_MAX_DIRTY;

    pthread_mutex_lock(&l->mu);
    r.cfg = l->cfg;
    if (!(r.cfg.cleanup_policy & FLOE_LOG_CLEANUP_COMPACT)) {
        pthread_mutex_unlock(&l->mu);
        return 0;
    }
    size_t n = cleanable_count(l, now_ms, o ? o->floor : 0);
    uint64_t clean = 0, dirty = 0;
    size_t d = n; /* first dirty segment */
    for (size_t i = 0; i < n; i++) {
        if (l->segs[i]->next > l->clean_upto) {
            if (d == n) d = i;
            dirty += l->segs[i]->size;
        } else {
            clean += l->segs[i]->size;
        }
    }
    bool horizon_due = l->clean_horizon >= 0 && now_ms >= l->clean_horizon;
    double ratio = clean + dirty ? (double)dirty / (double)(clean + dirty) : 0.0;
    bool due = (dirty > 0 && ratio >= r.cfg.min_cleanable_dirty_ratio) || horizon_due ||
               (o && o->force && n > 0);
    if (!due || n == 0) {
        pthread_mutex_unlock(&l->mu);
        return 0;
    }
    floe_segment_t **segs = malloc(n * sizeof *segs);
    uint64_t *sizes = malloc(n * sizeof *sizes);
    if (!segs || !sizes || collect_producers(&r, err) != 0) {
        pthread_mutex_unlock(&l->mu);
        free(segs);
        free(sizes);
        free(r.prods);
        return floe_err_oom(err);
    }
    for (size_t i = 0; i < n; i++) {
        segs[i] = l->segs[i];
        sizes[i] = segs[i]->size;
        segs[i]->refs++;
    }
    int64_t old_upto = l->clean_upto;
    r.map_from = old_upto;
    pthread_mutex_unlock(&l->mu);

    /* map the dirty segments while the map and the budget last */
    size_t mapped = d;
    uint64_t mapped_bytes = 0;
    bool full_in_d = false; /* the map filled inside the first dirty segment */
    int rc = 0;
    for (size_t i = d; i < n && rc == 0; i++) {
        if (i > d && mapped_bytes + sizes[i] > max_dirty) break;
        rc = each_batch(&r, segs[i], sizes[i], map_batch, err);
        if (rc < 0) break;
        mapped_bytes += sizes[i];
        /* a map that filled inside segment i > d: i is not cleaned now;
         * inside d: d is, up to the last record mapped (keep_above) */
        if (rc == 0 || i == d) mapped = i + 1;
        if (rc == 1) {
            full_in_d = i == d;
            if (!full_in_d) r.keep_above = INT64_MAX;
            rc = 0;
            break;
        }
    }
    int64_t new_upto = old_upto;
    int64_t run_horizon = -1;
    /* clean [0, mapped) in groups that fit one segment */
    size_t i = 0;
    while (rc == 0 && i < mapped) {
        size_t j = i + 1;
        uint64_t total = sizes[i];
        while (j < mapped && total + sizes[j] <= r.cfg.segment_bytes &&
               (uint64_t)(segs[j]->next - segs[i]->base) <= UINT32_MAX) {
            total += sizes[j];
            j++;
        }
        st->segments_before += j - i;
        rc = clean_group(&r, &segs[i], &sizes[i], j - i, err);
        if (rc == 1) { /* retention took it meanwhile */
            rc = 0;
        }
        if (rc == 0) new_upto = segs[j - 1]->next;
        i = j;
    }
    /* a partly mapped segment is clean only up to the last record mapped:
     * the next run maps from there */
    if (rc == 0 && full_in_d && new_upto > r.keep_above + 1) new_upto = r.keep_above + 1;
    run_horizon = r.horizon;
    st->clean_upto = new_upto;

    pthread_mutex_lock(&l->mu);
    for (size_t k = 0; k < n; k++) floe_log_unpin(l, segs[k]);
    if (rc == 0) {
        l->clean_upto = new_upto;
        l->clean_horizon = run_horizon;
        st->segments_after = l->nsegs;
    }
    pthread_mutex_unlock(&l->mu);
    if (rc == 0) {
        floe_err_t e;
        step(&r, FLOE_CLEAN_STEP_SWAPPED);
        if (save_checkpoint(l->dir, new_upto, run_horizon, &e) != 0)
            FLOE_WARN("log: %s: cannot save the cleaner checkpoint: %s", l->dir, e.msg);
    }
    free(segs);
    free(sizes);
    free(r.prods);
    free(r.map.s);
    shadow_free(r.sh);
    floe_buf_free(&r.win);
    floe_buf_free(&r.scratch);
    floe_buf_free(&r.recs);
    floe_buf_free(&r.z);
    floe_buf_free(&r.out);
    return rc < 0 ? -1 : 1;
}
