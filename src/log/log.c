/* One partition's log: open and recover, append with idempotence checks,
 * roll, flush, retention and DeleteRecords.  Reads and offset-for-time are
 * in log_read.c.  Locking: l->mu guards every field; file I/O of readers
 * and fsyncs happen outside it, with the segment pinned by refs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/log_int.h"
#include "util/clock.h"
#include "util/diag.h"
#include "util/fs.h"
#include "util/mem.h"
#include "util/parse.h"

#define LOG_START_FILE "log-start-offset"
#define PSTATE_FILE "producer-state"

void floe_log_config_default(floe_log_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->segment_bytes = 1ull << 30;
    cfg->segment_ms = 7ll * 24 * 3600 * 1000;
    cfg->retention_ms = 7ll * 24 * 3600 * 1000;
    cfg->retention_bytes = -1;
    cfg->index_interval_bytes = 4096;
    cfg->flush_messages = -1;
    cfg->flush_ms = -1;
    cfg->max_message_bytes = 1048588;
    cfg->leader_epoch = 0;
    cfg->producer_id_expiration_ms = 24ll * 3600 * 1000;
    cfg->cleanup_policy = FLOE_LOG_CLEANUP_DELETE;
    cfg->delete_retention_ms = 24ll * 3600 * 1000;
    cfg->min_cleanable_dirty_ratio = 0.5;
    cfg->min_compaction_lag_ms = 0;
}

/* cleanup.policy: a comma-separated list of "delete" and "compact"
 * (spaces around items allowed, as Kafka's list type trims them). */
static int parse_cleanup_policy(const char *value, unsigned *out, floe_err_t *err)
{
    unsigned pol = 0;
    const char *p = value;
    for (;;) {
        while (*p == ' ') p++;
        size_t n = strcspn(p, ",");
        size_t m = n;
        while (m && p[m - 1] == ' ') m--;
        if (m == 6 && !strncmp(p, "delete", 6)) pol |= FLOE_LOG_CLEANUP_DELETE;
        else if (m == 7 && !strncmp(p, "compact", 7))
            pol |= FLOE_LOG_CLEANUP_COMPACT;
        else
            return floe_err_set(err, FLOE_EINVAL,
                                "cleanup.policy '%s' is not delete, compact or compact,delete",
                                value);
        if (!p[n]) break;
        p += n + 1;
    }
    *out = pol;
    return 0;
}

/* min.cleanable.dirty.ratio: a decimal number in [0, 1]. */
static int parse_ratio(const char *value, double *out, floe_err_t *err)
{
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (!*value || *end || errno || !(v >= 0.0 && v <= 1.0))
        return floe_err_set(err, FLOE_EINVAL, "'%s' is not a number between 0 and 1", value);
    *out = v;
    return 0;
}

int floe_log_config_set(floe_log_config_t *cfg, const char *key, const char *value, floe_err_t *err)
{
    int64_t v;
    if (!strcmp(key, "segment.bytes")) {
        if (floe_parse_int64(value, FLOE_BATCH_HDR_SIZE, INT32_MAX, &v, err) != 0) goto bad;
        cfg->segment_bytes = (uint64_t)v;
    } else if (!strcmp(key, "segment.ms")) {
        if (floe_parse_int64(value, 1, INT64_MAX, &v, err) != 0) goto bad;
        cfg->segment_ms = v;
    } else if (!strcmp(key, "retention.ms")) {
        if (floe_parse_int64(value, -1, INT64_MAX, &v, err) != 0) goto bad;
        cfg->retention_ms = v;
    } else if (!strcmp(key, "retention.bytes")) {
        if (floe_parse_int64(value, -1, INT64_MAX, &v, err) != 0) goto bad;
        cfg->retention_bytes = v;
    } else if (!strcmp(key, "index.interval.bytes")) {
        if (floe_parse_int64(value, 0, INT32_MAX, &v, err) != 0) goto bad;
        cfg->index_interval_bytes = (uint32_t)v;
    } else if (!strcmp(key, "flush.messages")) {
        if (floe_parse_int64(value, 1, INT64_MAX, &v, err) != 0) goto bad;
        cfg->flush_messages = v == INT64_MAX ? -1 : v;
    } else if (!strcmp(key, "flush.ms")) {
        if (floe_parse_int64(value, 0, INT64_MAX, &v, err) != 0) goto bad;
        cfg->flush_ms = v == INT64_MAX ? -1 : v;
    } else if (!strcmp(key, "producer.id.expiration.ms")) {
        if (floe_parse_int64(value, 1, INT64_MAX, &v, err) != 0) goto bad;
        cfg->producer_id_expiration_ms = v;
    } else if (!strcmp(key, "max.message.bytes")) {
        if (floe_parse_int64(value, 0, INT32_MAX, &v, err) != 0) goto bad;
        cfg->max_message_bytes = (uint32_t)v;
    } else if (!strcmp(key, "cleanup.policy")) {
        return parse_cleanup_policy(value, &cfg->cleanup_policy, err);
    } else if (!strcmp(key, "delete.retention.ms")) {
        if (floe_parse_int64(value, 0, INT64_MAX, &v, err) != 0) goto bad;
        cfg->delete_retention_ms = v;
    } else if (!strcmp(key, "min.cleanable.dirty.ratio")) {
        if (parse_ratio(value, &cfg->min_cleanable_dirty_ratio, err) != 0) goto bad;
    } else if (!strcmp(key, "min.compaction.lag.ms")) {
        if (floe_parse_int64(value, 0, INT64_MAX, &v, err) != 0) goto bad;
        cfg->min_compaction_lag_ms = v;
    } else {
        return 1;
    }
    return 0;
bad:
    floe_err_wrap(err, "%s", key);
    return -1;
}

