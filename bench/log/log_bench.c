/* Append throughput of floe's log against a raw sequential write of the
 * same bytes to one file, in the same run:
 *   fsync:   floe_log_append + floe_log_flush per batch
 *            vs write + fdatasync per batch (what acks=all durable costs)
 *   no sync: floe_log_append vs write
 * Batches: 64 records of 1 KiB, uncompressed (~66 KiB), 32 MiB per pass;
 * the best of 3 passes each.  Last line:
 *   log append_fsync_mb_s=.. raw_fsync_mb_s=.. ratio_fsync=..
 *       append_mb_s=.. raw_mb_s=.. ratio=.. read_mb_s=..
 * FLOE_BENCH_DIR picks the directory (default /var/tmp). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/batch.h"
#include "log/log.h"
#include "util/clock.h"

#define RECORDS 64
#define VALUE 1024
#define TOTAL (32u << 20)

static double run_log(const char *base, const floe_buf_t *batches, size_t bsize, bool sync)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/floe-bench-log-%d", base, (int)getpid());
    floe_log_t *l;
    floe_err_t err;
    floe_log_config_t cfg;
    floe_log_config_default(&cfg);
    if (floe_log_open(dir, &cfg, &l, &err) != 0) {
        fprintf(stderr, "open: %s\n", err.msg);
        exit(1);
    }
    uint8_t *copy = malloc(bsize);
    size_t n = batches->len / bsize;
    int64_t t0 = floe_mono_ns();
    for (size_t i = 0; i < n; i++) {
        memcpy(copy, batches->data + i * bsize, bsize); /* append patches in place */
        floe_log_append_result_t r;
        if (floe_log_append(l, copy, bsize, -1, &r, &err) != 0 ||
            (sync && floe_log_flush(l, &err) != 0)) {
            fprintf(stderr, "append: %s\n", err.msg);
            exit(1);
        }
    }
    int64_t t1 = floe_mono_ns();
    free(copy);
    floe_log_drop(l, &err);
    return (double)batches->len / 1e6 / ((double)(t1 - t0) / 1e9);
}

static double run_raw(const char *base, const floe_buf_t *batches, size_t bsize, bool sync)
{
    char path[512];
    snprintf(path, sizeof path, "%s/floe-bench-raw-%d", base, (int)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        exit(1);
    }
    size_t n = batches->len / bsize;
    int64_t t0 = floe_mono_ns();
    for (size_t i = 0; i < n; i++) {
        if (write(fd, batches->data + i * bsize, bsize) != (ssize_t)bsize ||
            (sync && fdatasync(fd) != 0)) {
            perror("write");
            exit(1);
        }
    }
    int64_t t1 = floe_mono_ns();
    close(fd);
    unlink(path);
    return (double)batches->len / 1e6 / ((double)(t1 - t0) / 1e9);
}

static double run_read(const char *base, const floe_buf_t *batches, size_t bsize)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/floe-bench-read-%d", base, (int)getpid());
    floe_log_t *l;
    floe_err_t err;
    if (floe_log_open(dir, NULL, &l, &err) != 0) exit(1);
    uint8_t *copy = malloc(bsize);
    for (size_t i = 0; i < batches->len / bsize; i++) {
        memcpy(copy, batches->data + i * bsize, bsize);
        if (floe_log_append(l, copy, bsize, -1, NULL, &err) != 0) exit(1);
    }
    free(copy);
    floe_buf_t out = FLOE_BUF_INIT;
    int64_t t0 = floe_mono_ns();
    size_t total = 0;
    for (int rep = 0; rep < 3; rep++) {
        int64_t off = 0, end = floe_log_end_offset(l);
        while (off < end) {
            floe_buf_reset(&out);
            floe_log_read_info_t info;
            if (floe_log_read(l, off, 1 << 20, &out, &info, &err) != 0) exit(1);
            /* next offset: after the last batch returned */
            size_t p = 0;
            floe_batch_hdr_t h;
            while (p < out.len && floe_batch_decode_hdr(out.data + p, out.len - p, &h, NULL) == 0) {
                off = floe_batch_last_offset(&h) + 1;
                p += floe_batch_size(&h);
            }
            total += out.len;
        }
    }
    int64_t t1 = floe_mono_ns();
    floe_buf_free(&out);
    floe_log_drop(l, &err);
    return (double)total / 1e6 / ((double)(t1 - t0) / 1e9);
}

int main(void)
{
    const char *base = getenv("FLOE_BENCH_DIR");
    if (!base) base = "/var/tmp";
    floe_buf_t batches = FLOE_BUF_INIT;
    floe_batch_builder_t *b = floe_batch_builder_new(NULL);
    uint8_t val[VALUE];
    uint32_t x = 1;
    size_t bsize = 0;
    while (batches.len < TOTAL) {
        floe_batch_builder_reset(b, NULL);
        for (int i = 0; i < RECORDS; i++) {
            for (size_t j = 0; j < VALUE; j++) {
                x = x * 1103515245 + 12345;
                val[j] = (uint8_t)(x >> 16);
            }
            floe_slice_t v = floe_slice(val, VALUE);
            floe_err_t err;
            if (floe_batch_builder_add(b, floe_wall_ms(), NULL, &v, NULL, 0, &err) != 0) return 1;
        }
        size_t before = batches.len;
        floe_err_t err;
        if (floe_batch_builder_finish(b, &batches, &err) != 0) return 1;
        bsize = batches.len - before;
    }
    floe_batch_builder_free(b);
    double best[5] = {0};
    for (int pass = 0; pass < 3; pass++) {
        double v[5] = {run_log(base, &batches, bsize, true), run_raw(base, &batches, bsize, true),
                       run_log(base, &batches, bsize, false), run_raw(base, &batches, bsize, false),
                       run_read(base, &batches, bsize)};
        for (int i = 0; i < 5; i++)
            if (v[i] > best[i]) best[i] = v[i];
        printf("pass %d: append+fsync %.0f MB/s, write+fdatasync %.0f MB/s, append %.0f MB/s, "
               "write %.0f MB/s, read %.0f MB/s\n",
               pass, v[0], v[1], v[2], v[3], v[4]);
    }
    printf("batch %zu bytes, %zu batches per pass, dir %s\n", bsize, batches.len / bsize, base);
    printf("log append_fsync_mb_s=%.0f raw_fsync_mb_s=%.0f ratio_fsync=%.2f append_mb_s=%.0f "
           "raw_mb_s=%.0f ratio=%.2f read_mb_s=%.0f\n",
           best[0], best[1], best[0] / best[1], best[2], best[3], best[2] / best[3], best[4]);
    floe_buf_free(&batches);
    return 0;
}
