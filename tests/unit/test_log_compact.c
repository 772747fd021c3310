/* Log compaction (cleaner.c): the latest record per key stays, tombstones
 * go after delete.retention.ms, offsets keep their gaps and fetches cross
 * them, the active segment is never touched, producers' sequences
 * survive, keyless records are refused, and a process killed at every
 * step of a swap leaves a log that holds every record that should be
 * there. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log/batch.h"
#include "log/log.h"
#include "log/log_int.h"
#include "test.h"
#include "tmp_dir.h"
#include "util/diag.h"

static char *tmpdir(void)
{
    return floe_test_tmpdir("compact");
}

static floe_log_config_t compact_cfg(void)
{
    floe_log_config_t c;
    floe_log_config_default(&c);
    c.cleanup_policy = FLOE_LOG_CLEANUP_COMPACT;
    c.segment_bytes = 600;
    c.index_interval_bytes = 128;
    return c;
}

#define NKEYS 8
#define ROUNDS 40

/* Append one batch: n records key "k<key+i>" (NULL key when key < 0),
 * value "v<round>" or NULL (a tombstone) when tomb. */
static int append_kv(floe_log_t *l, int key, int n, int round, bool tomb, int codec, int64_t pid,
                     int32_t seq, floe_log_append_result_t *res)
{
    floe_batch_opts_t o;
    floe_batch_opts_default(&o);
    o.compression = codec;
    o.producer_id = pid;
    o.producer_epoch = pid >= 0 ? 0 : -1;
    o.base_sequence = seq;
    floe_batch_builder_t *b = floe_batch_builder_new(&o);
    floe_err_t err;
    for (int i = 0; i < n; i++) {
        char k[32], v[32];
        snprintf(k, sizeof k, "k%d", key + i);
        snprintf(v, sizeof v, "v%d", round);
        floe_slice_t ks = floe_slice_str(k), vs = floe_slice_str(v);
        if (floe_batch_builder_add(b, 1000 + round, key < 0 ? NULL : &ks, tomb ? NULL : &vs, NULL,
                                   0, &err) != 0)
            abort();
    }
    floe_buf_t buf = FLOE_BUF_INIT;
    if (floe_batch_builder_finish(b, &buf, &err) != 0) abort();
    floe_batch_builder_free(b);
    floe_log_append_result_t r;
    int rc = floe_log_append(l, buf.data, buf.len, -1, res ? res : &r, &err);
    floe_buf_free(&buf);
    return rc;
}

/* What a consumer reading from the start sees. */
typedef struct seen {
    int64_t off[4096];
    char key[4096][16];
    char val[4096][16]; /* "" for a tombstone */
    int n;
    int batches;
    bool increasing, crc_ok;
} seen_t;

static void read_all(floe_log_t *l, seen_t *s)
{
    memset(s, 0, sizeof *s);
    s->increasing = s->crc_ok = true;
    int64_t off = floe_log_start_offset(l), end = floe_log_end_offset(l), last = -1;
    floe_buf_t out = FLOE_BUF_INIT, scratch = FLOE_BUF_INIT;
    while (off < end) {
        floe_err_t err;
        floe_log_read_info_t info;
        floe_buf_reset(&out);
        if (floe_log_read(l, off, 700, &out, &info, &err) != 0) {
            printf("# read at %lld: %s\n", (long long)off, err.msg);
            s->crc_ok = false;
            break;
        }
        if (out.len == 0) {
            printf("# read at %lld: nothing below the end %lld\n", (long long)off, (long long)end);
            s->increasing = false;
            break;
        }
        floe_batch_iter_t it;
        floe_batch_iter_init(&it, out.data, out.len);
        const uint8_t *b;
        size_t blen;
        floe_batch_hdr_t h;
        int rc;
        while ((rc = floe_batch_iter_next(&it, &b, &blen, &h, &err)) == 1) {
            s->batches++;
            if (floe_batch_last_offset(&h) < off) s->increasing = false;
            floe_slice_t recs;
            if (floe_batch_records(b, blen, &h, &scratch, 0, &recs, &err) != 0) {
                s->crc_ok = false;
                break;
            }
            floe_record_iter_t ri;
            floe_record_iter_init(&ri, &h, recs);
            floe_record_t r;
            while (floe_record_iter_next(&ri, &r, &err) == 1) {
                if (r.offset <= last) s->increasing = false;
                last = r.offset;
                if (r.offset < off || s->n >= 4096) continue;
                s->off[s->n] = r.offset;
                snprintf(s->key[s->n], 16, "%.*s", (int)r.key.len, (const char *)r.key.ptr);
                snprintf(s->val[s->n], 16, "%.*s", (int)r.value.len, (const char *)r.value.ptr);
                s->n++;
            }
            off = floe_batch_last_offset(&h) + 1;
        }
        if (rc < 0) {
            printf("# batch: %s\n", err.msg);
            s->crc_ok = false;
            break;
        }
    }
    floe_buf_free(&out);
    floe_buf_free(&scratch);
}

