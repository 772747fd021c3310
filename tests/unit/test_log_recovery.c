/* Recovery at open: a segment cut at every byte of its last batch, a
 * corrupt CRC, garbage after the data, an idempotent batch lost in the
 * torn tail; and readers and flushers running while a writer appends. */
#include <fcntl.h>
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
    char *d = strdup("/tmp/floe-test-logrec-XXXXXX");
    if (!mkdtemp(d)) abort();
    return d;
}

static void mk(floe_buf_t *out, int n, int64_t ts, int codec, int64_t pid, int32_t seq)
{
    floe_batch_opts_t o;
    floe_batch_opts_default(&o);
    o.compression = codec;
    o.producer_id = pid;
    o.producer_epoch = pid >= 0 ? 0 : -1;
    o.base_sequence = seq;
    floe_batch_builder_t *b = floe_batch_builder_new(&o);
    char v[64];
    for (int i = 0; i < n; i++) {
        snprintf(v, sizeof v, "v-%lld-%d", (long long)ts, i);
        floe_slice_t s = floe_slice_str(v);
        floe_record_header_t h = {floe_slice_str("h"), floe_slice_str("x"), false};
        floe_err_t err;
        if (floe_batch_builder_add(b, ts + i, &s, &s, &h, 1, &err) != 0) abort();
    }
    floe_err_t err;
    if (floe_batch_builder_finish(b, out, &err) != 0) abort();
    floe_batch_builder_free(b);
}

static int64_t append(floe_log_t *l, int n, int64_t ts, int codec, int64_t pid, int32_t seq,
                      bool *dup)
{
    floe_buf_t b = FLOE_BUF_INIT;
    mk(&b, n, ts, codec, pid, seq);
    floe_log_append_result_t r;
    floe_err_t err;
    int rc = floe_log_append(l, b.data, b.len, -1, &r, &err);
    floe_buf_free(&b);
    if (dup) *dup = r.duplicate;
    return rc == 0 ? r.base_offset : -1;
}

static uint8_t *slurp(const char *path, size_t *n)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    fstat(fd, &st);
    *n = (size_t)st.st_size;
    uint8_t *p = malloc(*n + 1);
    if (pread(fd, p, *n, 0) != (ssize_t)*n) abort();
    close(fd);
    return p;
}

static void put(const char *path, const uint8_t *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0644);
    if (write(fd, p, n) != (ssize_t)n) abort();
    close(fd);
}

/* Read the whole log and compare with the expected bytes. */
static void check_contents(floe_log_t *l, const uint8_t *want, size_t n)
{
    floe_buf_t out = FLOE_BUF_INIT;
    floe_err_t err;
    if (floe_log_read(l, floe_log_start_offset(l), 1 << 24, &out, NULL, &err) != 0) CHECK(0);
    CHECK_EQ(out.len, n);
    CHECK(out.len == n && memcmp(out.data, want, n) == 0);
    floe_buf_free(&out);
}

/* A log of two segments; the active one is cut at every byte of its last
 * batch.  Each time the log reopens at that batch's base offset with the
 * earlier bytes intact, and appends continue from there. */