/* ---- small file helpers ---- */

/* Persist the log start offset durably (a DeleteRecords must survive a
 * crash): floe_fs_write_atomic. */
static int write_log_start(floe_log_t *l, floe_err_t *err)
{
    char path[PATH_MAX], text[32];
    if (floe_path_join(path, sizeof path, l->dir, LOG_START_FILE, err) != 0) return -1;
    int n = snprintf(text, sizeof text, "%" PRId64 "\n", l->log_start);
    return floe_fs_write_atomic(path, text, (size_t)n, err);
}

static int64_t read_log_start(const char *dir)
{
    char path[PATH_MAX], text[32] = {0};
    if (floe_path_join(path, sizeof path, dir, LOG_START_FILE, NULL) != 0) return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t r = read(fd, text, sizeof text - 1);
    close(fd);
    if (r <= 0) return 0;
    text[r] = 0;
    char *nl = strchr(text, '\n');
    if (nl) *nl = 0;
    int64_t v;
    if (floe_parse_int64(text, 0, INT64_MAX, &v, NULL) != 0) {
        FLOE_WARN("log: %s: unreadable log start offset, using 0", path);
        return 0;
    }
    return v;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* "<20 digits>.<ext>" -> base offset, or -1. */
static int64_t parse_seg_name(const char *name, const char *ext)
{
    size_t n = strlen(name), el = strlen(ext);
    if (n != 21 + el || name[20] != '.' || strcmp(name + 21, ext) != 0) return -1;
    int64_t v = 0;
    for (int i = 0; i < 20; i++) {
        if (name[i] < '0' || name[i] > '9') return -1;
        if (v > (INT64_MAX - 9) / 10) return -1;
        v = v * 10 + (name[i] - '0');
    }
    return v;
}

/* Sorted base offsets of the .log files in dir; removes leftovers (tmp
 * files, indexes without a .log). */
static int list_segments(const char *dir, int64_t **out, size_t *nout, floe_err_t *err)
{
    DIR *d = opendir(dir);
    if (!d) return floe_err_errno(err, errno, dir);
    int64_t *v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        int64_t b = parse_seg_name(de->d_name, "log");
        if (b < 0) continue;
        if (floe_grow(&v, &cap, n + 1, sizeof *v) != 0) {
            free(v);
            closedir(d);
            return floe_err_oom(err);
        }
        v[n++] = b;
    }
    if (n) qsort(v, n, sizeof *v, cmp_i64);
    rewinddir(d);
    while ((de = readdir(d)) != NULL) {
        int64_t b = parse_seg_name(de->d_name, "index");
        if (b < 0) b = parse_seg_name(de->d_name, "timeindex");
        size_t len = strlen(de->d_name);
        bool orphan = b >= 0 && (n == 0 || !bsearch(&b, v, n, sizeof *v, cmp_i64));
        bool tmp = len > 4 && !strcmp(de->d_name + len - 4, ".tmp");
        char path[PATH_MAX];
        if ((orphan || tmp) && floe_path_join(path, sizeof path, dir, de->d_name, NULL) == 0)
            unlink(path);
    }
    closedir(d);
    *out = v;
    *nout = n;
    return 0;
}

/* ---- segment list ---- */

static floe_segment_t *active_seg(floe_log_t *l)
{
    return l->segs[l->nsegs - 1];
}
static int64_t end_off(floe_log_t *l)
{
    return active_seg(l)->next;
}

static int push_seg(floe_log_t *l, floe_segment_t *s)
{
    if (floe_grow(&l->segs, &l->capsegs, l->nsegs + 1, sizeof *l->segs) != 0) return -1;
    l->segs[l->nsegs++] = s;
    return 0;
}

void floe_log_unpin(floe_log_t *l, floe_segment_t *s)
{
    (void)l;
    if (--s->refs == 0 && s->deleted) {
        if (s->held) floe_fdc_put(&s->log);
        floe_segment_free(s);
    }
}

/* Remove segment i (not the active one): unlink now, free when unpinned.
 * A reader or flusher still using it keeps reading the unlinked file: its
 * descriptor is held open (out of the cache's reach) until then. */
