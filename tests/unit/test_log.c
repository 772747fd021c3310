/* The partition log: append/read, KIP-74, roll by size and time, index
 * lookups, offset for time, retention (also under a floor), DeleteRecords,
 * flush policy, idempotent producers, restart, and the process-wide cache
 * of open segment descriptors. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/batch.h"
#include "log/log.h"
#include "log/log_int.h"
#include "test.h"
#include "util/diag.h"

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(p);
}
static void rm_rf(const char *d)
{
    nftw(d, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static char *tmpdir(void)
{
    char *d = strdup("/tmp/floe-test-log-XXXXXX");
    if (!mkdtemp(d)) abort();
    return d;
}

/* One batch of n records with values "v<offset-hint>-<i>" and timestamps
 * ts + i; idempotence fields when pid >= 0. */
static void mk(floe_buf_t *out, int n, int64_t ts, int codec, int64_t pid, int16_t epoch,
               int32_t seq)
{
    floe_batch_opts_t o;
    floe_batch_opts_default(&o);
    o.compression = codec;
    o.producer_id = pid;
    o.producer_epoch = epoch;
    o.base_sequence = seq;
    floe_batch_builder_t *b = floe_batch_builder_new(&o);
    char v[64];
    for (int i = 0; i < n; i++) {
        snprintf(v, sizeof v, "value-%lld-%d", (long long)ts, i);
        floe_slice_t s = floe_slice_str(v);
        floe_err_t err;
        if (floe_batch_builder_add(b, ts + i, &s, &s, NULL, 0, &err) != 0) abort();
    }
    floe_err_t err;
    if (floe_batch_builder_finish(b, out, &err) != 0) abort();
    floe_batch_builder_free(b);
}

static int64_t append1(floe_log_t *l, int n, int64_t ts)
{
    floe_buf_t b = FLOE_BUF_INIT;
    mk(&b, n, ts, FLOE_COMPRESSION_NONE, -1, -1, -1);
    floe_log_append_result_t r;
    floe_err_t err;
    int rc = floe_log_append(l, b.data, b.len, -1, &r, &err);
    floe_buf_free(&b);
    if (rc != 0) {
        printf("# append: %s\n", err.msg);
        return -1;
    }
    return r.base_offset;
}

/* Check that out holds whole, valid batches with consecutive offsets
 * starting at a batch containing `from`; returns the next offset. */
static int64_t check_read(const floe_buf_t *out, int64_t from)
{
    floe_batch_iter_t it;
    floe_batch_iter_init(&it, out->data, out->len);
    floe_batch_hdr_t h;
    floe_err_t err;
    int64_t next = -1;
    int rc, n = 0;
    while ((rc = floe_batch_iter_next(&it, NULL, NULL, &h, &err)) == 1) {
        if (n == 0) CHECK(h.base_offset <= from && floe_batch_last_offset(&h) >= from);
        else
            CHECK_EQ(h.base_offset, next);
        next = floe_batch_last_offset(&h) + 1;
        n++;
    }
    CHECK_EQ(rc, 0);
    return next;
}

static void append_and_read(void)
{
    char *d = tmpdir();
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, NULL, &l, &err), 0);
    CHECK_EQ(floe_log_end_offset(l), 0);
    CHECK_EQ(floe_log_start_offset(l), 0);
    for (int i = 0; i < 10; i++) CHECK_EQ(append1(l, i + 1, 1000 * i), i * (i + 1) / 2);
    CHECK_EQ(floe_log_end_offset(l), 55);
    floe_buf_t out = FLOE_BUF_INIT;
    floe_log_read_info_t info;
    for (int64_t off = 0; off < 55; off++) {
        floe_buf_reset(&out);
        CHECK_EQ(floe_log_read(l, off, 1 << 20, &out, &info, &err), 0);
        CHECK_EQ(info.high_watermark, 55);
        CHECK_EQ(info.bytes, out.len);
        CHECK_EQ(check_read(&out, off), 55);
    }
    /* at the end: nothing, no error; past it: out of range */
    floe_buf_reset(&out);
    CHECK_EQ(floe_log_read(l, 55, 1 << 20, &out, &info, &err), 0);
    CHECK_EQ(out.len, 0);
    CHECK_EQ(floe_log_read(l, 56, 1 << 20, &out, &info, &err), -1);
    CHECK_EQ(info.error_code, FLOE_LOG_KERR_OFFSET_OUT_OF_RANGE);
    CHECK_EQ(floe_log_read(l, -1, 1 << 20, &out, &info, &err), -1);
    /* KIP-74: one whole batch even when max_bytes is smaller */
    floe_buf_reset(&out);
    CHECK_EQ(floe_log_read(l, 50, 1, &out, &info, &err), 0);
    CHECK_EQ(check_read(&out, 50), 55);
    floe_buf_reset(&out);
    CHECK_EQ(floe_log_read(l, 0, 0, &out, &info, &err), 0);
    CHECK_EQ(check_read(&out, 0), 1);
    /* a budget that covers two batches exactly */
    floe_buf_reset(&out);
    CHECK_EQ(floe_log_read(l, 1, 1 << 20, &out, &info, &err), 0);
    floe_batch_hdr_t h1, h2;
    floe_batch_parse_hdr(out.data, out.len, &h1, &err);
    floe_batch_parse_hdr(out.data + floe_batch_size(&h1), out.len - floe_batch_size(&h1), &h2,
                         &err);
    size_t two = floe_batch_size(&h1) + floe_batch_size(&h2);
    floe_buf_reset(&out);
    CHECK_EQ(floe_log_read(l, 1, two, &out, &info, &err), 0);
    CHECK_EQ(out.len, two);
    floe_buf_reset(&out);
    CHECK_EQ(floe_log_read(l, 1, two - 1, &out, &info, &err), 0);
    CHECK_EQ(out.len, floe_batch_size(&h1));
    floe_log_close(l);
    /* reopen: same contents */
    CHECK_EQ(floe_log_open(d, NULL, &l, &err), 0);
    CHECK_EQ(floe_log_end_offset(l), 55);
    CHECK_EQ(floe_log_durable_offset(l), 55);
    floe_buf_reset(&out);
    CHECK_EQ(floe_log_read(l, 0, 1 << 20, &out, &info, &err), 0);
    CHECK_EQ(check_read(&out, 0), 55);
    CHECK_EQ(append1(l, 1, 0), 55);
    floe_buf_free(&out);
    CHECK_EQ(floe_log_drop(l, &err), 0);
    CHECK(access(d, F_OK) != 0);
    free(d);
}