static void torn_tail_every_byte(void)
{
    char *d = tmpdir();
    floe_log_config_t cfg;
    floe_log_config_default(&cfg);
    cfg.segment_bytes = 1500;
    cfg.index_interval_bytes = 200;
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    int codec[] = {0, 1, 2, 3, 4};
    for (int i = 0; i < 14; i++) append(l, 3, 1000 * i, codec[i % 5], -1, -1, NULL);
    CHECK_EQ(floe_log_segment_count(l), 2);
    int64_t end = floe_log_end_offset(l);
    floe_buf_t all = FLOE_BUF_INIT;
    CHECK_EQ(floe_log_read(l, 0, 1 << 24, &all, NULL, &err), 0);
    floe_log_close(l);
    /* find the active segment and its last batch */
    char path[512];
    int64_t active_base = 0;
    {
        floe_batch_iter_t it;
        floe_batch_iter_init(&it, all.data, all.len);
        floe_batch_hdr_t h;
        size_t pos = 0, seg_start = 0;
        int64_t seg_base = 0;
        while (floe_batch_iter_next(&it, NULL, NULL, &h, &err) == 1) {
            CHECK_EQ(floe_segment_path(path, sizeof path, d, h.base_offset, "log", NULL), 0);
            if (access(path, F_OK) == 0) {
                seg_base = h.base_offset;
                seg_start = pos;
            }
            pos += floe_batch_size(&h);
        }
        active_base = seg_base;
        (void)seg_start;
    }
    CHECK(active_base > 0);
    CHECK_EQ(floe_segment_path(path, sizeof path, d, active_base, "log", NULL), 0);
    size_t seglen;
    uint8_t *seg = slurp(path, &seglen);
    /* offset of the last batch inside the segment */
    size_t last_pos = 0;
    int64_t last_base = 0;
    {
        floe_batch_iter_t it;
        floe_batch_iter_init(&it, seg, seglen);
        floe_batch_hdr_t h;
        size_t pos = 0;
        while (floe_batch_iter_next(&it, NULL, NULL, &h, &err) == 1) {
            last_pos = pos;
            last_base = h.base_offset;
            pos += floe_batch_size(&h);
        }
        CHECK_EQ(pos, seglen);
    }
    size_t prefix = all.len - (seglen - last_pos); /* log bytes before the last batch */
    char ps[512];
    snprintf(ps, sizeof ps, "%s/producer-state", d);
    int reopened = 0;
    for (size_t cut = last_pos; cut < seglen; cut++) {
        put(path, seg, cut);
        unlink(ps);
        if (floe_log_open(d, &cfg, &l, &err) != 0) {
            printf("# open: %s\n", err.msg);
            CHECK(0);
            break;
        }
        CHECK_EQ(floe_log_end_offset(l), last_base);
        check_contents(l, all.data, prefix);
        if (cut == last_pos + 1) {
            /* appends continue where the good data ends */
            CHECK_EQ(append(l, 1, 5, 0, -1, -1, NULL), last_base);
        }
        floe_log_close(l);
        reopened++;
    }
    CHECK_EQ((size_t)reopened, seglen - last_pos);
    /* the whole segment back: everything is there */
    put(path, seg, seglen);
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    CHECK_EQ(floe_log_end_offset(l), end);
    check_contents(l, all.data, all.len);
    floe_log_close(l);
    /* a corrupt byte in the middle of the last batch: cut there */
    seg[last_pos + 40] ^= 0x10;
    put(path, seg, seglen);
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    CHECK_EQ(floe_log_end_offset(l), last_base);
    check_contents(l, all.data, prefix);
    floe_log_close(l);
    seg[last_pos + 40] ^= 0x10;
    /* zeros after the data (a preallocated tail) are cut too */
    uint8_t *z = calloc(1, seglen + 4096);
    memcpy(z, seg, seglen);
    put(path, z, seglen + 4096);
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    CHECK_EQ(floe_log_end_offset(l), end);
    check_contents(l, all.data, all.len);
    CHECK_EQ(floe_log_size_bytes(l), all.len);
    floe_log_close(l);
    /* a corrupt CRC in the first batch of the active segment loses the
     * whole segment's batches, nothing before it */
    seg[30] ^= 1;
    put(path, seg, seglen);
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    CHECK_EQ(floe_log_end_offset(l), active_base);
    check_contents(l, all.data, all.len - seglen);
    CHECK_EQ(append(l, 1, 5, 0, -1, -1, NULL), active_base);
    floe_log_close(l);
    /* leftovers are cleaned: an orphan index and a tmp file */
    char orphan[600];
    CHECK_EQ(floe_segment_path(orphan, sizeof orphan, d, 999999, "index", NULL), 0);
    put(orphan, (const uint8_t *)"x", 1);
    snprintf(orphan + strlen(orphan), 8, ".tmp");
    put(orphan, (const uint8_t *)"x", 1);
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    CHECK(access(orphan, F_OK) != 0);
    orphan[strlen(orphan) - 4] = 0;
    CHECK(access(orphan, F_OK) != 0);
    floe_log_close(l);
    free(z);
    free(seg);
    floe_buf_free(&all);
    rm_rf(d);
    free(d);
}

/* A sealed segment cut at its tail (its index still plausible) is noticed
 * at open and recovered: the torn batch is dropped, a read of its offsets
 * moves on to the next segment, nothing else changes. */
