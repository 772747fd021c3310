/* bench/parquet: write the same 1M "events" rows from memory with zstd,
 * once with floe's Parquet writer and once with DuckDB (one thread, from an
 * in-memory table loaded from the same rows, timing only the COPY), and
 * print rows/s, output bytes and the ratios.  Last line:
 *   parquet rows=... floe_rows_per_s=... duckdb_rows_per_s=... speed_ratio=...
 *           floe_rows_per_cpu_s=... duckdb_rows_per_cpu_s=... cpu_speed_ratio=...
 *           floe_bytes=... duckdb_bytes=... size_ratio=...
 *           l1_speed_ratio=... l1_cpu_speed_ratio=... l1_size_ratio=...
 * floe runs with its defaults (zstd level 1), DuckDB with its defaults
 * (zstd level 3); the l1_* ratios compare with DuckDB at level 1 too.
 * Wall-clock rates are best of five (floe) / three (DuckDB) runs; the CPU
 * rates (process CPU time) are steadier on a shared machine.
 * Usage: bench_parquet [ROWS]   (FLOE_ROOT locates tests/interop for node) */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "format/parquet.h"
#include "util/clock.h"

typedef struct events {
    size_t n;
    int64_t *user_id, *ts, *seq;
    double *amount;
    floe_slice_t *event, *url, *session, *country, *device;
    char *arena;
} events_t;

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const char *const EVENTS[] = {"page_view", "page_view",   "page_view", "click",  "click",
                                     "search",    "add_to_cart", "purchase",  "signup", "logout"};
static const char *const COUNTRIES[] = {"US", "US", "US", "DE", "GB", "FR", "IN", "BR", "JP", "CA",
                                        "AU", "ES", "IT", "NL", "SE", "MX", "KR", "PL", "CH", "BE"};
static const char *const DEVICES[] = {"desktop", "mobile", "mobile", "tablet", "tv"};
static const char *const CATS[] = {"shoes",  "shirts",  "pants",  "hats",  "bags",  "watches",
                                   "phones", "laptops", "books",  "toys",  "games", "music",
                                   "garden", "kitchen", "sports", "beauty"};

static void gen(events_t *e, size_t n)
{
    e->n = n;
    e->user_id = malloc(n * 8);
    e->ts = malloc(n * 8);
    e->seq = malloc(n * 8);
    e->amount = malloc(n * 8);
    e->event = malloc(n * sizeof(floe_slice_t));
    e->url = malloc(n * sizeof(floe_slice_t));
    e->session = malloc(n * sizeof(floe_slice_t));
    e->country = malloc(n * sizeof(floe_slice_t));
    e->device = malloc(n * sizeof(floe_slice_t));
    e->arena = malloc(n * 80);
    char *a = e->arena;
    int64_t ts = 1704067200000000ll; /* 2024-01-01 */
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        e->user_id[i] = 1 + (int64_t)(r % 100000);
        ts += 1000 + (int64_t)((r >> 20) % 1000);
        e->ts[i] = ts;
        e->seq[i] = (int64_t)i;
        e->amount[i] = (double)((r >> 30) % 50000) / 100.0;
        e->event[i] = floe_slice_str(EVENTS[(r >> 40) % 10]);
        e->country[i] = floe_slice_str(COUNTRIES[(r >> 44) % 20]);
        e->device[i] = floe_slice_str(DEVICES[(r >> 50) % 5]);
        int len = sprintf(a, "https://shop.example.com/%s/item-%u", CATS[(r >> 54) % 16],
                          (unsigned)((rnd() >> 7) % 2000));
        e->url[i] = floe_slice(a, (size_t)len);
        a += len;
        uint64_t s1 = rnd(), s2 = rnd();
        for (int k = 0; k < 16; k++) {
            a[k] = hex[(s1 >> (4 * k)) & 15];
            a[16 + k] = hex[(s2 >> (4 * k)) & 15];
        }
        e->session[i] = floe_slice(a, 32);
        a += 32;
    }
}