/* How many files of dir whose name ends in ext this process maps. */
static size_t mapped_files(const char *dir, const char *ext)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    size_t n = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        size_t ll = strlen(line), el = strlen(ext);
        if (strstr(line, dir) && ll > el && !strcmp(line + ll - el, ext)) n++;
    }
    if (f) fclose(f);
    return n;
}

/* Many small segments; every offset found through the index; offset for
 * time; reopen loads the indexes; a broken index file is rebuilt. */
static void roll_by_size_and_lookups(void)
{
    char *d = tmpdir();
    floe_log_config_t cfg;
    floe_log_config_default(&cfg);
    cfg.segment_bytes = 4000;
    cfg.index_interval_bytes = 300;
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    int64_t next = 0;
    for (int i = 0; i < 200; i++) {
        /* timestamps rise with offsets, batch i starts at 10000 + 10*i */
        int n = 1 + i % 4;
        CHECK_EQ(append1(l, n, 10000 + 10 * i), next);
        next += n;
    }
    size_t nseg = floe_log_segment_count(l);
    CHECK(nseg > 5);
    CHECK_EQ(mapped_files(d, ".index"), nseg - 1); /* sealed segments: mapped */
    floe_buf_t out = FLOE_BUF_INIT;
    for (int pass = 0; pass < 4; pass++) {
        for (int64_t off = 0; off < next; off++) {
            floe_buf_reset(&out);
            CHECK_EQ(floe_log_read(l, off, 700, &out, NULL, &err), 0);
            int64_t nx = check_read(&out, off);
            CHECK(nx > off);
        }
        /* a whole read from 0 crosses all segments */
        floe_buf_reset(&out);
        CHECK_EQ(floe_log_read(l, 0, 1 << 24, &out, NULL, &err), 0);
        CHECK_EQ(check_read(&out, 0), next);
        /* offset for time: batch i holds ts 10000+10i .. +n-1 */
        int64_t o = 0;
        for (int i = 0; i < 200; i++) {
            int64_t tso;
            CHECK_EQ(floe_log_offset_for_time(l, 10000 + 10 * i, &tso), o);
            CHECK_EQ(tso, 10000 + 10 * i);
            if (i % 4 >= 1) {
                CHECK_EQ(floe_log_offset_for_time(l, 10000 + 10 * i + 1, &tso), o + 1);
            }
            /* between batches: the next batch's first record */
            CHECK_EQ(floe_log_offset_for_time(l, 10000 + 10 * i + 5, &tso),
                     o + 1 + i % 4 < next ? o + 1 + i % 4 : -1);
            o += 1 + i % 4;
        }
        CHECK_EQ(floe_log_offset_for_time(l, 0, NULL), 0);
        CHECK_EQ(floe_log_offset_for_time(l, 99999999, NULL), -1);
        floe_log_close(l);
        if (pass == 0) {
            /* a missing time index of the first segment */
            char path[512];
            CHECK_EQ(floe_segment_path(path, sizeof path, d, 0, "timeindex", NULL), 0);
            CHECK_EQ(unlink(path), 0);
        }
        if (pass == 1) {
            /* garbage in the offset index of the first segment */
            char path[512];
            CHECK_EQ(floe_segment_path(path, sizeof path, d, 0, "index", NULL), 0);
            int fd = open(path, O_WRONLY | O_TRUNC);
            CHECK(write(fd, "garbage", 7) == 7);
            close(fd);
        }
        CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
        CHECK_EQ(floe_log_segment_count(l), nseg);
        CHECK_EQ(floe_log_end_offset(l), next);
        CHECK_EQ(mapped_files(d, ".index"), nseg - 1);
        /* a clean reopen trusts the sealed indexes; each damaged one is
         * rebuilt (pass 0 removed a time index, pass 1 spoilt an index) */
        CHECK_EQ(l->rebuilt, pass < 2 ? 1 : 0);
    }
    floe_buf_free(&out);
    floe_log_close(l);
    rm_rf(d);
    free(d);
}

static int64_t fake_now = 1000000;
static int64_t fake_clock(void)
{
    return fake_now;
}

static void roll_by_time(void)
{
    char *d = tmpdir();
    floe_log_config_t cfg;
    floe_log_config_default(&cfg);
    cfg.segment_ms = 1000;
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    floe_log_set_clock(l, fake_clock);
    append1(l, 1, 1);
    fake_now += 999;
    append1(l, 1, 2);
    CHECK_EQ(floe_log_segment_count(l), 1);
    fake_now += 1;
    append1(l, 1, 3); /* the segment is 1000 ms old: roll first */
    CHECK_EQ(floe_log_segment_count(l), 2);
    fake_now += 10;
    append1(l, 1, 4);
    CHECK_EQ(floe_log_segment_count(l), 2);
    floe_log_close(l);
    rm_rf(d);
    free(d);
}

/* A log in a new temp dir (*d, caller frees) of 1000-byte segments and
 * retention.ms 5000 (cfg), holding offsets 0..199 with timestamps
 * 100000..109901. */
static floe_log_t *aging_log(char **d, floe_log_config_t *cfg)
{
    *d = tmpdir();
    floe_log_config_default(cfg);
    cfg->segment_bytes = 1000;
    cfg->retention_ms = 5000;
    floe_log_t *l = NULL;
    floe_err_t err;
    CHECK_EQ(floe_log_open(*d, cfg, &l, &err), 0);
    for (int i = 0; l && i < 100; i++) append1(l, 2, 100000 + 100 * i);
    return l;
}