/* The value a consumer ends with for key k ("" none / deleted). */
static const char *final_value(const seen_t *s, const char *k)
{
    const char *v = "";
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->key[i], k)) v = s->val[i];
    return v;
}

static int count_key(const seen_t *s, const char *k, int64_t below)
{
    int c = 0;
    for (int i = 0; i < s->n; i++) c += !strcmp(s->key[i], k) && s->off[i] < below;
    return c;
}

static void read_file(const char *path, floe_buf_t *out)
{
    floe_buf_reset(out);
    FILE *f = fopen(path, "rb");
    if (!f) return;
    char b[4096];
    size_t n;
    while ((n = fread(b, 1, sizeof b, f)) > 0) floe_buf_append(out, b, n);
    fclose(f);
}

/* ROUNDS updates to NKEYS keys, one record a batch; the last round of key
 * 3 is a tombstone.  Then one more batch, which stays in the active
 * segment. */
static void fill(floe_log_t *l)
{
    for (int r = 0; r < ROUNDS; r++)
        for (int k = 0; k < NKEYS; k++)
            CHECK_EQ(append_kv(l, k, 1, r, k == 3 && r == ROUNDS - 1, 0, -1, -1, NULL), 0);
}

/* A consumer's view: offsets increase, batches whole, and key k<i> ends
 * with "v<round>" (k3 deleted when tomb3); with clean_upto >= 0 the
 * clean part holds each key once. */
static void check_values(const seen_t *s, int round, bool tomb3, int64_t clean_upto)
{
    CHECK(s->increasing);
    CHECK(s->crc_ok);
    char k[16], v[16];
    snprintf(v, sizeof v, "v%d", round);
    for (int i = 0; i < NKEYS; i++) {
        snprintf(k, sizeof k, "k%d", i);
        CHECK_STR(final_value(s, k), i == 3 && tomb3 ? "" : v);
        if (clean_upto >= 0) CHECK(count_key(s, k, clean_upto) <= 1);
    }
}

static void check_latest(const seen_t *s, int64_t clean_upto)
{
    check_values(s, ROUNDS - 1, true, clean_upto);
}

/* A log in a new temp dir (*d, caller frees) with config c, filled; with
 * a record of key k100 after it (in the active segment) when tail. */
static floe_log_t *filled_log(char **d, const floe_log_config_t *c, bool tail)
{
    *d = tmpdir();
    floe_log_t *l;
    floe_err_t err;
    if (floe_log_open(*d, c, &l, &err) != 0) abort();
    fill(l);
    if (tail) CHECK_EQ(append_kv(l, 100, 1, 0, false, 0, -1, -1, NULL), 0);
    return l;
}

static void done(floe_log_t *l, char *d, seen_t *s)
{
    floe_log_close(l);
    floe_test_rm_rf(d);
    free(d);
    free(s);
}