static void add(floe_pq_schema_t *s, const char *name, floe_pq_phys_t p, floe_pq_logical_t lt,
                int id)
{
    floe_pq_node_t n = floe_pq_leaf(name, FLOE_PQ_REQUIRED, p, id);
    n.logical = lt;
    floe_err_t err;
    if (floe_pq_schema_add(s, &n, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
}

/* Write all rows in batches of 64K (as the table engine would flush). */
static int write_floe(const events_t *e, const char *path, floe_codec_t codec, uint64_t *bytes,
                      double *secs, double *cpu)
{
    floe_pq_schema_t *s = floe_pq_schema_new();
    add(s, "user_id", FLOE_PQ_INT64, FLOE_PQ_LT_NONE, 1);
    add(s, "ts", FLOE_PQ_INT64, FLOE_PQ_LT_TIMESTAMP, 2);
    add(s, "event", FLOE_PQ_BYTE_ARRAY, FLOE_PQ_LT_STRING, 3);
    add(s, "url", FLOE_PQ_BYTE_ARRAY, FLOE_PQ_LT_STRING, 4);
    add(s, "amount", FLOE_PQ_DOUBLE, FLOE_PQ_LT_NONE, 5);
    add(s, "session_id", FLOE_PQ_BYTE_ARRAY, FLOE_PQ_LT_STRING, 6);
    add(s, "country", FLOE_PQ_BYTE_ARRAY, FLOE_PQ_LT_STRING, 7);
    add(s, "device", FLOE_PQ_BYTE_ARRAY, FLOE_PQ_LT_STRING, 8);
    add(s, "seq", FLOE_PQ_INT64, FLOE_PQ_LT_NONE, 9);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return -1;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    floe_err_t err;
    floe_pq_write_opts_t o = floe_pq_write_opts_default();
    o.codec = codec;
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    floe_pq_writer_t *w = floe_pq_writer_new(s, &o, floe_pq_sink_file, f, &err);
    int rc = w ? 0 : -1;
    for (size_t at = 0; at < e->n && !rc; at += 65536) {
        size_t k = e->n - at < 65536 ? e->n - at : 65536;
        rc |= floe_pq_write_column(w, 0, k, NULL, NULL, e->user_id + at, k, &err);
        rc |= floe_pq_write_column(w, 1, k, NULL, NULL, e->ts + at, k, &err);
        rc |= floe_pq_write_column(w, 2, k, NULL, NULL, e->event + at, k, &err);
        rc |= floe_pq_write_column(w, 3, k, NULL, NULL, e->url + at, k, &err);
        rc |= floe_pq_write_column(w, 4, k, NULL, NULL, e->amount + at, k, &err);
        rc |= floe_pq_write_column(w, 5, k, NULL, NULL, e->session + at, k, &err);
        rc |= floe_pq_write_column(w, 6, k, NULL, NULL, e->country + at, k, &err);
        rc |= floe_pq_write_column(w, 7, k, NULL, NULL, e->device + at, k, &err);
        rc |= floe_pq_write_column(w, 8, k, NULL, NULL, e->seq + at, k, &err);
        if (!rc) rc = floe_pq_writer_rows(w, k, &err);
    }
    if (!rc) rc = floe_pq_writer_close(w, &err);
    if (fflush(f) != 0) rc = -1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    *cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
    if (rc) fprintf(stderr, "floe write failed: %s\n", err.msg);
    *bytes = w ? floe_pq_writer_bytes(w) : 0;
    *secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    floe_pq_writer_free(w);
    fclose(f);
    floe_pq_schema_free(s);
    return rc;
}

int main(int argc, char **argv)
{
    size_t rows = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
    const char *root = getenv("FLOE_ROOT");
    if (root && strlen(root) >= PATH_MAX - 64) root = NULL;
    char rootbuf[PATH_MAX];
    if (!root) {
        /* build/bench/parquet/bench_parquet -> the checkout */
        char exe[PATH_MAX];
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (k <= 0) {
            fprintf(stderr, "cannot locate the checkout; set FLOE_ROOT\n");
            return 1;
        }
        exe[k] = 0;
        snprintf(rootbuf, sizeof rootbuf, "%s", dirname(dirname(dirname(dirname(exe)))));
        root = rootbuf;
    }
    char dir[] = "/tmp/floe-bench-parquet-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    events_t e;
    gen(&e, rows);
    char path[512], plain[512];
    snprintf(path, sizeof path, "%s/floe.parquet", dir);
    snprintf(plain, sizeof plain, "%s/source.parquet", dir);
    uint64_t bytes, pbytes;
    double secs, psecs, cpu, pcpu;
    /* an uncompressed copy is DuckDB's source table (loaded, not timed) */
    if (write_floe(&e, plain, FLOE_CODEC_NONE, &pbytes, &psecs, &pcpu) < 0) return 1;
    double best = 1e9, best_cpu = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        if (write_floe(&e, path, FLOE_CODEC_ZSTD, &bytes, &secs, &cpu) < 0) return 1;
        if (secs < best) best = secs;
        if (cpu < best_cpu) best_cpu = cpu;
    }
    double floe_rps = (double)rows / best, floe_cpu_rps = (double)rows / best_cpu;
    printf("floe: %zu rows in %.3f s wall (%.3f s cpu) = %.0f rows/s (%.0f per cpu-s), %llu bytes "
           "(zstd)\n",
           rows, best, best_cpu, floe_rps, floe_cpu_rps, (unsigned long long)bytes);
    fflush(stdout);
    char cmd[3 * PATH_MAX];
    snprintf(
        cmd, sizeof cmd,
        "cd '%s/tests/interop' && node '%s/bench/parquet/duckdb_copy.mjs' '%s' '%s/duck.parquet'",
        root, root, plain, dir);
    FILE *p = popen(cmd, "r");
    double duck_secs = 0, duck_cpu = 0, l1_secs = 0, l1_cpu = 0;
    unsigned long long duck_bytes = 0, l1_bytes = 0;
    char line[512];
    while (p && fgets(line, sizeof line, p)) {
        fputs(line, stdout);
        sscanf(line, "duckdb secs=%lf cpu=%lf bytes=%llu", &duck_secs, &duck_cpu, &duck_bytes);
        sscanf(line, "duckdb_level1 secs=%lf cpu=%lf bytes=%llu", &l1_secs, &l1_cpu, &l1_bytes);
    }
    int prc = p ? pclose(p) : -1;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    if (prc != 0 || duck_secs <= 0 || duck_cpu <= 0 || duck_bytes == 0 || l1_secs <= 0 ||
        l1_cpu <= 0 || !l1_bytes) {
        fprintf(stderr, "duckdb run failed\n");
        return 1;
    }
    printf("same zstd level (1): floe/duckdb speed %.2f (cpu %.2f), size %.3f\n", l1_secs / best,
           l1_cpu / best_cpu, (double)bytes / (double)l1_bytes);
    double duck_rps = (double)rows / duck_secs, duck_cpu_rps = (double)rows / duck_cpu;
    printf("parquet rows=%zu floe_rows_per_s=%.0f duckdb_rows_per_s=%.0f speed_ratio=%.2f "
           "floe_rows_per_cpu_s=%.0f duckdb_rows_per_cpu_s=%.0f cpu_speed_ratio=%.2f "
           "floe_bytes=%llu duckdb_bytes=%llu size_ratio=%.3f "
           "l1_speed_ratio=%.2f l1_cpu_speed_ratio=%.2f l1_size_ratio=%.3f\n",
           rows, floe_rps, duck_rps, floe_rps / duck_rps, floe_cpu_rps, duck_cpu_rps,
           floe_cpu_rps / duck_cpu_rps, (unsigned long long)bytes, duck_bytes,
           (double)bytes / (double)duck_bytes, l1_secs / best, l1_cpu / best_cpu,
           (double)bytes / (double)l1_bytes);
    free(e.user_id);
    free(e.ts);
    free(e.seq);
    free(e.amount);
    free(e.event);
    free(e.url);
    free(e.session);
    free(e.country);
    free(e.device);
    free(e.arena);
    return 0;
}