static void retention(void)
{
    char *d;
    floe_log_config_t cfg;
    floe_err_t err;
    floe_log_t *l = aging_log(&d, &cfg);
    size_t n0 = floe_log_segment_count(l);
    CHECK(n0 > 4);
    /* nothing old enough */
    CHECK_EQ(floe_log_enforce_retention(l, 100000, &err), 0);
    CHECK_EQ(floe_log_segment_count(l), n0);
    /* segments whose newest record is older than now - 5000 go */
    CHECK_EQ(floe_log_enforce_retention(l, 110000, &err), 0);
    size_t n1 = floe_log_segment_count(l);
    CHECK(n1 < n0 && n1 > 1);
    int64_t start = floe_log_start_offset(l);
    CHECK(start > 0);
    /* every remaining record is newer than 110000 - 5000 - segment span */
    floe_buf_t out = FLOE_BUF_INIT;
    floe_log_read_info_t info;
    CHECK_EQ(floe_log_read(l, start - 1, 100, &out, &info, &err), -1);
    CHECK_EQ(info.error_code, FLOE_LOG_KERR_OFFSET_OUT_OF_RANGE);
    CHECK_EQ(floe_log_read(l, start, 100, &out, &info, &err), 0);
    CHECK_EQ(check_read(&out, start), check_read(&out, start));
    floe_batch_hdr_t h;
    CHECK_EQ(floe_batch_parse_hdr(out.data, out.len, &h, &err), 0);
    CHECK(h.max_timestamp > 110000 - 5000 - 1000);
    /* by bytes: keep at most ~2500 bytes (the active segment stays) */
    cfg.retention_ms = -1;
    cfg.retention_bytes = 2500;
    floe_log_set_config(l, &cfg);
    CHECK_EQ(floe_log_enforce_retention(l, 110000, &err), 0);
    CHECK(floe_log_size_bytes(l) <= 2500 + 1000);
    CHECK(floe_log_size_bytes(l) > 0);
    int64_t start2 = floe_log_start_offset(l);
    CHECK(start2 > start);
    /* everything expired: the active segment is rolled and deleted too */
    cfg.retention_ms = 5000;
    cfg.retention_bytes = -1;
    floe_log_set_config(l, &cfg);
    CHECK_EQ(floe_log_enforce_retention(l, 1000000, &err), 0);
    CHECK_EQ(floe_log_segment_count(l), 1);
    CHECK_EQ(floe_log_start_offset(l), 200);
    CHECK_EQ(floe_log_end_offset(l), 200);
    CHECK_EQ(append1(l, 1, 2000000), 200);
    floe_log_close(l);
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    CHECK_EQ(floe_log_start_offset(l), 200);
    CHECK_EQ(floe_log_end_offset(l), 201);
    floe_buf_free(&out);
    floe_log_close(l);
    rm_rf(d);
    free(d);
}

/* Retention under a floor (a table that has not taken the records yet):
 * time and size retention keep every segment holding an offset at or
 * above the floor and report the bytes they kept; a limit on those bytes
 * lets the oldest go anyway and names the offsets past the floor that
 * went; no floor is the plain retention. */
static void retention_keeps_what_the_floor_needs(void)
{
    char *d;
    floe_log_config_t cfg;
    floe_err_t err;
    floe_log_t *l = aging_log(&d, &cfg);
    size_t n0 = floe_log_segment_count(l);
    CHECK(n0 > 8);
    uint64_t size0 = floe_log_size_bytes(l);
    /* everything expired, nothing taken yet (floor 0): all kept */
    floe_log_retention_t r = {.floor = 0, .max_held_bytes = -1};
    CHECK_EQ(floe_log_enforce_retention_floor(l, 1000000, &r, &err), 0);
    CHECK_EQ(floe_log_start_offset(l), 0);
    CHECK_EQ(r.deleted_segments, 0);
    CHECK_EQ(r.skipped_from, r.skipped_to);
    /* what retention wanted: every segment, the active one rolled away */
    CHECK_EQ_U64(r.held_bytes, size0);
    CHECK_EQ_U64(floe_log_retention_held(l), size0);
    size_t n1 = floe_log_segment_count(l);
    CHECK_EQ(n1, n0 + 1); /* the rolled active one and a new empty one */
    /* the table took [0, 57): only segments wholly below 57 go */
    r = (floe_log_retention_t){.floor = 57, .max_held_bytes = -1};
    CHECK_EQ(floe_log_enforce_retention_floor(l, 1000000, &r, &err), 0);
    int64_t start = floe_log_start_offset(l);
    CHECK(start > 0 && start <= 57);
    CHECK(r.deleted_segments > 0);
    CHECK_EQ(r.skipped_from, r.skipped_to);
    CHECK_EQ_U64(r.held_bytes, floe_log_size_bytes(l));
    floe_buf_t out = FLOE_BUF_INIT;
    CHECK_EQ(floe_log_read(l, 57, 1 << 20, &out, NULL, &err), 0);
    CHECK_EQ(check_read(&out, 57), 200);
    /* a stuck table with a limit of 2500 held bytes: the oldest go down to
     * it, and the offsets past the floor that went are named */
    uint64_t before = floe_log_size_bytes(l);
    r = (floe_log_retention_t){.floor = 57, .max_held_bytes = 2500};
    CHECK_EQ(floe_log_enforce_retention_floor(l, 1000000, &r, &err), 0);
    int64_t start2 = floe_log_start_offset(l);
    CHECK(start2 > 57);
    CHECK(r.held_bytes <= 2500 && r.held_bytes > 0);
    CHECK_EQ_U64(r.held_bytes, floe_log_size_bytes(l));
    CHECK(floe_log_size_bytes(l) < before);
    CHECK_EQ(r.skipped_from, 57);
    CHECK_EQ(r.skipped_to, start2);
    /* size retention waits the same way: 500 bytes wanted, the floor at
     * the start keeps all, and reports what it kept */
    cfg.retention_ms = -1;
    cfg.retention_bytes = 500;
    floe_log_set_config(l, &cfg);
    uint64_t sz = floe_log_size_bytes(l);
    r = (floe_log_retention_t){.floor = start2, .max_held_bytes = -1};
    CHECK_EQ(floe_log_enforce_retention_floor(l, 1000000, &r, &err), 0);
    CHECK_EQ(floe_log_start_offset(l), start2);
    CHECK_EQ_U64(floe_log_size_bytes(l), sz);
    CHECK(r.held_bytes > 0 && r.held_bytes <= sz);
    /* no floor: plain retention */
    CHECK_EQ(floe_log_enforce_retention(l, 1000000, &err), 0);
    CHECK(floe_log_size_bytes(l) <= 500 + 1000);
    CHECK(floe_log_start_offset(l) > start2);
    CHECK_EQ_U64(floe_log_retention_held(l), 0);
    floe_buf_free(&out);
    floe_log_close(l);
    rm_rf(d);
    free(d);
}

static void delete_records(void)
{
    char *d = tmpdir();
    floe_log_config_t cfg;
    floe_log_config_default(&cfg);
    cfg.segment_bytes = 1000;
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    for (int i = 0; i < 50; i++) append1(l, 2, i);
    size_t n0 = floe_log_segment_count(l);
    CHECK_EQ(floe_log_delete_records(l, 101, &err), -1);
    CHECK_EQ(floe_log_delete_records(l, 37, &err), 0);
    CHECK_EQ(floe_log_start_offset(l), 37);
    CHECK(floe_log_segment_count(l) < n0);
    floe_buf_t out = FLOE_BUF_INIT;
    /* the batch holding 37 starts at 36: served whole */
    CHECK_EQ(floe_log_read(l, 37, 10, &out, NULL, &err), 0);
    CHECK_EQ(check_read(&out, 37), 38);
    CHECK_EQ(floe_log_read(l, 36, 10, &out, NULL, &err), -1);
    CHECK_EQ(floe_log_delete_records(l, 10, &err), 0); /* lower: no-op */
    CHECK_EQ(floe_log_start_offset(l), 37);
    floe_log_close(l);
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    CHECK_EQ(floe_log_start_offset(l), 37);
    CHECK_EQ(floe_log_delete_records(l, 100, &err), 0);
    CHECK_EQ(floe_log_start_offset(l), 100);
    CHECK_EQ(floe_log_offset_for_time(l, 0, NULL), -1);
    CHECK_EQ(append1(l, 1, 0), 100);
    floe_buf_free(&out);
    floe_log_close(l);
    rm_rf(d);
    free(d);
}