static void remove_seg(floe_log_t *l, size_t i)
{
    floe_segment_t *s = l->segs[i];
    if (s->refs > 0) s->held = floe_fdc_get(&s->log, NULL) >= 0;
    floe_segment_unlink(l->dir, s);
    memmove(&l->segs[i], &l->segs[i + 1], (l->nsegs - i - 1) * sizeof *l->segs);
    l->nsegs--;
    l->dir_dirty = true;
    if (s->refs == 0) floe_segment_free(s);
    else
        s->deleted = true;
}

static void save_pstate(floe_log_t *l, bool durable)
{
    char path[PATH_MAX];
    floe_err_t e;
    if (floe_path_join(path, sizeof path, l->dir, PSTATE_FILE, &e) != 0 ||
        floe_pstate_save(&l->ps, path, end_off(l), durable, &e) != 0)
        FLOE_WARN("log: %s: cannot save producer state: %s", l->dir, e.msg);
}

/* Start a new active segment at the end offset. */
static int roll(floe_log_t *l, floe_err_t *err)
{
    floe_segment_t *old = active_seg(l);
    if (floe_segment_seal_timeindex(old, err) != 0 || floe_segment_write_indexes(old, err) != 0)
        return -1;
    floe_segment_map_indexes(old);
    floe_segment_t *s;
    if (floe_segment_open(l->dir, old->next, true, &s, err) != 0) return -1;
    if (s->size != 0) { /* a leftover of a crash: the log never had these offsets */
        int fd = floe_fdc_get(&s->log, err);
        int rc = fd < 0 ? -1 : ftruncate(fd, 0) != 0 ? floe_err_errno(err, errno, s->log.path) : 0;
        if (fd >= 0) floe_fdc_put(&s->log);
        if (rc) {
            floe_segment_free(s);
            return -1;
        }
    }
    s->size = 0;
    /* (a segment file that was there may come with index files) */
    if (floe_segment_truncate_indexes(s, err) != 0) {
        floe_segment_free(s);
        return -1;
    }
    if (push_seg(l, s) != 0) {
        floe_segment_unlink(l->dir, s);
        floe_segment_free(s);
        return floe_err_set(err, FLOE_ENOMEM, "out of memory rolling a segment");
    }
    l->dir_dirty = true;
    save_pstate(l, false);
    return 0;
}

/* ---- open / close ---- */

static void delete_below_start(floe_log_t *l);

static int pstate_cb(void *arg, const floe_batch_hdr_t *h)
{
    struct {
        floe_pstate_t *ps;
        int64_t from;
    } *a = arg;
    if (h->base_offset < a->from) return 0;
    return floe_pstate_update(a->ps, h, h->max_timestamp);
}

/* Rebuild producer state from batch headers at offsets >= from. */
static int rebuild_pstate(floe_log_t *l, int64_t from, floe_err_t *err)
{
    struct {
        floe_pstate_t *ps;
        int64_t from;
    } a = {&l->ps, from};
    size_t recovered = 0;
    for (size_t i = 0; i < l->nsegs; i++) {
        floe_segment_t *s = l->segs[i];
        if (s->next <= a.from || s->size == 0) continue;
        uint64_t pos = a.from > s->base ? floe_segment_lookup_pos(s, a.from) : 0;
        floe_err_t werr;
        if (floe_segment_walk(s, pos, s->size, pstate_cb, &a, &werr) == 0) continue;
        if (werr.code != FLOE_ECORRUPT) {
            if (err) *err = werr;
            return -1;
        }
        /* a sealed segment with bad bytes inside (its index looked fine):
         * recover it like the active one, then rebuild from scratch */
        FLOE_WARN("log: %s: %s; recovering that segment", l->dir, werr.msg);
        uint64_t cut;
        if (recovered++ > l->nsegs ||
            floe_segment_recover(s, l->cfg.index_interval_bytes, true, NULL, NULL, &cut, err) != 0)
            return -1;
        if (s != active_seg(l)) {
            if (floe_segment_seal_timeindex(s, err) != 0 || floe_segment_write_indexes(s, err) != 0)
                return -1;
            floe_segment_map_indexes(s);
        }
        /* start over from the first segment: no batch applied twice */
        floe_pstate_clear(&l->ps);
        a.from = l->segs[0]->base;
        i = (size_t)-1;
    }
    return 0;
}