static void latest_per_key_kept(void)
{
    char *d;
    floe_log_config_t c = compact_cfg();
    floe_log_t *l = filled_log(&d, &c, true);
    floe_err_t err;
    int64_t end = floe_log_end_offset(l);
    size_t segs = floe_log_segment_count(l);
    CHECK(segs > 10);
    /* the active segment's bytes stay as they are */
    char ap[4096];
    floe_segment_path(ap, sizeof ap, d, l->segs[l->nsegs - 1]->base, "log", NULL);
    floe_buf_t before = FLOE_BUF_INIT, after = FLOE_BUF_INIT;
    read_file(ap, &before);
    CHECK(before.len > 0);
    uint64_t dirty;
    CHECK(floe_log_dirty_ratio(l, 5000, &dirty) == 1.0);
    CHECK(dirty > 0);
    floe_log_clean_stats_t st;
    CHECK_EQ(floe_log_clean(l, 5000, NULL, &st, &err), 1);
    CHECK(st.records_removed > 0);
    CHECK(st.bytes_after < st.bytes_before);
    CHECK_EQ(floe_log_end_offset(l), end);
    CHECK_EQ(floe_log_start_offset(l), 0);
    read_file(ap, &after);
    CHECK(before.len == after.len && !memcmp(before.data, after.data, before.len));
    int64_t upto = floe_log_clean_checkpoint(l);
    CHECK(upto > 0);
    seen_t *s = malloc(sizeof *s);
    read_all(l, s);
    check_latest(s, upto);
    CHECK(s->n < ROUNDS * NKEYS / 2);
    /* nothing dirty: no run */
    CHECK_EQ(floe_log_clean(l, 5000, NULL, &st, &err), 0);
    /* a run groups the cleaned segments, now small, into fewer */
    floe_log_clean_opts_t force = {.force = true};
    CHECK_EQ(floe_log_clean(l, 5000, &force, &st, &err), 1);
    CHECK(floe_log_segment_count(l) < segs / 2);
    seen_t *s1 = malloc(sizeof *s1);
    read_all(l, s1);
    CHECK_EQ(s1->n, s->n);
    for (int i = 0; i < s->n && i < s1->n; i++) CHECK_EQ(s1->off[i], s->off[i]);
    free(s1);
    upto = floe_log_clean_checkpoint(l);
    /* a restart sees the same log and the same checkpoint */
    floe_log_close(l);
    CHECK_EQ(floe_log_open(d, &c, &l, &err), 0);
    CHECK_EQ(l->rebuilt, 0);
    CHECK_EQ(floe_log_clean_checkpoint(l), upto);
    seen_t *s2 = malloc(sizeof *s2);
    read_all(l, s2);
    CHECK_EQ(s2->n, s->n);
    for (int i = 0; i < s->n && i < s2->n; i++) CHECK_EQ(s2->off[i], s->off[i]);
    /* the ratio: nothing dirty now */
    CHECK(floe_log_dirty_ratio(l, 5000, NULL) == 0.0);
    floe_log_close(l);
    free(s);
    free(s2);
    floe_buf_free(&before);
    floe_buf_free(&after);
    floe_test_rm_rf(d);
    free(d);
}

/* Every offset of the log is fetchable: the read answers with the batch
 * holding it or the first one after its gap. */
static void fetch_crosses_gaps(void)
{
    char *d = tmpdir();
    floe_log_config_t c = compact_cfg();
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, &c, &l, &err), 0);
    /* batches of several records, compressed, some superseded in part */
    for (int r = 0; r < 12; r++) {
        CHECK_EQ(append_kv(l, 0, 5, r, false, FLOE_COMPRESSION_LZ4, -1, -1, NULL), 0);
        CHECK_EQ(append_kv(l, r % 3, 2, r, false, FLOE_COMPRESSION_ZSTD, -1, -1, NULL), 0);
    }
    CHECK_EQ(append_kv(l, 50, 1, 0, false, 0, -1, -1, NULL), 0);
    int64_t end = floe_log_end_offset(l);
    floe_log_clean_opts_t o = {.force = true};
    CHECK_EQ(floe_log_clean(l, 5000, &o, NULL, &err), 1);
    floe_buf_t out = FLOE_BUF_INIT;
    for (int64_t off = 0; off < end; off++) {
        floe_buf_reset(&out);
        CHECK_EQ(floe_log_read(l, off, 1, &out, NULL, &err), 0);
        if (!out.len) {
            CHECK(out.len > 0);
            break;
        }
        floe_batch_hdr_t h;
        CHECK_EQ(floe_batch_parse_hdr(out.data, out.len, &h, &err), 0);
        CHECK(floe_batch_last_offset(&h) >= off);
    }
    seen_t *s = malloc(sizeof *s);
    read_all(l, s);
    CHECK(s->increasing);
    CHECK(s->crc_ok);
    /* k0..k4 end with round 11's value from the 5-record batch, except
     * the keys the 2-record batches wrote later in the same round */
    CHECK_STR(final_value(s, "k0"), "v11");
    CHECK_STR(final_value(s, "k4"), "v11");
    CHECK_EQ(count_key(s, "k4", floe_log_clean_checkpoint(l)), 1);
    floe_buf_free(&out);
    done(l, d, s);
}