static void flush_policy(void)
{
    char *d = tmpdir();
    floe_log_config_t cfg;
    floe_log_config_default(&cfg);
    cfg.flush_messages = 5;
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    append1(l, 2, 0);
    CHECK_EQ(floe_log_durable_offset(l), 0);
    append1(l, 2, 0);
    CHECK_EQ(floe_log_durable_offset(l), 0);
    append1(l, 2, 0); /* 6 messages: flushed */
    CHECK_EQ(floe_log_durable_offset(l), 6);
    append1(l, 1, 0);
    CHECK_EQ(floe_log_durable_offset(l), 6);
    CHECK_EQ(floe_log_flush(l, &err), 0);
    CHECK_EQ(floe_log_durable_offset(l), 7);
    /* flush_ms through the periodic call */
    cfg.flush_messages = -1;
    cfg.flush_ms = 100;
    floe_log_set_config(l, &cfg);
    floe_log_set_clock(l, fake_clock);
    fake_now = 5000;
    CHECK_EQ(floe_log_flush(l, &err), 0);
    append1(l, 1, 0);
    CHECK_EQ(floe_log_durable_offset(l), 7);
    CHECK_EQ(floe_log_maybe_flush(l, 5050, &err), 0);
    CHECK_EQ(floe_log_durable_offset(l), 7);
    CHECK_EQ(floe_log_maybe_flush(l, 5100, &err), 0);
    CHECK_EQ(floe_log_durable_offset(l), 8);
    /* and on append once due */
    fake_now = 5300;
    append1(l, 1, 0);
    CHECK_EQ(floe_log_durable_offset(l), 9);
    floe_log_close(l);
    rm_rf(d);
    free(d);
}

static void log_append_time_and_errors(void)
{
    char *d = tmpdir();
    floe_log_config_t cfg;
    floe_log_config_default(&cfg);
    cfg.max_message_bytes = 2000;
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    floe_buf_t b = FLOE_BUF_INIT;
    floe_log_append_result_t r;
    mk(&b, 3, 10, FLOE_COMPRESSION_LZ4, -1, -1, -1);
    CHECK_EQ(floe_log_append(l, b.data, b.len, 777, &r, &err), 0);
    CHECK_EQ(r.log_append_time_ms, 777);
    floe_buf_t out = FLOE_BUF_INIT;
    CHECK_EQ(floe_log_read(l, 0, 1000, &out, NULL, &err), 0);
    floe_batch_hdr_t h;
    CHECK_EQ(floe_batch_parse_hdr(out.data, out.len, &h, &err), 0);
    CHECK(floe_batch_is_log_append_time(&h));
    CHECK_EQ(h.max_timestamp, 777);
    CHECK_EQ(h.partition_leader_epoch, 0);
    CHECK(out.len == b.len && memcmp(out.data, b.data, b.len) == 0); /* stored as patched */
    /* with LogAppendTime every record carries the broker time */
    int64_t tso;
    CHECK_EQ(floe_log_offset_for_time(l, 777, &tso), 0);
    CHECK_EQ(tso, 777);
    CHECK_EQ(floe_log_offset_for_time(l, 12, NULL), 0);
    CHECK_EQ(floe_log_offset_for_time(l, 778, NULL), -1);
    /* too large */
    floe_buf_reset(&b);
    mk(&b, 100, 10, FLOE_COMPRESSION_NONE, -1, -1, -1);
    CHECK_EQ(floe_log_append(l, b.data, b.len, -1, &r, &err), -1);
    CHECK_EQ(r.error_code, FLOE_LOG_KERR_MESSAGE_TOO_LARGE);
    /* corrupt CRC */
    floe_buf_reset(&b);
    mk(&b, 2, 10, FLOE_COMPRESSION_NONE, -1, -1, -1);
    b.data[b.len - 1] ^= 1;
    CHECK_EQ(floe_log_append(l, b.data, b.len, -1, &r, &err), -1);
    CHECK_EQ(r.error_code, FLOE_LOG_KERR_CORRUPT_MESSAGE);
    /* garbage after a good batch: nothing appended */
    floe_buf_reset(&b);
    mk(&b, 2, 10, FLOE_COMPRESSION_NONE, -1, -1, -1);
    floe_buf_append(&b, "xyz", 3);
    CHECK_EQ(floe_log_append(l, b.data, b.len, -1, &r, &err), -1);
    CHECK_EQ(r.error_code, FLOE_LOG_KERR_CORRUPT_MESSAGE);
    CHECK_EQ(floe_log_append(l, b.data, 0, -1, &r, &err), -1);
    /* two idempotent batches in one call */
    floe_buf_reset(&b);
    mk(&b, 1, 10, FLOE_COMPRESSION_NONE, 5, 0, 0);
    mk(&b, 1, 10, FLOE_COMPRESSION_NONE, 5, 0, 1);
    CHECK_EQ(floe_log_append(l, b.data, b.len, -1, &r, &err), -1);
    CHECK_EQ(r.error_code, FLOE_LOG_KERR_INVALID_RECORD);
    /* two plain batches in one call are fine */
    floe_buf_reset(&b);
    mk(&b, 2, 10, FLOE_COMPRESSION_NONE, -1, -1, -1);
    mk(&b, 3, 10, FLOE_COMPRESSION_GZIP, -1, -1, -1);
    CHECK_EQ(floe_log_append(l, b.data, b.len, -1, &r, &err), 0);
    CHECK_EQ(r.base_offset, 3);
    CHECK_EQ(r.last_offset, 7);
    CHECK_EQ(floe_log_end_offset(l), 8);
    floe_buf_free(&b);
    floe_buf_free(&out);
    floe_log_close(l);
    rm_rf(d);
    free(d);
}

static int append_idem(floe_log_t *l, int n, int64_t pid, int16_t epoch, int32_t seq,
                       floe_log_append_result_t *r)
{
    floe_buf_t b = FLOE_BUF_INIT;
    mk(&b, n, 1, FLOE_COMPRESSION_NONE, pid, epoch, seq);
    floe_err_t err;
    int rc = floe_log_append(l, b.data, b.len, -1, r, &err);
    floe_buf_free(&b);
    return rc;
}

