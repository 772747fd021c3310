/* Committed offsets in __consumer_offsets (see offset_store.h). */
#include "kafka/offset_store.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/batch.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/diag.h"

#define KEY_VERSION_OFFSET 1
#define VALUE_VERSION 3
/* Compact at open when this many records were replayed and fewer than a
 * quarter of them are still live. */
#define COMPACT_MIN_RECORDS 1000
#define COMPACT_RATIO 4

struct floe_offset_store {
    char *dir;
    floe_log_t *log;
    floe_log_config_t cfg;
    floe_group_coord_t *coord;
    floe_batch_builder_t *builder;
    floe_buf_t key, value, out;
    int64_t replayed;
};

/* ---- record encoding ----------------------------------------------------- */

static int put_str(floe_buf_t *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > INT16_MAX) return -1;
    if (floe_buf_append_be16(b, (uint16_t)n)) return -1;
    return floe_buf_append(b, s, n);
}

static int encode_key(floe_buf_t *b, const char *group, const char *topic, int32_t partition)
{
    floe_buf_reset(b);
    if (floe_buf_append_be16(b, KEY_VERSION_OFFSET) || put_str(b, group) || put_str(b, topic) ||
        floe_buf_append_be32(b, (uint32_t)partition))
        return -1;
    return 0;
}

static int encode_value(floe_buf_t *b, const floe_group_offset_t *o)
{
    floe_buf_reset(b);
    if (floe_buf_append_be16(b, VALUE_VERSION) || floe_buf_append_be64(b, (uint64_t)o->offset) ||
        floe_buf_append_be32(b, (uint32_t)o->leader_epoch) || put_str(b, o->metadata) ||
        floe_buf_append_be64(b, (uint64_t)o->commit_timestamp))
        return -1;
    return 0;
}

/* A checked reader over untrusted record bytes. */
typedef struct rd {
    const uint8_t *p;
    size_t n, off;
    bool bad;
    bool oom;
} rd_t;

static uint16_t rd16(rd_t *r)
{
    if (r->bad || r->n - r->off < 2) {
        r->bad = true;
        return 0;
    }
    uint16_t v = floe_rd_be16(r->p + r->off);
    r->off += 2;
    return v;
}

static uint32_t rd32(rd_t *r)
{
    if (r->bad || r->n - r->off < 4) {
        r->bad = true;
        return 0;
    }
    uint32_t v = floe_rd_be32(r->p + r->off);
    r->off += 4;
    return v;
}

static uint64_t rd64(rd_t *r)
{
    if (r->bad || r->n - r->off < 8) {
        r->bad = true;
        return 0;
    }
    uint64_t v = floe_rd_be64(r->p + r->off);
    r->off += 8;
    return v;
}

/* A string as a fresh NUL-terminated copy (caller frees), NULL if bad. */
static char *rdstr(rd_t *r)
{
    int16_t n = (int16_t)rd16(r);
    if (r->bad || n < 0 || r->n - r->off < (size_t)n) {
        r->bad = true;
        return NULL;
    }
    char *s = strndup((const char *)r->p + r->off, (size_t)n);
    if (!s) r->bad = r->oom = true;
    r->off += (size_t)n;
    return s;
}

int floe_offset_record_decode(const uint8_t *key, size_t key_len, const uint8_t *value,
                              size_t value_len, bool value_null, floe_offset_record_t *out)
{
    memset(out, 0, sizeof *out);
    if (!key) return 0;
    bool oom = false;
    rd_t k = {key, key_len, 0, false, false};
    rd_t v = {value ? value : (const uint8_t *)"", value_len, 0, false, false};
    int16_t kv = (int16_t)rd16(&k);
    if (k.bad || (kv != 0 && kv != 1)) return 0; /* group metadata etc. */
    out->group = rdstr(&k);
    out->topic = rdstr(&k);
    out->partition = (int32_t)rd32(&k);
    if (k.bad) {
        oom = k.oom;
        goto bad;
    }
    if (value_null) {
        out->tombstone = true;
        return 1;
    }
    int16_t vv = (int16_t)rd16(&v);
    if (vv < 0 || vv > 3) goto bad;
    out->value.leader_epoch = -1;
    out->value.offset = (int64_t)rd64(&v);
    if (vv >= 3) out->value.leader_epoch = (int32_t)rd32(&v);
    char *meta = rdstr(&v);
    out->value.metadata = meta;
    out->value.commit_timestamp = (int64_t)rd64(&v);
    if (v.bad) {
        oom = v.oom;
        goto bad;
    }
    return 1;
bad:
    floe_offset_record_clear(out);
    return oom ? -1 : 0;
}