int floe_log_open(const char *dir, const floe_log_config_t *cfg, floe_log_t **out, floe_err_t *err)
{
    floe_log_t *l = calloc(1, sizeof *l);
    if (!l) return floe_err_set(err, FLOE_ENOMEM, "out of memory opening a log");
    pthread_mutex_init(&l->mu, NULL);
    pthread_mutex_init(&l->flush_mu, NULL);
    floe_pstate_init(&l->ps);
    l->now_ms = floe_wall_ms;
    if (cfg) l->cfg = *cfg;
    else
        floe_log_config_default(&l->cfg);
    l->dir = strdup(dir);
    int64_t *bases = NULL;
    size_t nb = 0;
    if (!l->dir) {
        floe_err_set(err, FLOE_ENOMEM, "out of memory opening a log");
        goto fail;
    }
    if (floe_fs_mkdirs(dir, err) != 0) goto fail;
    if (floe_cleaner_recover(dir, err) != 0) goto fail;
    if (list_segments(dir, &bases, &nb, err) != 0) goto fail;
    l->log_start = read_log_start(dir);
    if (nb == 0) {
        floe_segment_t *s;
        if (floe_segment_open(dir, l->log_start, true, &s, err) != 0) goto fail;
        if (push_seg(l, s) != 0) {
            floe_segment_free(s);
            floe_err_set(err, FLOE_ENOMEM, "out of memory opening a log");
            goto fail;
        }
        l->dir_dirty = true;
    }
    for (size_t i = 0; i < nb; i++) {
        floe_segment_t *s;
        if (floe_segment_open(dir, bases[i], false, &s, err) != 0) goto fail;
        if (push_seg(l, s) != 0) {
            floe_segment_free(s);
            floe_err_set(err, FLOE_ENOMEM, "out of memory opening a log");
            goto fail;
        }
        bool last = i + 1 == nb;
        if (!last && floe_segment_load_indexes(s, bases[i + 1]) == 0) {
            floe_segment_map_indexes(s);
            continue;
        }
        if (!last) {
            FLOE_INFO("log: %s: rebuilding indexes of segment %020" PRId64, dir, s->base);
            l->rebuilt++;
        }
        uint64_t cut = 0;
        if (floe_segment_recover(s, l->cfg.index_interval_bytes, true, NULL, NULL, &cut, err) !=
            0) {
            floe_err_wrap(err, "recover %s segment %020" PRId64, dir, s->base);
            goto fail;
        }
        if (!last && s->next < bases[i + 1] && s->size == 0) s->next = bases[i + 1];
        if (!last) {
            if (floe_segment_seal_timeindex(s, err) != 0 || floe_segment_write_indexes(s, err) != 0)
                goto fail;
            floe_segment_map_indexes(s);
        }
    }
    free(bases);
    bases = NULL;
    floe_segment_t *act = active_seg(l);
    int64_t now = l->now_ms();
    /* segment.ms counts from when the active segment got its first batch:
     * its file's birth time where the file system keeps one (record
     * timestamps come from clients and may be anything) */
    if (act->size > 0) {
        struct statx stx;
        char p[PATH_MAX];
        act->roll_base_ms = now;
        if (floe_segment_path(p, sizeof p, dir, act->base, "log", NULL) == 0 &&
            statx(AT_FDCWD, p, 0, STATX_BTIME, &stx) == 0 && (stx.stx_mask & STATX_BTIME)) {
            int64_t b = (int64_t)stx.stx_btime.tv_sec * 1000 + stx.stx_btime.tv_nsec / 1000000;
            if (b < now) act->roll_base_ms = b;
        }
    }
    if (l->log_start < l->segs[0]->base) l->log_start = l->segs[0]->base;
    if (l->log_start > end_off(l)) l->log_start = end_off(l);
    delete_below_start(l); /* a crash may have come between persist and delete */
    floe_cleaner_load_checkpoint(l);
    /* producer state: snapshot, then the batches after it */
    char path[PATH_MAX];
    int64_t upto = -1;
    floe_err_t e2;
    if (floe_path_join(path, sizeof path, dir, PSTATE_FILE, &e2) != 0 ||
        floe_pstate_load(&l->ps, path, &upto, &e2) != 0 || upto < l->segs[0]->base ||
        upto > end_off(l)) {
        floe_pstate_clear(&l->ps);
        upto = l->segs[0]->base;
    }
    if (rebuild_pstate(l, upto, err) != 0) {
        floe_err_wrap(err, "rebuild producer state of %s", dir);
        goto fail;
    }
    /* Offsets below the end at open survived the restart; they count as
     * durable.  Segments that recovery changed were marked dirty, so the
     * next flush makes those changes durable too (no fsync at open: a
     * broker opens thousands of logs). */
    l->durable = end_off(l);
    l->last_flush_ms = now;
    *out = l;
    return 0;
fail:
    free(bases);
    floe_log_close(l);
    return -1;
}

void floe_log_close(floe_log_t *l)
{
    if (!l) return;
    if (l->nsegs) {
        floe_err_t e;
        if (floe_segment_seal_timeindex(active_seg(l), &e) != 0 ||
            floe_segment_write_indexes(active_seg(l), &e) != 0)
            FLOE_WARN("log: %s: %s", l->dir, e.msg);
        save_pstate(l, false);
    }
    for (size_t i = 0; i < l->nsegs; i++) floe_segment_free(l->segs[i]);
    free(l->segs);
    floe_pstate_free(&l->ps);
    floe_buf_free(&l->scratch);
    pthread_mutex_destroy(&l->mu);
    pthread_mutex_destroy(&l->flush_mu);
    free(l->dir);
    free(l);
}