static void tombstones_go_after_delete_retention(void)
{
    char *d;
    floe_log_config_t c = compact_cfg();
    c.delete_retention_ms = 10000;
    floe_log_t *l = filled_log(&d, &c, true);
    floe_err_t err;
    int64_t t0 = 1000000;
    CHECK_EQ(floe_log_clean(l, t0, NULL, NULL, &err), 1);
    seen_t *s = malloc(sizeof *s);
    read_all(l, s);
    CHECK_EQ(count_key(s, "k3", INT64_MAX), 1); /* the tombstone */
    CHECK_STR(final_value(s, "k3"), "");
    /* nothing dirty, horizon not reached: no run */
    CHECK_EQ(floe_log_clean(l, t0 + 9999, NULL, NULL, &err), 0);
    read_all(l, s);
    CHECK_EQ(count_key(s, "k3", INT64_MAX), 1);
    /* the horizon survives a restart (checkpoint, batch attribute) */
    floe_log_close(l);
    CHECK_EQ(floe_log_open(d, &c, &l, &err), 0);
    CHECK_EQ(floe_log_clean(l, t0 + 9999, NULL, NULL, &err), 0);
    floe_log_clean_stats_t st;
    CHECK_EQ(floe_log_clean(l, t0 + 10000, NULL, &st, &err), 1);
    CHECK_EQ(st.tombstones_removed, 1);
    read_all(l, s);
    CHECK_EQ(count_key(s, "k3", INT64_MAX), 0);
    check_latest(s, floe_log_clean_checkpoint(l));
    CHECK_EQ(floe_log_clean(l, t0 + 20000, NULL, NULL, &err), 0);
    done(l, d, s);
}

static void active_and_young_segments_untouched(void)
{
    char *d;
    floe_log_config_t c = compact_cfg();
    c.segment_bytes = 1 << 20; /* one segment: the active one */
    floe_log_t *l = filled_log(&d, &c, false);
    floe_err_t err;
    floe_log_clean_opts_t o = {.force = true};
    CHECK_EQ(floe_log_clean(l, 5000, &o, NULL, &err), 0);
    seen_t *s = malloc(sizeof *s);
    read_all(l, s);
    CHECK_EQ(s->n, ROUNDS * NKEYS);
    done(l, d, NULL);
    /* min.compaction.lag.ms: records younger than the lag stay */
    c = compact_cfg();
    c.min_compaction_lag_ms = 100000;
    l = filled_log(&d, &c, true);
    /* timestamps are 1000 + round: at now 50000 every one is young */
    CHECK_EQ(floe_log_clean(l, 50000, &o, NULL, &err), 0);
    read_all(l, s);
    CHECK_EQ(s->n, ROUNDS * NKEYS + 1);
    /* a floor (a table's committed offset): nothing at or above it goes */
    floe_log_clean_opts_t fo = {.floor = 100};
    CHECK_EQ(floe_log_clean(l, 200000, &fo, NULL, &err), 1);
    CHECK(floe_log_clean_checkpoint(l) <= 100);
    read_all(l, s);
    int above = 0;
    for (int i = 0; i < s->n; i++) above += s->off[i] >= 100;
    CHECK_EQ(above, ROUNDS * NKEYS + 1 - 100);
    CHECK(s->n < ROUNDS * NKEYS + 1);
    CHECK_EQ(floe_log_clean(l, 200000, NULL, NULL, &err), 1);
    read_all(l, s);
    check_latest(s, floe_log_clean_checkpoint(l));
    done(l, d, s);
}