void floe_offset_record_clear(floe_offset_record_t *r)
{
    free(r->group);
    free(r->topic);
    free((char *)r->value.metadata);
    memset(r, 0, sizeof *r);
}

/* Apply one replayed record.  Malformed or foreign records are skipped:
 * returns 1 when applied, 0 when skipped, -1 when out of memory. */
static int apply_record(floe_offset_store_t *s, const floe_record_t *rec, int64_t now)
{
    floe_offset_record_t r;
    int rc = floe_offset_record_decode(rec->key_null ? NULL : rec->key.ptr, rec->key.len,
                                       rec->value.ptr, rec->value.len, rec->value_null, &r);
    if (rc <= 0) return rc;
    if (r.tombstone) floe_group_offset_remove(s->coord, r.group, r.topic, r.partition);
    else if (floe_group_offset_put(s->coord, r.group, r.topic, r.partition, &r.value, now))
        rc = -1;
    floe_offset_record_clear(&r);
    return rc;
}

/* Read the whole log and apply every record in order. */
static int replay(floe_offset_store_t *s, int64_t now, floe_err_t *err)
{
    floe_buf_t buf = FLOE_BUF_INIT, scratch = FLOE_BUF_INIT;
    int64_t off = floe_log_start_offset(s->log), end = floe_log_end_offset(s->log);
    int rc = 0;
    while (off < end) {
        floe_buf_reset(&buf);
        floe_log_read_info_t info;
        if (floe_log_read(s->log, off, 1 << 20, &buf, &info, err)) {
            rc = -1;
            break;
        }
        if (buf.len == 0) break;
        floe_batch_iter_t it;
        floe_batch_iter_init(&it, buf.data, buf.len);
        const uint8_t *b;
        size_t blen;
        floe_batch_hdr_t h;
        int r;
        int64_t next = off;
        while ((r = floe_batch_iter_next(&it, &b, &blen, &h, err)) == 1) {
            next = floe_batch_last_offset(&h) + 1;
            if (floe_batch_is_control(&h)) continue;
            floe_slice_t recs;
            if (floe_batch_records(b, blen, &h, &scratch, 0, &recs, err)) {
                FLOE_WARN("offsets: skipping unreadable batch at %lld: %s",
                          (long long)h.base_offset, err ? err->msg : "");
                continue;
            }
            floe_record_iter_t ri;
            floe_record_iter_init(&ri, &h, recs);
            floe_record_t rec;
            int q;
            while ((q = floe_record_iter_next(&ri, &rec, err)) == 1) {
                if (rec.offset < off) continue;
                s->replayed++;
                if (apply_record(s, &rec, now) < 0) {
                    rc = floe_err_set(err, FLOE_ENOMEM, "offsets: out of memory in replay");
                    goto done;
                }
            }
            if (q < 0)
                FLOE_WARN("offsets: malformed records in batch at %lld", (long long)h.base_offset);
        }
        if (r < 0) {
            rc = -1;
            floe_err_wrap(err, "offsets: replay at %lld", (long long)off);
            break;
        }
        if (next <= off) break;
        off = next;
    }
done:
    floe_buf_free(&buf);
    floe_buf_free(&scratch);
    return rc;
}

/* ---- appends ------------------------------------------------------------- */

/* Append the builder's records as one batch. */
static int append_built(floe_offset_store_t *s, floe_err_t *err)
{
    floe_buf_reset(&s->out);
    if (floe_batch_builder_finish(s->builder, &s->out, err)) return -1;
    floe_log_append_result_t res;
    if (floe_log_append(s->log, s->out.data, s->out.len, -1, &res, err)) {
        floe_err_wrap(err, "offsets: append");
        return -1;
    }
    return 0;
}