static void idempotence(void)
{
    char *d = tmpdir();
    floe_log_config_t cfg;
    floe_log_config_default(&cfg);
    cfg.segment_bytes = 600;
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    floe_log_append_result_t r;
    append1(l, 3, 0);                               /* offsets 0..2, not idempotent */
    CHECK_EQ(append_idem(l, 2, 1000, 0, 0, &r), 0); /* 3..4  seq 0..1 */
    CHECK_EQ(r.base_offset, 3);
    CHECK_EQ(append_idem(l, 3, 1000, 0, 2, &r), 0);  /* 5..7  seq 2..4 */
    CHECK_EQ(append_idem(l, 1, 2000, 4, 17, &r), 0); /* other producer, any first seq */
    CHECK_EQ(r.base_offset, 8);
    /* retry of the first batch: acknowledged with the original offsets */
    CHECK_EQ(append_idem(l, 2, 1000, 0, 0, &r), 0);
    CHECK(r.duplicate);
    CHECK_EQ(r.base_offset, 3);
    CHECK_EQ(r.last_offset, 4);
    CHECK_EQ(floe_log_end_offset(l), 9);
    /* a gap */
    CHECK_EQ(append_idem(l, 1, 1000, 0, 6, &r), -1);
    CHECK_EQ(r.error_code, FLOE_LOG_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    /* an overlapping but different range */
    CHECK_EQ(append_idem(l, 2, 1000, 0, 1, &r), -1);
    CHECK_EQ(r.error_code, FLOE_LOG_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    /* more batches than remembered: the oldest is forgotten */
    int32_t seq = 5;
    for (int i = 0; i < 6; i++) {
        CHECK_EQ(append_idem(l, 1, 1000, 0, seq, &r), 0);
        CHECK(!r.duplicate);
        seq++;
    }
    CHECK_EQ(append_idem(l, 1, 1000, 0, 5, &r), -1); /* too old to be found */
    CHECK_EQ(r.error_code, FLOE_LOG_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ(append_idem(l, 1, 1000, 0, 6, &r), 0); /* still remembered */
    CHECK(r.duplicate);
    int64_t dup_off = r.base_offset;
    /* a new epoch must start at 0; then the old epoch is fenced */
    CHECK_EQ(append_idem(l, 1, 1000, 1, 3, &r), -1);
    CHECK_EQ(r.error_code, FLOE_LOG_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ(append_idem(l, 2, 1000, 1, 0, &r), 0);
    int64_t e1_off = r.base_offset;
    CHECK_EQ(append_idem(l, 1, 1000, 0, 11, &r), -1);
    CHECK_EQ(r.error_code, FLOE_LOG_KERR_INVALID_PRODUCER_EPOCH);
    int16_t ep;
    int32_t ls;
    CHECK_EQ(floe_log_producer_state(l, 1000, &ep, &ls), 0);
    CHECK_EQ(ep, 1);
    CHECK_EQ(ls, 1);
    CHECK(floe_log_segment_count(l) > 1);
    int64_t end = floe_log_end_offset(l);
    /* restart three ways: with the snapshot, without it (full scan),
     * with a corrupt one */
    for (int way = 0; way < 3; way++) {
        floe_log_close(l);
        char path[512];
        snprintf(path, sizeof path, "%s/producer-state", d);
        if (way == 1) CHECK_EQ(unlink(path), 0);
        if (way == 2) {
            int fd = open(path, O_WRONLY);
            CHECK(pwrite(fd, "XX", 2, 30) == 2);
            close(fd);
        }
        CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
        CHECK_EQ(l->rebuilt, 0); /* small sealed segments, no index entries */
        CHECK_EQ(floe_log_end_offset(l), end);
        CHECK_EQ(floe_log_producer_state(l, 1000, &ep, &ls), 0);
        CHECK_EQ(ep, 1);
        CHECK_EQ(ls, 1);
        CHECK_EQ(append_idem(l, 2, 1000, 1, 0, &r), 0);
        CHECK(r.duplicate);
        CHECK_EQ(r.base_offset, e1_off);
        CHECK_EQ(append_idem(l, 1, 1000, 0, 6, &r), -1);
        CHECK_EQ(r.error_code, FLOE_LOG_KERR_INVALID_PRODUCER_EPOCH);
        CHECK_EQ(append_idem(l, 1, 1000, 1, 5, &r), -1);
        CHECK_EQ(r.error_code, FLOE_LOG_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
        CHECK_EQ(append_idem(l, 1, 2000, 4, 17, &r), 0);
        CHECK(r.duplicate);
        CHECK_EQ(r.base_offset, 8);
    }
    (void)dup_off;
    /* the next in sequence goes through after all that */
    CHECK_EQ(append_idem(l, 1, 1000, 1, 2, &r), 0);
    CHECK(!r.duplicate);
    CHECK_EQ(r.base_offset, end);
    floe_log_close(l);
    rm_rf(d);
    free(d);
}

/* Producers idle past producer_id_expiration_ms are forgotten (then any
 * sequence is accepted again, as for a new producer); the expiry time
 * survives a restart through the snapshot. */
static void producer_expiry(void)
{
    char *d = tmpdir();
    floe_log_config_t cfg;
    floe_log_config_default(&cfg);
    cfg.producer_id_expiration_ms = 1000;
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    floe_log_set_clock(l, fake_clock);
    fake_now = 50000;
    floe_log_append_result_t r;
    CHECK_EQ(append_idem(l, 1, 7, 0, 0, &r), 0);
    fake_now = 50500;
    CHECK_EQ(append_idem(l, 1, 8, 0, 0, &r), 0);
    floe_log_close(l);
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    CHECK_EQ(floe_log_enforce_retention(l, 51200, &err), 0);
    CHECK_EQ(floe_log_producer_state(l, 7, NULL, NULL), -1);
    CHECK_EQ(floe_log_producer_state(l, 8, NULL, NULL), 0);
    CHECK_EQ(append_idem(l, 1, 7, 0, 9, &r), 0); /* no state: accepted */
    CHECK(!r.duplicate);
    CHECK_EQ(append_idem(l, 1, 8, 0, 9, &r), -1); /* still known: a gap */
    floe_log_close(l);
    rm_rf(d);
    free(d);
}

/* floe_log_check then floe_log_append_checked is floe_log_append in two
 * steps: a good pair of batches is appended with the same offsets, bad
 * bytes are refused by the check with floe_log_append's error codes, and
 * an idempotent retry of a checked batch is still a duplicate. */
static void check_then_append(void)
{
    char *d = tmpdir();
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, NULL, &l, &err), 0);
    floe_buf_t b = FLOE_BUF_INIT;
    mk(&b, 3, 1000, FLOE_COMPRESSION_NONE, -1, -1, -1);
    mk(&b, 2, 2000, FLOE_COMPRESSION_NONE, -1, -1, -1); /* two batches in one buffer */
    floe_log_checked_t chk;
    floe_log_append_result_t r;
    CHECK_EQ(floe_log_check(l, b.data, b.len, &chk, &r, &err), 0);
    CHECK_EQ(chk.nbatches, 2);
    CHECK_EQ(chk.nrecords, 5);
    CHECK(!chk.idempotent);
    CHECK_EQ(floe_log_end_offset(l), 0); /* a check appends nothing */
    CHECK_EQ(floe_log_append_checked(l, b.data, b.len, &chk, -1, &r, &err), 0);
    CHECK_EQ(r.base_offset, 0);
    CHECK_EQ(r.last_offset, 4);
    CHECK_EQ(append1(l, 1, 3000), 5);
    floe_buf_t out = FLOE_BUF_INIT;
    floe_log_read_info_t info;
    CHECK_EQ(floe_log_read(l, 0, 1 << 20, &out, &info, &err), 0);
    CHECK_EQ(check_read(&out, 0), 6);
    /* a flipped byte under the CRC, a cut tail */
    floe_buf_reset(&b);
    mk(&b, 2, 4000, FLOE_COMPRESSION_NONE, -1, -1, -1);
    b.data[b.len - 1] ^= 1;
    CHECK_EQ(floe_log_check(l, b.data, b.len, &chk, &r, &err), -1);
    CHECK_EQ(r.error_code, FLOE_LOG_KERR_CORRUPT_MESSAGE);
    b.data[b.len - 1] ^= 1;
    CHECK_EQ(floe_log_check(l, b.data, b.len - 1, &chk, &r, &err), -1);
    CHECK_EQ(r.error_code, FLOE_LOG_KERR_CORRUPT_MESSAGE);
    CHECK_EQ(floe_log_check(l, b.data, 0, &chk, &r, &err), -1);
    CHECK_EQ(floe_log_end_offset(l), 6);
    /* idempotent: checked, appended, then the same batch again */
    floe_buf_reset(&b);
    mk(&b, 2, 5000, FLOE_COMPRESSION_NONE, 42, 0, 0);
    floe_buf_t copy = FLOE_BUF_INIT;
    floe_buf_append(&copy, b.data, b.len);
    CHECK_EQ(floe_log_check(l, b.data, b.len, &chk, &r, &err), 0);
    CHECK(chk.idempotent);
    CHECK_EQ(floe_log_append_checked(l, b.data, b.len, &chk, -1, &r, &err), 0);
    CHECK_EQ(r.base_offset, 6);
    CHECK(!r.duplicate);
    CHECK_EQ(floe_log_check(l, copy.data, copy.len, &chk, &r, &err), 0);
    CHECK_EQ(floe_log_append_checked(l, copy.data, copy.len, &chk, -1, &r, &err), 0);
    CHECK(r.duplicate);
    CHECK_EQ(r.base_offset, 6);
    CHECK_EQ(floe_log_end_offset(l), 8);
    floe_buf_free(&copy);
    floe_buf_free(&out);
    floe_buf_free(&b);
    CHECK_EQ(floe_log_drop(l, &err), 0);
    free(d);
}

static void config_set(void)
{
    floe_log_config_t c;
    floe_log_config_default(&c);
    floe_err_t err;
    CHECK_EQ(floe_log_config_set(&c, "segment.bytes", "1048576", &err), 0);
    CHECK_EQ(c.segment_bytes, 1048576);
    CHECK_EQ(floe_log_config_set(&c, "retention.ms", "-1", &err), 0);
    CHECK_EQ(c.retention_ms, -1);
    CHECK_EQ(floe_log_config_set(&c, "flush.messages", "1", &err), 0);
    CHECK_EQ(c.flush_messages, 1);
    CHECK_EQ(floe_log_config_set(&c, "flush.ms", "9223372036854775807", &err), 0);
    CHECK_EQ(c.flush_ms, -1);
    CHECK_EQ(floe_log_config_set(&c, "segment.bytes", "abc", &err), -1);
    CHECK(strstr(err.msg, "segment.bytes") != NULL);
    CHECK_EQ(floe_log_config_set(&c, "table.enable", "true", &err), 1);
}

/* A directory so deep that its segment file names do not fit in PATH_MAX:
 * the open fails with FLOE_ERANGE instead of creating files under names
 * cut short. */
static void paths_too_long_fail_instead_of_truncating(void)
{
    char *d = tmpdir();
    char *deep = malloc(PATH_MAX);
    size_t n = (size_t)snprintf(deep, PATH_MAX, "%s", d);
    while (n < PATH_MAX - 16) { /* the directory fits, "<dir>/<20 digits>.log" not */
        size_t k = PATH_MAX - 16 - n < 200 ? PATH_MAX - 16 - n : 200;
        deep[n++] = '/';
        memset(deep + n, 'd', k);
        n += k;
        deep[n] = '\0';
    }
    floe_log_t *l = NULL;
    floe_err_t err;
    CHECK_EQ(floe_log_open(deep, NULL, &l, &err), -1);
    CHECK_EQ(err.code, FLOE_ERANGE);
    CHECK(l == NULL);
    /* nothing was created under a shortened name */
    DIR *dir = opendir(deep);
    CHECK(dir != NULL);
    int files = 0;
    struct dirent *de;
    while (dir && (de = readdir(dir)) != NULL) files += de->d_name[0] != '.';
    if (dir) closedir(dir);
    CHECK_EQ(files, 0);
    rm_rf(d);
    free(deep);
    free(d);
}

/* ---- open descriptors ----
 * A log holds none of its own once the process-wide cache has moved on
 * (index files and the directory are opened only while used); the least
 * recently used .log closes beyond the limit and opens again on its next
 * use; a segment deleted while a reader holds it stays readable; readers,
 * appenders and retention on many logs at once under a small limit read
 * exactly what was written.  These run last: they lower the limit. */

#define NLOGS 40
#define LIMIT 16 /* the smallest limit the cache takes */

/* Descriptors this process has open. */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) n += de->d_name[0] != '.';
    if (d) closedir(d);
    return n - 1; /* the one opendir holds */
}

/* One batch of n records whose values name the log and offset:
 * "L<log>-<offset>". */
static int64_t append_named(floe_log_t *l, int log, int n)
{
    int64_t base = floe_log_end_offset(l);
    floe_batch_opts_t o;
    floe_batch_opts_default(&o);
    floe_batch_builder_t *b = floe_batch_builder_new(&o);
    char v[64];
    floe_err_t err;
    for (int i = 0; i < n; i++) {
        snprintf(v, sizeof v, "L%d-%lld", log, (long long)(base + i));
        floe_slice_t s = floe_slice_str(v);
        if (floe_batch_builder_add(b, 1000 + base + i, NULL, &s, NULL, 0, &err) != 0) abort();
    }
    floe_buf_t buf = FLOE_BUF_INIT;
    if (floe_batch_builder_finish(b, &buf, &err) != 0) abort();
    floe_batch_builder_free(b);
    floe_log_append_result_t r;
    int rc = floe_log_append(l, buf.data, buf.len, -1, &r, &err);
    floe_buf_free(&buf);
    if (rc != 0) {
        printf("# append: %s\n", err.msg);
        return -1;
    }
    return r.base_offset;
}

/* Read log `log` from offset on and check that every record holds its own
 * name and offset, consecutively.  Returns the records seen, -1 on a read
 * error (*err), -2 on wrong content. */
static int64_t read_check(floe_log_t *l, int log, int64_t from, floe_err_t *err)
{
    floe_buf_t out = FLOE_BUF_INIT, scratch = FLOE_BUF_INIT;
    int64_t seen = 0, want = from;
    for (;;) {
        floe_buf_reset(&out);
        floe_log_read_info_t info;
        if (floe_log_read(l, want, 4096, &out, &info, err) != 0) {
            seen = -1;
            break;
        }
        if (out.len == 0) break;
        floe_batch_iter_t it;
        floe_batch_iter_init(&it, out.data, out.len);
        const uint8_t *b;
        size_t blen;
        floe_batch_hdr_t h;
        int rc;
        while ((rc = floe_batch_iter_next(&it, &b, &blen, &h, err)) == 1) {
            floe_slice_t recs;
            if (floe_batch_records(b, blen, &h, &scratch, 0, &recs, err) != 0) goto bad;
            floe_record_iter_t ri;
            floe_record_iter_init(&ri, &h, recs);
            floe_record_t r;
            while (floe_record_iter_next(&ri, &r, err) == 1) {
                if (r.offset < want) continue;
                char v[64];
                int n = snprintf(v, sizeof v, "L%d-%lld", log, (long long)r.offset);
                if (r.offset != want || r.value.len != (size_t)n || memcmp(r.value.ptr, v, n))
                    goto bad;
                want++;
                seen++;
            }
        }
        if (rc < 0) goto bad;
    }
    floe_buf_free(&out);
    floe_buf_free(&scratch);
    return seen;
bad:
    floe_buf_free(&out);
    floe_buf_free(&scratch);
    return -2;
}

static floe_log_t *logs[NLOGS];
static char *dirs[NLOGS];
static char *root;

static void open_all(uint64_t segment_bytes)
{
    root = tmpdir();
    floe_log_config_t cfg;
    floe_log_config_default(&cfg);
    cfg.segment_bytes = segment_bytes;
    for (int i = 0; i < NLOGS; i++) {
        dirs[i] = malloc(128);
        snprintf(dirs[i], 128, "%s/p-%d", root, i);
        floe_err_t err;
        CHECK_EQ(floe_log_open(dirs[i], &cfg, &logs[i], &err), 0);
    }
}

static void close_all(void)
{
    for (int i = 0; i < NLOGS; i++) {
        floe_log_close(logs[i]);
        free(dirs[i]);
    }
    rm_rf(root);
    free(root);
}

static bool active_open(floe_log_t *l)
{
    pthread_mutex_lock(&l->mu);
    bool open = l->segs[l->nsegs - 1]->log.fd >= 0;
    pthread_mutex_unlock(&l->mu);
    return open;
}

/* The limit holds however many logs are open, appended to and read; the
 * most recently used stay open; every log reads back what it got, also
 * after its descriptor was closed; the logs reopen from disk with the
 * same contents. */
static void least_recently_used_close_and_reopen(void)
{
    floe_log_set_max_open_files(LIMIT);
    CHECK_EQ(floe_log_max_open_files(), LIMIT);
    int fds0 = open_fds();
    open_all(1 << 20);
    CHECK(floe_log_open_files() <= LIMIT);
    CHECK(open_fds() - fds0 <= LIMIT);
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < NLOGS; i++) CHECK(append_named(logs[i], i, 5) >= 0);
    CHECK(floe_log_open_files() <= LIMIT);
    CHECK(open_fds() - fds0 <= LIMIT);
    /* touched last: the last LIMIT logs are open, the first ones not */
    for (int i = 0; i < NLOGS; i++) CHECK_EQ(active_open(logs[i]), i >= NLOGS - LIMIT);
    /* every log reads back, closed or not, in an order that evicts */
    for (int i = 0; i < NLOGS; i++) {
        floe_err_t err;
        CHECK_EQ(read_check(logs[i], i, 0, &err), 15);
        CHECK(active_open(logs[i]));
        CHECK_EQ(read_check(logs[i], i, 7, &err), 8);
    }
    CHECK(floe_log_open_files() <= LIMIT);
    CHECK(!active_open(logs[0]));
    /* reopened from disk: same contents */
    for (int i = 0; i < NLOGS; i++) {
        floe_log_close(logs[i]);
        floe_err_t err;
        CHECK_EQ(floe_log_open(dirs[i], NULL, &logs[i], &err), 0);
        CHECK_EQ(floe_log_end_offset(logs[i]), 15);
    }
    CHECK(open_fds() - fds0 <= LIMIT);
    for (int i = NLOGS; i-- > 0;) {
        floe_err_t err;
        CHECK_EQ(read_check(logs[i], i, 0, &err), 15);
    }
    close_all();
    CHECK_EQ(floe_log_open_files(), 0);
    CHECK_EQ(open_fds(), fds0);
}