/* A small offset map cleans in several runs and loses nothing. */
static void bounded_runs(void)
{
    char *d;
    floe_log_config_t c = compact_cfg();
    floe_log_t *l = filled_log(&d, &c, true);
    floe_err_t err;
    floe_log_clean_opts_t o = {.max_keys = 3, .max_dirty_bytes = 1000};
    int runs = 0;
    int64_t prev = -1;
    seen_t *s = malloc(sizeof *s);
    while (floe_log_clean(l, 5000, &o, NULL, &err) == 1 && runs < 100) {
        runs++;
        int64_t upto = floe_log_clean_checkpoint(l);
        CHECK(upto > prev);
        prev = upto;
        read_all(l, s);
        CHECK(s->increasing);
        char v[16];
        snprintf(v, sizeof v, "v%d", ROUNDS - 1);
        CHECK_STR(final_value(s, "k0"), v);
        CHECK_STR(final_value(s, "k7"), v);
        CHECK_STR(final_value(s, "k3"), "");
    }
    CHECK(runs > 1);
    /* every dirty record mapped (the ratio fell below the threshold before) */
    o.force = true;
    for (int i = 0; i < 20 && floe_log_clean_checkpoint(l) < l->segs[l->nsegs - 1]->base; i++)
        CHECK(floe_log_clean(l, 5000, &o, NULL, &err) >= 0);
    CHECK_EQ(floe_log_clean_checkpoint(l), l->segs[l->nsegs - 1]->base);
    /* a day later the tombstone goes, and no older value of k3 comes back */
    int64_t later = 5000 + 2 * 86400000ll;
    o.force = false;
    CHECK_EQ(floe_log_clean(l, later, &o, NULL, &err), 1);
    read_all(l, s);
    CHECK_STR(final_value(s, "k3"), "");
    CHECK_EQ(count_key(s, "k3", INT64_MAX), 0);
    char v7[16];
    snprintf(v7, sizeof v7, "v%d", ROUNDS - 1);
    CHECK_STR(final_value(s, "k7"), v7);
    done(l, d, s);
}

static void producer_sequence_survives(void)
{
    char *d = tmpdir();
    floe_log_config_t c = compact_cfg();
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, &c, &l, &err), 0);
    /* producer 7 writes key k0 over and over; others fill segments */
    int32_t seq = 0;
    for (int r = 0; r < 30; r++) {
        CHECK_EQ(append_kv(l, 0, 2, r, false, 0, 7, seq, NULL), 0);
        seq += 2;
        CHECK_EQ(append_kv(l, 1, 2, r, false, 0, -1, -1, NULL), 0);
    }
    /* its last batch, superseded by a later write of another producer */
    for (int r = 30; r < 40; r++) CHECK_EQ(append_kv(l, 0, 2, r, false, 0, -1, -1, NULL), 0);
    CHECK_EQ(append_kv(l, 100, 1, 0, false, 0, -1, -1, NULL), 0);
    floe_log_clean_stats_t st;
    CHECK_EQ(floe_log_clean(l, 5000, NULL, &st, &err), 1);
    floe_log_close(l);
    /* the snapshot goes: the state comes from the batches alone */
    char p[4096];
    snprintf(p, sizeof p, "%s/producer-state", d);
    unlink(p);
    CHECK_EQ(floe_log_open(d, &c, &l, &err), 0);
    int16_t epoch;
    int32_t last;
    CHECK_EQ(floe_log_producer_state(l, 7, &epoch, &last), 0);
    CHECK_EQ(last, seq - 1);
    floe_log_append_result_t res;
    CHECK_EQ(append_kv(l, 0, 2, 99, false, 0, 7, seq, &res), 0);
    CHECK(!res.duplicate);
    seen_t *s = malloc(sizeof *s);
    read_all(l, s);
    CHECK(s->increasing);
    CHECK_STR(final_value(s, "k0"), "v99");
    done(l, d, s);
}