static int add_offset(floe_offset_store_t *s, int64_t ts, const char *group, const char *topic,
                      int32_t partition, const floe_group_offset_t *o, floe_err_t *err)
{
    if (encode_key(&s->key, group, topic, partition) || (o && encode_value(&s->value, o)))
        return floe_err_set(err, FLOE_EINVAL, "offsets: key or value too long");
    floe_slice_t k = floe_buf_slice(&s->key), v = floe_buf_slice(&s->value);
    return floe_batch_builder_add(s->builder, ts, &k, o ? &v : NULL, NULL, 0, err);
}

int floe_offset_store_commit(floe_offset_store_t *s, const char *group_id, const char *member_id,
                             const char *instance_id, int32_t generation_id,
                             floe_offset_commit_part_t *parts, size_t nparts, int64_t now_ms,
                             int64_t wall_ms, floe_err_t *err)
{
    int16_t ge =
        floe_group_commit_check(s->coord, group_id, member_id, instance_id, generation_id, now_ms);
    size_t accepted = 0;
    for (size_t i = 0; i < nparts; i++) {
        if (parts[i].error) continue; /* refused by the caller already */
        parts[i].error = ge ? ge : floe_group_commit_check_partition(s->coord, parts[i].metadata);
        if (!parts[i].error) accepted++;
    }
    if (!accepted) return 0;
    floe_batch_builder_reset(s->builder, NULL);
    for (size_t i = 0; i < nparts; i++) {
        if (parts[i].error) continue;
        floe_group_offset_t o = {parts[i].offset, parts[i].leader_epoch,
                                 parts[i].metadata ? parts[i].metadata : "", wall_ms};
        if (add_offset(s, wall_ms, group_id, parts[i].topic, parts[i].partition, &o, err))
            goto fail;
    }
    if (append_built(s, err)) goto fail;
    for (size_t i = 0; i < nparts; i++) {
        if (parts[i].error) continue;
        floe_group_offset_t o = {parts[i].offset, parts[i].leader_epoch,
                                 parts[i].metadata ? parts[i].metadata : "", wall_ms};
        if (floe_group_offset_put(s->coord, group_id, parts[i].topic, parts[i].partition, &o,
                                  now_ms)) {
            /* On disk but not in memory: the next restart has it. */
            floe_err_set(err, FLOE_ENOMEM, "offsets: out of memory");
            goto fail;
        }
    }
    return 0;
fail:
    for (size_t i = 0; i < nparts; i++)
        if (!parts[i].error) parts[i].error = FLOE_GERR_UNKNOWN_SERVER_ERROR;
    return -1;
}

typedef struct tomb_ctx {
    floe_offset_store_t *s;
    const char *group;
    floe_err_t *err;
    int rc;
} tomb_ctx_t;

static void add_tombstone(void *o, const char *topic, int32_t partition,
                          const floe_group_offset_t *off)
{
    (void)off;
    tomb_ctx_t *t = o;
    if (t->rc == 0 && add_offset(t->s, floe_wall_ms(), t->group, topic, partition, NULL, t->err))
        t->rc = -1;
}

int16_t floe_offset_store_delete_group(floe_offset_store_t *s, const char *group_id,
                                       floe_err_t *err)
{
    int16_t e = floe_group_delete_check(s->coord, group_id);
    if (e) return e;
    floe_batch_builder_reset(s->builder, NULL);
    tomb_ctx_t t = {s, group_id, err, 0};
    floe_group_offsets_each(s->coord, group_id, add_tombstone, &t);
    if (t.rc) return FLOE_GERR_UNKNOWN_SERVER_ERROR;
    if (floe_batch_builder_count(s->builder) && append_built(s, err))
        return FLOE_GERR_UNKNOWN_SERVER_ERROR;
    return floe_group_delete(s->coord, group_id);
}

typedef struct expired {
    char *group, *topic;
    int32_t partition;
} expired_t;

typedef struct expire_ctx {
    expired_t *v;
    size_t n, cap;
    bool oom;
} expire_ctx_t;

static void collect_expired(void *o, const char *group, const char *topic, int32_t partition)
{
    expire_ctx_t *x = o;
    if (x->oom) return;
    if (x->n == x->cap) {
        size_t nc = x->cap ? x->cap * 2 : 16;
        expired_t *v = realloc(x->v, nc * sizeof *v);
        if (!v) {
            x->oom = true;
            return;
        }
        x->v = v;
        x->cap = nc;
    }
    expired_t *e = &x->v[x->n];
    e->group = strdup(group);
    e->topic = strdup(topic);
    e->partition = partition;
    if (!e->group || !e->topic) {
        free(e->group);
        free(e->topic);
        x->oom = true;
        return;
    }
    x->n++;
}