static void sealed_segment_cut(void)
{
    char *d = tmpdir();
    floe_log_config_t cfg;
    floe_log_config_default(&cfg);
    cfg.segment_bytes = 1500;
    cfg.index_interval_bytes = 200;
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    for (int i = 0; i < 30; i++) append(l, 3, 1000 * i, 0, -1, -1, NULL);
    CHECK(floe_log_segment_count(l) >= 3);
    int64_t end = floe_log_end_offset(l);
    floe_log_close(l);
    /* the first segment: find its last batch */
    char path[512];
    CHECK_EQ(floe_segment_path(path, sizeof path, d, 0, "log", NULL), 0);
    size_t n;
    uint8_t *seg = slurp(path, &n);
    floe_batch_iter_t it;
    floe_batch_iter_init(&it, seg, n);
    floe_batch_hdr_t h, last;
    memset(&last, 0, sizeof last);
    while (floe_batch_iter_next(&it, NULL, NULL, &h, &err) == 1) last = h;
    int64_t next_base = floe_batch_last_offset(&last) + 1;
    put(path, seg, n - 10);
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    CHECK_EQ(floe_log_end_offset(l), end);
    floe_buf_t out = FLOE_BUF_INIT;
    CHECK_EQ(floe_log_read(l, last.base_offset - 1, 1, &out, NULL, &err), 0);
    CHECK_EQ(floe_batch_parse_hdr(out.data, out.len, &h, &err), 0);
    CHECK_EQ(floe_batch_last_offset(&h), last.base_offset - 1);
    floe_buf_reset(&out);
    CHECK_EQ(floe_log_read(l, last.base_offset, 1, &out, NULL, &err), 0);
    CHECK_EQ(floe_batch_parse_hdr(out.data, out.len, &h, &err), 0);
    CHECK_EQ(h.base_offset, next_base);
    floe_buf_free(&out);
    floe_log_close(l);
    free(seg);
    rm_rf(d);
    free(d);
}

/* An idempotent batch lost in a torn tail must not be remembered: its
 * retry is appended, not answered as a duplicate. */
static void torn_tail_forgets_lost_idempotent_batch(void)
{
    char *d = tmpdir();
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, NULL, &l, &err), 0);
    bool dup;
    CHECK_EQ(append(l, 2, 1, 0, 42, 0, &dup), 0);
    CHECK_EQ(append(l, 2, 1, 0, 42, 2, &dup), 2);
    CHECK_EQ(append(l, 2, 1, 0, 42, 4, &dup), 4);
    floe_log_close(l); /* writes a snapshot covering all three */
    char path[512];
    CHECK_EQ(floe_segment_path(path, sizeof path, d, 0, "log", NULL), 0);
    size_t n;
    uint8_t *seg = slurp(path, &n);
    put(path, seg, n - 3);
    CHECK_EQ(floe_log_open(d, NULL, &l, &err), 0);
    CHECK_EQ(floe_log_end_offset(l), 4);
    int32_t ls;
    CHECK_EQ(floe_log_producer_state(l, 42, NULL, &ls), 0);
    CHECK_EQ(ls, 3);
    CHECK_EQ(append(l, 2, 1, 0, 42, 4, &dup), 4);
    CHECK(!dup);
    CHECK_EQ(append(l, 2, 1, 0, 42, 2, &dup), 2);
    CHECK(dup);
    floe_log_close(l);
    free(seg);
    rm_rf(d);
    free(d);
}

typedef struct shared {
    floe_log_t *l;
    _Atomic int done;
    _Atomic int errors;
    _Atomic long reads;
} shared_t;

/* The end of the appends: once the readers read at least once (a loaded
 * machine may start them late; 60 s at most, a hang guard), they stop. */
static void stop_readers(shared_t *s)
{
    for (int i = 0; i < 60000 && s->reads == 0; i++) usleep(1000);
    s->done = 1;
}

static void *reader(void *arg)
{
    shared_t *s = arg;
    floe_buf_t out = FLOE_BUF_INIT;
    int64_t off = 0;
    while (!s->done || off < floe_log_end_offset(s->l)) {
        floe_buf_reset(&out);
        floe_err_t err;
        if (floe_log_read(s->l, off, 3000, &out, NULL, &err) != 0) {
            printf("# read at %lld: %s\n", (long long)off, err.msg);
            s->errors++;
            break;
        }
        floe_batch_iter_t it;
        floe_batch_iter_init(&it, out.data, out.len);
        floe_batch_hdr_t h;
        int rc;
        while ((rc = floe_batch_iter_next(&it, NULL, NULL, &h, &err)) == 1) {
            if (h.base_offset != off) {
                printf("# read at %lld: batch at %lld\n", (long long)off, (long long)h.base_offset);
                s->errors++;
            }
            off = floe_batch_last_offset(&h) + 1;
        }
        if (rc != 0) {
            printf("# read at %lld: %s\n", (long long)off, err.msg);
            s->errors++;
        }
        s->reads++;
    }
    floe_buf_free(&out);
    return NULL;
}