static void keyless_refused_and_policies(void)
{
    char *d = tmpdir();
    floe_log_config_t c = compact_cfg();
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, &c, &l, &err), 0);
    floe_log_append_result_t res;
    CHECK_EQ(append_kv(l, -1, 1, 0, false, 0, -1, -1, &res), -1);
    CHECK_EQ(res.error_code, FLOE_LOG_KERR_INVALID_RECORD);
    CHECK_EQ(floe_log_end_offset(l), 0);
    /* compact only: retention deletes nothing, however old */
    fill(l);
    size_t segs = floe_log_segment_count(l);
    c.retention_ms = 1;
    floe_log_set_config(l, &c);
    CHECK_EQ(floe_log_enforce_retention(l, 1 << 30, &err), 0);
    CHECK_EQ(floe_log_segment_count(l), segs);
    c.cleanup_policy |= FLOE_LOG_CLEANUP_DELETE;
    floe_log_set_config(l, &c);
    CHECK_EQ(floe_log_enforce_retention(l, 1 << 30, &err), 0);
    CHECK(floe_log_segment_count(l) < segs);
    /* a delete topic takes keyless records */
    c.cleanup_policy = FLOE_LOG_CLEANUP_DELETE;
    floe_log_set_config(l, &c);
    CHECK_EQ(append_kv(l, -1, 1, 0, false, 0, -1, -1, &res), 0);
    floe_log_close(l);
    floe_test_rm_rf(d);
    free(d);

    floe_log_config_default(&c);
    CHECK_EQ(c.cleanup_policy, FLOE_LOG_CLEANUP_DELETE);
    CHECK_EQ(floe_log_config_set(&c, "cleanup.policy", "compact", &err), 0);
    CHECK_EQ(c.cleanup_policy, FLOE_LOG_CLEANUP_COMPACT);
    CHECK_EQ(floe_log_config_set(&c, "cleanup.policy", "delete, compact", &err), 0);
    CHECK_EQ(c.cleanup_policy, FLOE_LOG_CLEANUP_COMPACT | FLOE_LOG_CLEANUP_DELETE);
    CHECK_EQ(floe_log_config_set(&c, "cleanup.policy", "compact,delete", &err), 0);
    CHECK_EQ(floe_log_config_set(&c, "cleanup.policy", "compacted", &err), -1);
    CHECK(strstr(err.msg, "cleanup.policy") != NULL);
    CHECK_EQ(floe_log_config_set(&c, "cleanup.policy", "", &err), -1);
    CHECK_EQ(floe_log_config_set(&c, "min.cleanable.dirty.ratio", "0.25", &err), 0);
    CHECK(c.min_cleanable_dirty_ratio == 0.25);
    CHECK_EQ(floe_log_config_set(&c, "min.cleanable.dirty.ratio", "1.5", &err), -1);
    CHECK_EQ(floe_log_config_set(&c, "min.cleanable.dirty.ratio", "x", &err), -1);
    CHECK_EQ(floe_log_config_set(&c, "delete.retention.ms", "5", &err), 0);
    CHECK_EQ(c.delete_retention_ms, 5);
    CHECK_EQ(floe_log_config_set(&c, "delete.retention.ms", "-2", &err), -1);
    CHECK_EQ(floe_log_config_set(&c, "min.compaction.lag.ms", "7", &err), 0);
    CHECK_EQ(c.min_compaction_lag_ms, 7);
}

/* ---- a crash at every step of the swap ---- */

static int crash_at;
static void crash_step(void *arg, int step)
{
    (void)arg;
    if (step == crash_at) _exit(42);
}

static size_t leftovers(const char *dir)
{
    DIR *dd = opendir(dir);
    size_t n = 0;
    struct dirent *de;
    while (dd && (de = readdir(dd)))
        n += strstr(de->d_name, ".cleaned") || strstr(de->d_name, ".swap");
    if (dd) closedir(dd);
    return n;
}

/* A crash after each step of a first cleaning (one segment per group),
 * and of a later one whose groups merge several cleaned segments. */
static void crash_at_each_step(void)
{
    for (int merged = 0; merged < 2; merged++)
        for (int stepn = FLOE_CLEAN_STEP_WRITING; stepn <= FLOE_CLEAN_STEP_SWAPPED; stepn++) {
            char *d;
            floe_log_config_t c = compact_cfg();
            c.delete_retention_ms = 1 << 30;
            floe_log_t *l = filled_log(&d, &c, true);
            floe_err_t err;
            int round = ROUNDS - 1;
            if (merged) { /* cleaned once, then a round of updates but k3 */
                floe_log_clean_opts_t o = {.force = true};
                CHECK_EQ(floe_log_clean(l, 5000, &o, NULL, &err), 1);
                round = ROUNDS;
                for (int k = 0; k < NKEYS; k++)
                    if (k != 3) CHECK_EQ(append_kv(l, k, 1, round, false, 0, -1, -1, NULL), 0);
                CHECK_EQ(append_kv(l, 100, 1, 0, false, 0, -1, -1, NULL), 0);
            }
            int64_t end = floe_log_end_offset(l);
            size_t segs = floe_log_segment_count(l);
            CHECK_EQ(floe_log_flush(l, &err), 0);
            floe_log_close(l);
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) {
                floe_log_t *cl;
                floe_err_t e;
                if (floe_log_open(d, &c, &cl, &e) != 0) _exit(1);
                crash_at = stepn;
                floe_log_clean_opts_t o = {.step = crash_step, .force = true};
                floe_log_clean(cl, 5000, &o, NULL, &e);
                _exit(0);
            }
            int status = 0;
            waitpid(pid, &status, 0);
            CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 42);
            CHECK_EQ(floe_log_open(d, &c, &l, &err), 0);
            CHECK_EQ(leftovers(d), 0);
            CHECK_EQ(floe_log_end_offset(l), end);
            /* a merged group in place: fewer segments */
            if (merged && stepn >= FLOE_CLEAN_STEP_RENAMED) CHECK(floe_log_segment_count(l) < segs);
            seen_t *s = malloc(sizeof *s);
            read_all(l, s);
            check_values(s, round, true, -1);
            CHECK_STR(final_value(s, "k100"), "v0");
            /* and the cleaning finishes after the restart */
            floe_log_clean_opts_t o = {.force = true};
            CHECK_EQ(floe_log_clean(l, 5000, &o, NULL, &err), 1);
            read_all(l, s);
            check_values(s, round, true, floe_log_clean_checkpoint(l));
            if (t_checks_failed) printf("# crash at step %d (merged %d)\n", stepn, merged);
            done(l, d, s);
        }
}