int floe_log_drop(floe_log_t *l, floe_err_t *err)
{
    char *dir = l->dir; /* outlives the log */
    l->dir = NULL;
    /* no snapshot on the way out */
    for (size_t i = 0; i < l->nsegs; i++) floe_segment_free(l->segs[i]);
    l->nsegs = 0;
    floe_log_close(l);
    int rc = 0;
    DIR *d = opendir(dir);
    if (!d) {
        rc = floe_err_errno(err, errno, dir);
        goto out;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char path[PATH_MAX];
        floe_err_t e;
        if (floe_path_join(path, sizeof path, dir, de->d_name, &e) != 0) {
            if (rc == 0 && err) *err = e;
            rc = -1;
        } else if (unlink(path) != 0 && rc == 0) {
            rc = floe_err_errno(err, errno, path);
        }
    }
    closedir(d);
    if (rc == 0 && rmdir(dir) != 0) rc = floe_err_errno(err, errno, dir);
out:
    free(dir);
    return rc;
}

void floe_log_set_config(floe_log_t *l, const floe_log_config_t *cfg)
{
    pthread_mutex_lock(&l->mu);
    l->cfg = *cfg;
    pthread_mutex_unlock(&l->mu);
}

void floe_log_get_config(floe_log_t *l, floe_log_config_t *out)
{
    pthread_mutex_lock(&l->mu);
    *out = l->cfg;
    pthread_mutex_unlock(&l->mu);
}

void floe_log_set_clock(floe_log_t *l, int64_t (*now_ms)(void))
{
    pthread_mutex_lock(&l->mu);
    l->now_ms = now_ms;
    pthread_mutex_unlock(&l->mu);
}

/* ---- append ---- */

static int fail_append(floe_log_append_result_t *res, int16_t code)
{
    res->error_code = code;
    return -1;
}