int64_t floe_offset_store_expire(floe_offset_store_t *s, int64_t now_ms, int64_t wall_ms,
                                 floe_err_t *err)
{
    expire_ctx_t x = {0};
    floe_group_offsets_expired(s->coord, now_ms, wall_ms, collect_expired, &x);
    int64_t rc = 0;
    if (x.oom) {
        rc = floe_err_set(err, FLOE_ENOMEM, "offsets: out of memory");
        goto out;
    }
    if (!x.n) goto out;
    floe_batch_builder_reset(s->builder, NULL);
    for (size_t i = 0; i < x.n; i++) {
        if (add_offset(s, wall_ms, x.v[i].group, x.v[i].topic, x.v[i].partition, NULL, err)) {
            rc = -1;
            goto out;
        }
    }
    if (append_built(s, err)) {
        rc = -1;
        goto out;
    }
    for (size_t i = 0; i < x.n; i++)
        floe_group_offset_remove(s->coord, x.v[i].group, x.v[i].topic, x.v[i].partition);
    FLOE_INFO("offsets: %zu expired offset%s deleted", x.n, x.n == 1 ? "" : "s");
    rc = (int64_t)x.n;
out:
    for (size_t i = 0; i < x.n; i++) {
        free(x.v[i].group);
        free(x.v[i].topic);
    }
    free(x.v);
    return rc;
}

/* ---- compaction ---------------------------------------------------------- */

/* Remove a flat directory (a log directory holds only files). */
static int rm_flat_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return errno == ENOENT ? 0 : -1;
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        unlink(p);
    }
    closedir(d);
    return rmdir(path);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Finish or undo a compaction that a crash interrupted.  The new log is
 * complete before the old one is moved aside, so a present .compacting
 * with no live directory is the one to keep. */
static void recover_compaction(const char *dir, const char *tmp, const char *old)
{
    if (!exists(dir) && exists(tmp) && exists(old)) {
        if (rename(tmp, dir) == 0) FLOE_INFO("offsets: finished an interrupted compaction");
    }
    if (exists(dir)) {
        if (exists(tmp)) rm_flat_dir(tmp);
        if (exists(old)) rm_flat_dir(old);
    }
}

typedef struct compact_ctx {
    floe_offset_store_t *s;
    floe_log_t *log;
    const char *group;
    floe_err_t *err;
    int rc;
    int64_t live;
} compact_ctx_t;

static void compact_offset(void *o, const char *topic, int32_t partition,
                           const floe_group_offset_t *off)
{
    compact_ctx_t *c = o;
    if (c->rc) return;
    floe_offset_store_t *s = c->s;
    c->live++;
    if (add_offset(s, off->commit_timestamp, c->group, topic, partition, off, c->err)) {
        c->rc = -1;
        return;
    }
    if (floe_batch_builder_records_size(s->builder) < (256u << 10)) return;
    floe_buf_reset(&s->out);
    if (floe_batch_builder_finish(s->builder, &s->out, c->err) ||
        floe_log_append(c->log, s->out.data, s->out.len, -1, NULL, c->err))
        c->rc = -1;
    floe_batch_builder_reset(s->builder, NULL);
}

static void compact_group(void *o, const char *group, const char *pt, floe_group_state_t st)
{
    (void)pt;
    (void)st;
    compact_ctx_t *c = o;
    c->group = group;
    floe_group_offsets_each(c->s->coord, group, compact_offset, c);
}

static void count_live_offset(void *o, const char *t, int32_t p, const floe_group_offset_t *x)
{
    (void)t;
    (void)p;
    (void)x;
    (*(int64_t *)o)++;
}

typedef struct live_ctx {
    const floe_group_coord_t *coord;
    int64_t n;
} live_ctx_t;

static void count_live_group(void *o, const char *g, const char *pt, floe_group_state_t st)
{
    (void)pt;
    (void)st;
    live_ctx_t *l = o;
    floe_group_offsets_each(l->coord, g, count_live_offset, &l->n);
}

