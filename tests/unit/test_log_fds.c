/* Open descriptors of partition logs: a log holds none of its own once
 * the process-wide cache has moved on (index files and the directory are
 * opened only while used); the least recently used .log closes beyond
 * the limit and opens again on its next use; a segment deleted while a
 * reader holds it stays readable; readers, appenders and retention on
 * many logs at once under a small limit read exactly what was written. */
#include <dirent.h>
#include <ftw.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/batch.h"
#include "log/log.h"
#include "log/log_int.h"
#include "util/diag.h"
#include "test.h"

#define NLOGS 40
#define LIMIT 16 /* the smallest limit the cache takes */

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
static char root[64];

static void open_all(uint64_t segment_bytes)
{
    snprintf(root, sizeof root, "/tmp/floe-test-logfds-XXXXXX");
    if (!mkdtemp(root)) abort();
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
    char d[64] = "/tmp/floe-test-logfds-XXXXXX";
    if (!mkdtemp(d)) abort();
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
}

/* A reader holds a sealed segment whose descriptor the cache closed; the
 * segment is deleted (DeleteRecords) meanwhile: its file is opened again
 * before it is unlinked and stays readable until the reader lets go. */
static void deleted_while_read_stays_readable(void)
{
    floe_log_set_max_open_files(LIMIT);
    char d[64] = "/tmp/floe-test-logfds-XXXXXX";
    if (!mkdtemp(d)) abort();
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

TEST_MAIN(floe_diag_set_level(FLOE_DIAG_WARN); RUN(least_recently_used_close_and_reopen);
          RUN(sealed_segments_need_no_descriptor); RUN(deleted_while_read_stays_readable);
          RUN(concurrent_readers_while_evicting))