/* Many sealed segments in one log, more than the limit: recovery at open,
 * reads across all of them and offset-for-time hold at most the limit
 * open (index files are mapped, not held). */
static void sealed_segments_need_no_descriptor(void)
{
    floe_log_set_max_open_files(LIMIT);
    int fds0 = open_fds();
    char *d = tmpdir();
    floe_log_config_t cfg;
    floe_log_config_default(&cfg);
    cfg.segment_bytes = 300;
    cfg.index_interval_bytes = 100;
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    for (int i = 0; i < 200; i++) CHECK(append_named(l, 7, 2) >= 0);
    size_t nsegs = floe_log_segment_count(l);
    CHECK(nsegs > 3 * LIMIT);
    CHECK(open_fds() - fds0 <= LIMIT);
    floe_log_close(l);
    CHECK_EQ(open_fds(), fds0);
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    CHECK_EQ(l->rebuilt, 0);
    CHECK_EQ(floe_log_segment_count(l), nsegs);
    CHECK(open_fds() - fds0 <= LIMIT);
    CHECK_EQ(read_check(l, 7, 0, &err), 400);
    CHECK_EQ(read_check(l, 7, 133, &err), 267);
    CHECK(open_fds() - fds0 <= LIMIT);
    int64_t ts;
    CHECK_EQ(floe_log_offset_for_time(l, 1000 + 201, &ts), 201);
    CHECK_EQ(ts, 1201);
    CHECK_EQ(floe_log_flush(l, &err), 0);
    CHECK(open_fds() - fds0 <= LIMIT);
    floe_log_close(l);
    CHECK_EQ(open_fds(), fds0);
    rm_rf(d);
    free(d);
}