static void *flusher(void *arg)
{
    shared_t *s = arg;
    while (!s->done) {
        floe_err_t err;
        if (floe_log_flush(s->l, &err) != 0) {
            printf("# flush: %s\n", err.msg);
            s->errors++;
        }
        int64_t dur = floe_log_durable_offset(s->l);
        if (dur > floe_log_end_offset(s->l)) s->errors++;
    }
    return NULL;
}

static void concurrent_readers_and_flushers(void)
{
    char *d = tmpdir();
    floe_log_config_t cfg;
    floe_log_config_default(&cfg);
    cfg.segment_bytes = 20000;
    cfg.retention_bytes = -1;
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    shared_t s = {l, 0, 0, 0};
    pthread_t r1, r2, f;
    pthread_create(&r1, NULL, reader, &s);
    pthread_create(&r2, NULL, reader, &s);
    pthread_create(&f, NULL, flusher, &s);
    int64_t next = 0;
    for (int i = 0; i < 2000; i++) {
        int n = 1 + i % 5;
        int64_t b = append(l, n, i, i % 5, -1, -1, NULL);
        if (b != next) CHECK_EQ(b, next);
        next += n;
    }
    stop_readers(&s);
    pthread_join(r1, NULL);
    pthread_join(r2, NULL);
    pthread_join(f, NULL);
    CHECK_EQ(s.errors, 0);
    CHECK(s.reads > 0);
    CHECK(floe_log_segment_count(l) > 10);
    CHECK_EQ(floe_log_flush(l, &err), 0);
    CHECK_EQ(floe_log_durable_offset(l), next);
    floe_log_close(l);
    rm_rf(d);
    free(d);
}

/* Retention deletes segments while readers are inside them: each read
 * either completes on the (unlinked) file or, when the start moved first,
 * says out of range; nothing else. */
static void *tail_reader(void *arg)
{
    shared_t *s = arg;
    floe_buf_t out = FLOE_BUF_INIT;
    while (!s->done) {
        floe_log_read_info_t info;
        floe_err_t err;
        floe_buf_reset(&out);
        int64_t st = floe_log_start_offset(s->l);
        if (floe_log_read(s->l, st, 100000, &out, &info, &err) != 0) {
            if (info.error_code != FLOE_LOG_KERR_OFFSET_OUT_OF_RANGE) s->errors++;
            continue;
        }
        floe_batch_iter_t it;
        floe_batch_iter_init(&it, out.data, out.len);
        int rc;
        while ((rc = floe_batch_iter_next(&it, NULL, NULL, NULL, &err)) == 1) {
        }
        if (rc != 0) s->errors++;
        s->reads++;
    }
    floe_buf_free(&out);
    return NULL;
}

static void retention_under_readers(void)
{
    char *d = tmpdir();
    floe_log_config_t cfg;
    floe_log_config_default(&cfg);
    cfg.segment_bytes = 5000;
    cfg.retention_bytes = 20000;
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, &cfg, &l, &err), 0);
    shared_t s = {l, 0, 0, 0};
    pthread_t r1, r2;
    pthread_create(&r1, NULL, tail_reader, &s);
    pthread_create(&r2, NULL, tail_reader, &s);
    int64_t next = 0;
    for (int i = 0; i < 3000; i++) {
        int64_t b = append(l, 2, i, 0, -1, -1, NULL);
        if (b != next) CHECK_EQ(b, next);
        next += 2;
        if (i % 10 == 0) CHECK_EQ(floe_log_enforce_retention(l, 0, &err), 0);
    }
    stop_readers(&s);
    pthread_join(r1, NULL);
    pthread_join(r2, NULL);
    CHECK_EQ(s.errors, 0);
    CHECK(s.reads > 0);
    CHECK(floe_log_size_bytes(l) < 30000);
    CHECK(floe_log_start_offset(l) > 0);
    floe_log_close(l);
    rm_rf(d);
    free(d);
}

TEST_MAIN(RUN(torn_tail_every_byte); RUN(sealed_segment_cut);
          RUN(torn_tail_forgets_lost_idempotent_batch); RUN(concurrent_readers_and_flushers);
          RUN(retention_under_readers))