/* Rewrite the live offsets into a fresh log and swap it in. */
static int compact(floe_offset_store_t *s, floe_err_t *err)
{
    char tmp[4096], old[4096];
    snprintf(tmp, sizeof tmp, "%s.compacting", s->dir);
    snprintf(old, sizeof old, "%s.old", s->dir);
    rm_flat_dir(tmp);
    compact_ctx_t c = {.s = s, .err = err};
    if (floe_log_open(tmp, &s->cfg, &c.log, err)) return -1;
    floe_batch_builder_reset(s->builder, NULL);
    floe_group_list(s->coord, compact_group, &c);
    if (!c.rc && floe_batch_builder_count(s->builder)) {
        floe_buf_reset(&s->out);
        if (floe_batch_builder_finish(s->builder, &s->out, err) ||
            floe_log_append(c.log, s->out.data, s->out.len, -1, NULL, err))
            c.rc = -1;
    }
    if (!c.rc && floe_log_flush(c.log, err)) c.rc = -1;
    floe_log_close(c.log);
    if (c.rc) {
        rm_flat_dir(tmp);
        return -1;
    }
    floe_log_close(s->log);
    s->log = NULL;
    if (rename(s->dir, old) || rename(tmp, s->dir)) {
        floe_err_errno(err, errno, "offsets: swapping the compacted log");
        recover_compaction(s->dir, tmp, old);
        return floe_log_open(s->dir, &s->cfg, &s->log, err);
    }
    rm_flat_dir(old);
    FLOE_INFO("offsets: compacted %lld records to %lld", (long long)s->replayed, (long long)c.live);
    return floe_log_open(s->dir, &s->cfg, &s->log, err);
}

/* ---- open / close -------------------------------------------------------- */

int floe_offset_store_open(const char *dir, const floe_log_config_t *cfg, floe_group_coord_t *coord,
                           int64_t now_ms, floe_offset_store_t **out, floe_err_t *err)
{
    floe_offset_store_t *s = calloc(1, sizeof *s);
    if (!s || !(s->dir = strdup(dir))) {
        free(s);
        return floe_err_set(err, FLOE_ENOMEM, "offsets: out of memory");
    }
    if (cfg) {
        s->cfg = *cfg;
    } else {
        floe_log_config_default(&s->cfg);
        /* Commits are written at once (a killed process loses none); an
         * append more than a second after the last fsync syncs too, which
         * bounds what a power loss can take without an fsync per commit. */
        s->cfg.flush_ms = 1000;
    }
    s->cfg.retention_ms = -1; /* offsets never age out of this log */
    s->cfg.retention_bytes = -1;
    s->coord = coord;
    floe_batch_opts_t bo;
    floe_batch_opts_default(&bo);
    s->builder = floe_batch_builder_new(&bo);
    if (!s->builder) {
        floe_offset_store_close(s);
        return floe_err_set(err, FLOE_ENOMEM, "offsets: out of memory");
    }
    char tmp[4096], old[4096];
    snprintf(tmp, sizeof tmp, "%s.compacting", dir);
    snprintf(old, sizeof old, "%s.old", dir);
    recover_compaction(dir, tmp, old);
    if (floe_log_open(dir, &s->cfg, &s->log, err) || replay(s, now_ms, err)) {
        floe_err_wrap(err, "offsets: %s", dir);
        floe_offset_store_close(s);
        return -1;
    }
    live_ctx_t live = {coord, 0};
    floe_group_list(coord, count_live_group, &live);
    if (s->replayed >= COMPACT_MIN_RECORDS && s->replayed > live.n * COMPACT_RATIO) {
        floe_err_t cerr;
        if (compact(s, &cerr)) {
            FLOE_WARN("offsets: compaction failed: %s", cerr.msg);
            if (!s->log) {
                if (err) *err = cerr;
                floe_offset_store_close(s);
                return -1;
            }
        }
    }
    *out = s;
    return 0;
}

void floe_offset_store_close(floe_offset_store_t *s)
{
    if (!s) return;
    if (s->log) {
        floe_err_t err;
        if (floe_log_flush(s->log, &err)) FLOE_WARN("offsets: flush at close: %s", err.msg);
        floe_log_close(s->log);
    }
    floe_batch_builder_free(s->builder);
    floe_buf_free(&s->key);
    floe_buf_free(&s->value);
    floe_buf_free(&s->out);
    free(s->dir);
    free(s);
}

int64_t floe_offset_store_replayed(const floe_offset_store_t *s)
{
    return s->replayed;
}