/* A reader holds a sealed segment whose descriptor the cache closed; the
 * segment is deleted (DeleteRecords) meanwhile: its file is opened again
 * before it is unlinked and stays readable until the reader lets go. */
static void deleted_while_read_stays_readable(void)
{
    floe_log_set_max_open_files(LIMIT);
    char *d = tmpdir();
    floe_log_config_t cfg;
    floe_log_config_default(&cfg);
    cfg.segment_bytes = 300;
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    for (int i = 0; i < 80; i++) CHECK(append_named(l, 3, 2) >= 0);
    CHECK(floe_log_segment_count(l) > LIMIT + 2);
    /* a reader's pin on the first segment, as floe_log_read takes it */
    pthread_mutex_lock(&l->mu);
    floe_segment_t *s = l->segs[0];
    s->refs++;
    pthread_mutex_unlock(&l->mu);
    /* the others' descriptors push it out */
    CHECK_EQ(read_check(l, 3, 2, &err), 158);
    CHECK_EQ(s->log.fd, -1);
    CHECK_EQ(floe_log_delete_records(l, 80, &err), 0);
    CHECK(s->deleted);
    CHECK(s->held);
    int fd = floe_fdc_get(&s->log, &err);
    CHECK(fd >= 0);
    uint8_t hb[FLOE_BATCH_HDR_SIZE];
    floe_batch_hdr_t h;
    CHECK(fd >= 0 && pread(fd, hb, sizeof hb, 0) == (ssize_t)sizeof hb);
    CHECK_EQ(floe_batch_decode_hdr(hb, sizeof hb, &h, &err), 0);
    CHECK_EQ(h.base_offset, 0);
    if (fd >= 0) floe_fdc_put(&s->log);
    size_t open_before = floe_log_open_files();
    pthread_mutex_lock(&l->mu);
    floe_log_unpin(l, s); /* frees it, closing the held descriptor */
    pthread_mutex_unlock(&l->mu);
    CHECK_EQ(floe_log_open_files(), open_before - 1);
    floe_log_close(l);
    rm_rf(d);
    free(d);
}