static int write_all(int fd, const uint8_t *p, size_t n, uint64_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = pwrite(fd, p + done, n - done, (off_t)(off + done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        done += (size_t)w;
    }
    return 0;
}

static void result_init(floe_log_append_result_t *res)
{
    memset(res, 0, sizeof *res);
    res->base_offset = res->last_offset = -1;
    res->log_append_time_ms = -1;
    res->log_start_offset = -1;
}

int floe_log_append(floe_log_t *l, uint8_t *batches, size_t len, int64_t log_append_time_ms,
                    floe_log_append_result_t *res, floe_err_t *err)
{
    floe_log_checked_t chk;
    floe_log_append_result_t dummy;
    if (!res) res = &dummy;
    if (floe_log_check(l, batches, len, &chk, res, err)) return -1;
    return floe_log_append_checked(l, batches, len, &chk, log_append_time_ms, res, err);
}

int floe_log_check(floe_log_t *l, const uint8_t *batches, size_t len, floe_log_checked_t *chk,
                   floe_log_append_result_t *res, floe_err_t *err)
{
    floe_log_append_result_t dummy;
    floe_err_t local;
    if (!res) res = &dummy;
    if (!err) err = &local;
    result_init(res);
    memset(chk, 0, sizeof *chk);
    if (len == 0) {
        floe_err_set(err, FLOE_ECORRUPT, "produce with no record batch");
        return fail_append(res, FLOE_LOG_KERR_CORRUPT_MESSAGE);
    }
    pthread_mutex_lock(&l->mu);
    uint32_t max_msg = l->cfg.max_message_bytes;
    unsigned flags =
        l->cfg.cleanup_policy & FLOE_LOG_CLEANUP_COMPACT ? FLOE_BATCH_KEYS_REQUIRED : 0;
    pthread_mutex_unlock(&l->mu);

    /* validate everything before taking the lock: CRCs, records */
    floe_batch_iter_t it;
    floe_batch_iter_init(&it, batches, len);
    floe_batch_hdr_t h;
    const uint8_t *b;
    size_t blen, nbatches = 0;
    int64_t nrecords = 0;
    bool idem = false;
    floe_buf_t scratch = FLOE_BUF_INIT;
    int r;
    while ((r = floe_batch_iter_next(&it, &b, &blen, &h, err)) == 1) {
        if (nbatches++ == 0) chk->first = h;
        if (blen > max_msg) {
            floe_buf_free(&scratch);
            floe_err_set(err, FLOE_ERANGE, "record batch of %zu bytes exceeds max.message.bytes %u",
                         blen, max_msg);
            return fail_append(res, FLOE_LOG_KERR_MESSAGE_TOO_LARGE);
        }
        if (floe_batch_is_control(&h)) {
            floe_buf_free(&scratch);
            floe_err_set(err, FLOE_EINVAL, "clients may not write control batches");
            return fail_append(res, FLOE_LOG_KERR_INVALID_RECORD);
        }
        if (floe_batch_check_records(b, blen, &h, &scratch, 0, flags, err) != 0) {
            floe_buf_free(&scratch);
            bool keyless = err->code == FLOE_EINVAL;
            floe_err_wrap(err, "batch %zu", nbatches - 1);
            return fail_append(res, keyless ? FLOE_LOG_KERR_INVALID_RECORD
                                            : FLOE_LOG_KERR_CORRUPT_MESSAGE);
        }
        if (h.producer_id >= 0) idem = true;
        nrecords += h.record_count;
    }
    floe_buf_free(&scratch);
    if (r < 0) return fail_append(res, FLOE_LOG_KERR_CORRUPT_MESSAGE);
    if (idem && nbatches > 1) {
        floe_err_set(err, FLOE_EINVAL, "idempotent produce must carry exactly one batch, got %zu",
                     nbatches);
        return fail_append(res, FLOE_LOG_KERR_INVALID_RECORD);
    }
    chk->nbatches = nbatches;
    chk->nrecords = nrecords;
    chk->idempotent = idem;
    return 0;
}

int floe_log_append_checked(floe_log_t *l, uint8_t *batches, size_t len,
                            const floe_log_checked_t *chk, int64_t log_append_time_ms,
                            floe_log_append_result_t *res, floe_err_t *err)
{
    floe_log_append_result_t dummy;
    if (!res) res = &dummy;
    result_init(res);
    bool idem = chk->idempotent;
    floe_batch_hdr_t first = chk->first, h;
    int64_t nrecords = chk->nrecords;
    pthread_mutex_lock(&l->mu);
    res->log_start_offset = l->log_start;
    if (idem) {
        floe_pbatch_t dup;
        int16_t kerr = 0;
        int c = floe_pstate_check(&l->ps, &first, &dup, &kerr, err);
        if (c < 0) {
            pthread_mutex_unlock(&l->mu);
            return fail_append(res, kerr);
        }
        if (c == 1) {
            res->base_offset = dup.first_off;
            res->last_offset = dup.last_off;
            res->duplicate = true;
            pthread_mutex_unlock(&l->mu);
            return 0;
        }
    }
    int64_t now = l->now_ms();
    floe_segment_t *s = active_seg(l);
    int64_t base = s->next;
    int64_t last = base + nrecords - 1;
    if (s->size > 0) {
        bool full = s->size + len > l->cfg.segment_bytes || s->size + len > UINT32_MAX ||
                    (uint64_t)(last - s->base) > UINT32_MAX;
        bool old = l->cfg.segment_ms >= 0 && s->roll_base_ms >= 0 &&
                   now - s->roll_base_ms >= l->cfg.segment_ms;
        if (full || old) {
            if (roll(l, err) != 0) {
                pthread_mutex_unlock(&l->mu);
                return fail_append(res, FLOE_LOG_KERR_KAFKA_STORAGE_ERROR);
            }
            s = active_seg(l);
        }
    }
    /* assign offsets (and LogAppendTime) in place */
    size_t off = 0;
    int64_t next = base;
    while (off < len) {
        floe_batch_decode_hdr(batches + off, len - off, &h, NULL);
        size_t sz = floe_batch_size(&h);
        floe_batch_set_base_offset(batches + off, next);
        floe_batch_set_leader_epoch(batches + off, l->cfg.leader_epoch);
        if (log_append_time_ms >= 0)
            floe_batch_set_log_append_time(batches + off, sz, log_append_time_ms);
        next += h.last_offset_delta + 1;
        off += sz;
    }
    uint64_t pos0 = s->size;
    int fd = floe_fdc_get(&s->log, err);
    if (fd < 0 || write_all(fd, batches, len, pos0) != 0) {
        if (fd >= 0) {
            floe_err_errno(err, errno, "append to segment");
            if (ftruncate(fd, (off_t)pos0) != 0)
                FLOE_ERROR("log: %s: cannot undo a failed append", l->dir);
            floe_fdc_put(&s->log);
        }
        pthread_mutex_unlock(&l->mu);
        return fail_append(res, FLOE_LOG_KERR_KAFKA_STORAGE_ERROR);
    }
    floe_fdc_put(&s->log);
    s->size = pos0 + len;
    s->dirty = true;
    if (s->roll_base_ms < 0) s->roll_base_ms = now;
    int rc = 0;
    off = 0;
    while (off < len) {
        floe_batch_decode_hdr(batches + off, len - off, &h, NULL);
        /* the data is in; a missing index entry (out of memory) only costs
         * a longer scan, and the index is rebuilt at the next open */
        if (floe_segment_index_batch(s, &h, pos0 + off, l->cfg.index_interval_bytes, NULL) != 0)
            FLOE_WARN("log: %s: out of memory indexing offset %" PRId64, l->dir, h.base_offset);
        if (floe_pstate_update(&l->ps, &h, now) != 0)
            FLOE_WARN("log: %s: out of memory recording producer %" PRId64, l->dir, h.producer_id);
        off += floe_batch_size(&h);
    }
    res->base_offset = base;
    res->last_offset = next - 1;
    res->log_append_time_ms = log_append_time_ms >= 0 ? log_append_time_ms : -1;
    l->unflushed_msgs += nrecords;
    bool flush = (l->cfg.flush_messages > 0 && l->unflushed_msgs >= l->cfg.flush_messages) ||
                 (l->cfg.flush_ms >= 0 && now - l->last_flush_ms >= l->cfg.flush_ms);
    pthread_mutex_unlock(&l->mu);
    if (flush && floe_log_flush(l, err) != 0) {
        res->error_code = FLOE_LOG_KERR_KAFKA_STORAGE_ERROR;
        rc = -1;
    }
    return rc;
}

/* ---- flush ---- */

int floe_log_flush(floe_log_t *l, floe_err_t *err)
{
    /* one flush at a time: a second flusher must not report offsets durable
     * while the first one's fsync is still running; it waits, then syncs
     * whatever was appended meanwhile (group commit) */
    pthread_mutex_lock(&l->flush_mu);
    pthread_mutex_lock(&l->mu);
    int64_t target = end_off(l);
    size_t n = 0;
    struct pinned {
        floe_segment_t *s;
        bool data, idx;
    } *pin = malloc((l->nsegs ? l->nsegs : 1) * sizeof *pin);
    if (!pin) {
        pthread_mutex_unlock(&l->mu);
        pthread_mutex_unlock(&l->flush_mu);
        return floe_err_set(err, FLOE_ENOMEM, "out of memory flushing");
    }
    for (size_t i = 0; i < l->nsegs; i++) {
        floe_segment_t *s = l->segs[i];
        if (!s->dirty && !s->idx_dirty) continue;
        s->refs++;
        pin[n++] = (struct pinned){s, s->dirty, s->idx_dirty};
        s->dirty = s->idx_dirty = false;
    }
    bool dir = l->dir_dirty;
    l->dir_dirty = false;
    l->unflushed_msgs = 0;
    l->last_flush_ms = l->now_ms();
    pthread_mutex_unlock(&l->mu);

    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (floe_segment_sync(pin[i].s, pin[i].data, pin[i].idx, err) == 0) continue;
        /* deleted meanwhile (retention, DeleteRecords): nothing to keep */
        pthread_mutex_lock(&l->mu);
        if (!pin[i].s->deleted) rc = -1;
        pthread_mutex_unlock(&l->mu);
    }
    if (rc == 0 && dir) rc = floe_fs_fsync_dir(l->dir, err);

    pthread_mutex_lock(&l->mu);
    for (size_t i = 0; i < n; i++) {
        if (rc != 0 && !pin[i].s->deleted) {
            pin[i].s->dirty |= pin[i].data;
            pin[i].s->idx_dirty |= pin[i].idx;
        }
        floe_log_unpin(l, pin[i].s);
    }
    if (rc != 0) {
        if (dir) l->dir_dirty = true;
    } else if (target > l->durable) {
        l->durable = target;
    }
    pthread_mutex_unlock(&l->mu);
    pthread_mutex_unlock(&l->flush_mu);
    free(pin);
    return rc;
}