/* SIGKILL a process that cleans, at random moments, between rounds of
 * new updates: whatever instant it dies at, every key keeps its latest
 * value, offsets increase and nothing is left half swapped. */
static void random_kills_lose_nothing(void)
{
    char *d;
    floe_log_config_t c = compact_cfg();
    c.delete_retention_ms = 0;
    c.min_cleanable_dirty_ratio = 0.01;
    floe_log_t *l = filled_log(&d, &c, false);
    floe_err_t err;
    floe_log_close(l);
    unsigned seed = (unsigned)getpid();
    seen_t *s = malloc(sizeof *s);
    int children_started = 0;
    for (int it = 0; it < 40; it++) {
        int round = ROUNDS + it;
        CHECK_EQ(floe_log_open(d, &c, &l, &err), 0);
        for (int k = 0; k < NKEYS; k++)
            CHECK_EQ(
                append_kv(l, k, 1, round, false, it % 2 ? FLOE_COMPRESSION_ZSTD : 0, -1, -1, NULL),
                0);
        CHECK_EQ(append_kv(l, 100 + it, 1, round, false, 0, -1, -1, NULL), 0);
        CHECK_EQ(floe_log_flush(l, &err), 0);
        floe_log_close(l);
        int pfd[2];
        if (pipe(pfd) != 0) abort();
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            close(pfd[0]);
            floe_log_t *cl;
            floe_err_t e;
            if (floe_log_open(d, &c, &cl, &e) != 0) _exit(1);
            if (write(pfd[1], "x", 1) != 1) _exit(1);
            floe_log_clean_opts_t o = {.force = true};
            for (int64_t now = 5000;; now += 1000) floe_log_clean(cl, now, &o, NULL, &e);
        }
        close(pfd[1]);
        char x;
        if (read(pfd[0], &x, 1) == 1) children_started++;
        close(pfd[0]);
        usleep((useconds_t)(rand_r(&seed) % 20000));
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        CHECK_EQ(floe_log_open(d, &c, &l, &err), 0);
        CHECK_EQ(leftovers(d), 0);
        read_all(l, s);
        check_values(s, round, false, -1);
        char k[16], v[16];
        for (int i = 0; i <= it; i++) {
            snprintf(k, sizeof k, "k%d", 100 + i);
            snprintf(v, sizeof v, "v%d", ROUNDS + i);
            CHECK_STR(final_value(s, k), v);
        }
        floe_log_close(l);
        if (t_checks_failed) {
            printf("# after kill %d\n", it);
            break;
        }
    }
    CHECK(children_started > 0);
    free(s);
    floe_test_rm_rf(d);
    free(d);
}

TEST_MAIN(floe_diag_set_level(FLOE_DIAG_WARN); RUN(latest_per_key_kept); RUN(fetch_crosses_gaps);
          RUN(tombstones_go_after_delete_retention); RUN(active_and_young_segments_untouched);
          RUN(bounded_runs); RUN(producer_sequence_survives); RUN(keyless_refused_and_policies);
          RUN(crash_at_each_step); RUN(random_kills_lose_nothing))