/* ---- concurrency ---- */

static volatile int stop;
static int failures;
static pthread_mutex_t fmu = PTHREAD_MUTEX_INITIALIZER;

static void failed(const char *what, const char *msg)
{
    pthread_mutex_lock(&fmu);
    if (failures++ < 5) printf("# %s: %s\n", what, msg);
    pthread_mutex_unlock(&fmu);
}

static void *reader(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    while (!stop) {
        int i = (int)(rand_r(&seed) % NLOGS);
        floe_err_t err;
        int64_t start = floe_log_start_offset(logs[i]);
        int64_t n = read_check(logs[i], i, start, &err);
        /* retention may pass the start meanwhile: then out of range */
        if (n == -1 && err.code != FLOE_ERANGE) failed("read", err.msg);
        if (n == -2) failed("read", "wrong record content");
    }
    return NULL;
}

static void *appender(void *arg)
{
    (void)arg;
    for (int round = 0; !stop && round < 200; round++)
        for (int i = 0; i < NLOGS; i++)
            if (append_named(logs[i], i, 3) < 0) failed("append", "append failed");
    return NULL;
}

static void *deleter(void *arg)
{
    (void)arg;
    while (!stop) {
        for (int i = 0; i < NLOGS; i++) {
            floe_err_t err;
            int64_t end = floe_log_end_offset(logs[i]);
            if (end > 40 && floe_log_delete_records(logs[i], end - 40, &err) != 0)
                failed("delete records", err.msg);
            if (floe_log_flush(logs[i], &err) != 0) failed("flush", err.msg);
        }
        usleep(1000);
    }
    return NULL;
}

/* Readers, an appender rolling small segments and a thread deleting old
 * ones and flushing, on more logs than the limit: every record read is
 * the one written at its offset, no read or fsync fails on a closed or
 * reused descriptor, and the limit holds. */
static void concurrent_readers_while_evicting(void)
{
    floe_log_set_max_open_files(LIMIT);
    open_all(400);
    for (int i = 0; i < NLOGS; i++) CHECK(append_named(logs[i], i, 3) >= 0);
    stop = 0;
    failures = 0;
    pthread_t r[3], a, del;
    for (int k = 0; k < 3; k++) pthread_create(&r[k], NULL, reader, (void *)(uintptr_t)(k + 1));
    pthread_create(&del, NULL, deleter, NULL);
    pthread_create(&a, NULL, appender, NULL);
    pthread_join(a, NULL);
    stop = 1;
    for (int k = 0; k < 3; k++) pthread_join(r[k], NULL);
    pthread_join(del, NULL);
    CHECK_EQ(failures, 0);
    /* the threads are done: nothing is pinned, so the limit holds again */
    CHECK(floe_log_open_files() <= LIMIT);
    for (int i = 0; i < NLOGS; i++) {
        floe_err_t err;
        int64_t start = floe_log_start_offset(logs[i]);
        CHECK_EQ(floe_log_end_offset(logs[i]), 603);
        CHECK_EQ(read_check(logs[i], i, start, &err), 603 - start);
    }
    close_all();
}

TEST_MAIN(RUN(append_and_read); RUN(roll_by_size_and_lookups); RUN(roll_by_time); RUN(retention);
          RUN(retention_keeps_what_the_floor_needs); RUN(delete_records); RUN(flush_policy);
          RUN(log_append_time_and_errors); RUN(idempotence); RUN(producer_expiry); RUN(config_set);
          RUN(check_then_append); RUN(paths_too_long_fail_instead_of_truncating);
          floe_diag_set_level(FLOE_DIAG_WARN); RUN(least_recently_used_close_and_reopen);
          RUN(sealed_segments_need_no_descriptor); RUN(deleted_while_read_stays_readable);
          RUN(concurrent_readers_while_evicting))