int floe_log_maybe_flush(floe_log_t *l, int64_t now_ms, floe_err_t *err)
{
    pthread_mutex_lock(&l->mu);
    bool due = l->cfg.flush_ms >= 0 && now_ms - l->last_flush_ms >= l->cfg.flush_ms &&
               l->durable < end_off(l);
    pthread_mutex_unlock(&l->mu);
    return due ? floe_log_flush(l, err) : 0;
}

int64_t floe_log_durable_offset(floe_log_t *l)
{
    pthread_mutex_lock(&l->mu);
    int64_t v = l->durable;
    pthread_mutex_unlock(&l->mu);
    return v;
}

/* ---- offsets and sizes ---- */

int64_t floe_log_start_offset(floe_log_t *l)
{
    pthread_mutex_lock(&l->mu);
    int64_t v = l->log_start;
    pthread_mutex_unlock(&l->mu);
    return v;
}

int64_t floe_log_end_offset(floe_log_t *l)
{
    pthread_mutex_lock(&l->mu);
    int64_t v = end_off(l);
    pthread_mutex_unlock(&l->mu);
    return v;
}

uint64_t floe_log_size_bytes(floe_log_t *l)
{
    pthread_mutex_lock(&l->mu);
    uint64_t v = 0;
    for (size_t i = 0; i < l->nsegs; i++) v += l->segs[i]->size;
    pthread_mutex_unlock(&l->mu);
    return v;
}

size_t floe_log_segment_count(floe_log_t *l)
{
    pthread_mutex_lock(&l->mu);
    size_t v = l->nsegs;
    pthread_mutex_unlock(&l->mu);
    return v;
}

int floe_log_producer_state(floe_log_t *l, int64_t producer_id, int16_t *epoch,
                            int32_t *last_sequence)
{
    pthread_mutex_lock(&l->mu);
    const floe_pentry_t *e = floe_pstate_find(&l->ps, producer_id);
    int rc = -1;
    if (e && e->n) {
        if (epoch) *epoch = e->epoch;
        if (last_sequence)
            *last_sequence = e->b[(e->head + e->n - 1) % FLOE_PSTATE_BATCHES].last_seq;
        rc = 0;
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* ---- deletion ---- */

/* Delete the segments lying wholly below the log start (never the active
 * one).  Caller holds the lock. */
static void delete_below_start(floe_log_t *l)
{
    while (l->nsegs > 1 && l->segs[0]->next <= l->log_start && l->segs[1]->base <= l->log_start)
        remove_seg(l, 0);
}

int floe_log_delete_records(floe_log_t *l, int64_t before, floe_err_t *err)
{
    pthread_mutex_lock(&l->mu);
    int rc = 0;
    if (before > end_off(l)) {
        rc = floe_err_set(err, FLOE_ERANGE,
                          "delete records before %" PRId64 ": past the end offset %" PRId64, before,
                          end_off(l));
    } else if (before > l->log_start) {
        int64_t old = l->log_start;
        l->log_start = before;
        if (write_log_start(l, err) != 0) {
            l->log_start = old;
            rc = -1;
        } else {
            delete_below_start(l);
        }
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* How many segments from the front retention wants gone (never the
 * active one): those past retention_ms, and enough to bring the log under
 * retention_bytes.  An expired active segment is rolled away first, as
 * Kafka does.  Caller holds the lock. */
static size_t retention_wants(floe_log_t *l, int64_t now_ms, floe_err_t *err, int *rc)
{
    int64_t rms = l->cfg.retention_ms, rbytes = l->cfg.retention_bytes;
    size_t want = 0;
    if (!(l->cfg.cleanup_policy & FLOE_LOG_CLEANUP_DELETE)) return 0; /* compact only */
    if (rms >= 0) {
        floe_segment_t *a = active_seg(l);
        bool all_old = a->size > 0 && a->max_ts >= 0 && now_ms - a->max_ts > rms;
        for (size_t i = 0; all_old && i + 1 < l->nsegs; i++)
            if (!(l->segs[i]->max_ts >= 0 && now_ms - l->segs[i]->max_ts > rms)) all_old = false;
        if (all_old && roll(l, err) != 0) *rc = -1;
        while (want + 1 < l->nsegs) {
            floe_segment_t *s = l->segs[want];
            if (!(s->size == 0 || (s->max_ts >= 0 && now_ms - s->max_ts > rms))) break;
            want++;
        }
    }
    if (rbytes >= 0) {
        uint64_t total = 0;
        for (size_t i = 0; i < l->nsegs; i++) total += l->segs[i]->size;
        size_t k = 0;
        while (k + 1 < l->nsegs && total - l->segs[k]->size >= (uint64_t)rbytes)
            total -= l->segs[k++]->size;
        if (k > want) want = k;
    }
    return want;
}

int floe_log_enforce_retention_floor(floe_log_t *l, int64_t now_ms, floe_log_retention_t *r,
                                     floe_err_t *err)
{
    pthread_mutex_lock(&l->mu);
    int rc = 0;
    size_t want = retention_wants(l, now_ms, err, &rc);
    /* the segments wholly below the floor may go; from the first one that
     * holds an offset at or above it, what retention wanted is held back,
     * unless more than max_held_bytes is */
    size_t may = 0;
    while (may < want && l->segs[may]->next <= r->floor) may++;
    uint64_t held = 0;
    for (size_t i = may; i < want; i++) held += l->segs[i]->size;
    while (may < want && r->max_held_bytes >= 0 && held > (uint64_t)r->max_held_bytes)
        held -= l->segs[may++]->size;
    int64_t from = l->log_start > r->floor ? l->log_start : r->floor;
    r->held_bytes = held;
    r->skipped_from = r->skipped_to = from;
    r->deleted_segments = may;
    for (size_t i = 0; i < may; i++) remove_seg(l, 0);
    if (l->segs[0]->base > l->log_start) l->log_start = l->segs[0]->base;
    if (l->log_start > from) r->skipped_to = l->log_start;
    l->held_bytes = held;
    if (l->cfg.producer_id_expiration_ms > 0)
        floe_pstate_expire(&l->ps, now_ms - l->cfg.producer_id_expiration_ms);
    pthread_mutex_unlock(&l->mu);
    return rc;
}

int floe_log_enforce_retention(floe_log_t *l, int64_t now_ms, floe_err_t *err)
{
    floe_log_retention_t r = {.floor = FLOE_LOG_NO_FLOOR, .max_held_bytes = -1};
    return floe_log_enforce_retention_floor(l, now_ms, &r, err);
}

uint64_t floe_log_retention_held(floe_log_t *l)
{
    pthread_mutex_lock(&l->mu);
    uint64_t v = l->held_bytes;
    pthread_mutex_unlock(&l->mu);
    return v;
}
