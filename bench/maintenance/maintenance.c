/* bench/maintenance (compaction part): many small data files into one, on
 * one core, floe's rewriter against DuckDB.
 *
 * Generates FLOE_MAINT_FILES (default 200) small Parquet data files of
 * about FLOE_MAINT_FILE_MB (default 1.5) each, as a table topic's engine
 * writes them: event JSON records with their `_kafka` columns (partition,
 * offset, timestamp, key, headers) through the JSON converter and the
 * table's data-file writer (zstd level 1).  Then compacts them into one
 * zstd file with floe's rewriter (iceberg/rewrite.h: reads each file
 * through the FileIO, writes through it, fsync included) and with DuckDB
 * (`SET threads=1`; COPY (SELECT * FROM read_parquet([...])) TO ...
 * (FORMAT parquet, COMPRESSION zstd)), in alternating rounds
 * (FLOE_MAINT_ROUNDS, default 3; floe compacts twice a round, then once
 * more with every chunk decoded, DuckDB once), and prints each side's best
 * MB/s of input bytes, output bytes and ratios.
 * Last line: maintenance files=... input_mb=... rows=... compact_mb_s=...
 * duckdb_mb_s=... ratio=... cpu_ratio=... decoded_mb_s=... decoded_ratio=...
 * floe_bytes=... duckdb_bytes=... bytes_ratio=...
 * Usage: maintenance [DIR gen | DIR floe-only]  (write the inputs to DIR;
 * time floe's side alone on them, for profiling; FLOE_MAINT_DECODE=1:
 * every chunk decoded) */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "iceberg/metadata.h"
#include "iceberg/read.h"
#include "iceberg/rewrite.h"
#include "table/convert.h"
#include "table/datafile.h"
#include "table/sink.h"
#include "table/schema_map.h"
#include "table/source_batches.h"
#include "util/clock.h"

#include "../duckdb_run.h"
#include "../xorshift.h"
#define next bench_next

static double cpu_secs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One event record, as a producer of a table topic sends it. */
static void event(floe_conv_t *c, int64_t off, int64_t ts, char *json, size_t cap)
{
    static const char *events[] = {"view", "click", "purchase", "signup", "logout", "search"};
    static const char *countries[] = {"US", "DE", "FR", "JP", "BR", "IN", "GB", "CA", "MX", "KR"};
    static const char *devices[] = {"mobile", "desktop", "tablet"};
    char sid[33], key[32];
    for (int k = 0; k < 32; k++) sid[k] = "0123456789abcdef"[next() & 15];
    sid[32] = 0;
    unsigned long long user = next() % 100000;
    int n = snprintf(json, cap,
                     "{\"user_id\":%llu,\"ts\":%lld,\"event\":\"%s\",\"url\":\"https://"
                     "shop.example/p/%llu?ref=%s\","
                     "\"amount\":%llu.%02llu,\"session_id\":\"%s\",\"country\":\"%s\","
                     "\"device\":\"%s\",\"seq\":%lld}",
                     user, (long long)ts, events[next() % 6], (unsigned long long)(next() % 5000),
                     countries[next() % 10], (unsigned long long)(next() % 1000),
                     (unsigned long long)(next() % 100), sid, countries[next() % 10],
                     devices[next() % 3], (long long)off);
    int kn = snprintf(key, sizeof key, "user-%llu", user);
    /* headers in the record wire form: zigzag varint lengths */
    uint8_t hdr[64];
    size_t h = 0;
    hdr[h++] = 2 * 6;
    memcpy(hdr + h, "source", 6);
    h += 6;
    hdr[h++] = 2 * 3;
    memcpy(hdr + h, "web", 3);
    h += 3;
    hdr[h++] = 2 * 5;
    memcpy(hdr + h, "trace", 5);
    h += 5;
    hdr[h++] = 2 * 16;
    for (int k = 0; k < 16; k++) hdr[h++] = (uint8_t) "0123456789abcdef"[next() & 15];
    floe_record_t r = {.offset = off,
                       .timestamp = ts,
                       .key = floe_slice(key, (size_t)kn),
                       .value = floe_slice(json, (size_t)n),
                       .header_count = 2,
                       .headers_raw = floe_slice(hdr, h)};
    floe_tmsg_t m;
    floe_tmsg_from_record(&m, &r);
    floe_conv_stage_t st;
    floe_err_t e;
    if (floe_conv_record(c, 0, &m, &st, &e) < 0) {
        fprintf(stderr, "convert: %s\n", e.msg);
        exit(1);
    }
}

typedef struct table {
    floe_ice_schema_t *schema;
    char *schema_json;
    floe_ice_data_file_t *files;
    size_t nfiles;
    int64_t rows, bytes;
} table_t;

/* The small files, as the engine writes them: the L1 buffer drained to the
 * file's writer every FLOE_TSINK_DRAIN_BYTES, one row group per file.  The
 * first file, of 10,000 rows, sizes the others' row count. */
static int generate(floe_fileio_t *io, const char *dir, size_t nfiles, double file_mb, table_t *t)
{
    floe_err_t e;
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_conv_t *c = floe_conv_new(rows, FLOE_CONV_JSON, FLOE_CONV_STRING, &e);
    int32_t last = 0;
    t->schema = floe_ice_schema_new(0, floe_ice_type_struct());
    t->files = calloc(nfiles, sizeof *t->files);
    char json[1024], path[512];
    int64_t off = 0, ts = 1764633600000LL, per_file = 10000;
    for (size_t i = 0; i < nfiles; i++) {
        floe_dfw_t *w = NULL;
        snprintf(path, sizeof path, "%s/in-%05zu.parquet", dir, i);
        for (int64_t k = 0; k < per_file; k++) {
            ts += (int64_t)(next() % 20);
            event(c, off++, ts, json, sizeof json);
            if (floe_rows_bytes(rows) < FLOE_TSINK_DRAIN_BYTES && k + 1 < per_file) continue;
            if (!w) {
                bool changed;
                if (floe_tschema_merge(rows, t->schema, &last, false, &changed, &e) < 0) goto fail;
                if (!t->schema_json && !(t->schema_json = floe_ice_schema_to_json(t->schema, &e)))
                    goto fail;
                floe_dfw_opts_t o = {.codec = FLOE_CODEC_ZSTD, .level = 1};
                if (!(w = floe_dfw_open(io, path, rows, t->schema_json, &o, &e))) goto fail;
            }
            if (floe_dfw_append(w, rows, &e) < 0) goto fail;
            floe_rows_clear(rows);
        }
        if (floe_dfw_close(w, &t->files[i], &e) < 0) goto fail;
        if (i == 0) per_file = (int64_t)(per_file * file_mb * 1e6 / (double)t->files[0].file_size);
        t->nfiles++;
        t->rows += t->files[i].record_count;
        t->bytes += t->files[i].file_size;
    }
    floe_conv_free(c);
    floe_rows_free(rows);
    return 0;
fail:
    fprintf(stderr, "generate: %s\n", e.msg);
    return -1;
}

static char *one_name(void *ctx, unsigned seq, floe_err_t *err)
{
    (void)seq;
    char *p = strdup(ctx);
    if (!p) floe_err_oom(err);
    return p;
}

/* floe's side: every input into one zstd file, one thread. */
static int floe_compact(floe_fileio_t *io, const table_t *t, const char *out, bool decode_all,
                        double *secs, double *cpu, int64_t *bytes)
{
    unlink(out);
    floe_ice_rewrite_input_t *in = calloc(t->nfiles, sizeof *in);
    for (size_t i = 0; i < t->nfiles; i++) in[i].file = &t->files[i];
    floe_ice_rewrite_opts_t o = floe_ice_rewrite_opts_default();
    o.decode_all = decode_all;
    floe_ice_data_file_t *outs;
    size_t nout;
    floe_err_t e;
    int64_t t0 = floe_mono_ns();
    double c0 = cpu_secs();
    int rc =
        floe_ice_rewrite(io, t->schema, in, t->nfiles, one_name, (void *)out, &o, &outs, &nout, &e);
    *secs = (double)(floe_mono_ns() - t0) / 1e9;
    *cpu = cpu_secs() - c0;
    free(in);
    if (rc < 0) {
        fprintf(stderr, "floe compaction: %s\n", e.msg);
        return -1;
    }
    if (nout != 1 || outs[0].record_count != t->rows) {
        fprintf(stderr, "floe compaction: %zu outputs, %lld rows of %lld\n", nout,
                nout ? (long long)outs[0].record_count : 0LL, (long long)t->rows);
        return -1;
    }
    *bytes = outs[0].file_size;
    floe_ice_data_file_clear(&outs[0]);
    free(outs);
    return 0;
}

/* Reload the inputs of a generated DIR (profiling runs). */
static int load(floe_fileio_t *io, const char *dir, table_t *t)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *de;
    char **names = NULL;
    size_t n = 0;
    while ((de = readdir(d)))
        if (!strncmp(de->d_name, "in-", 3)) {
            names = realloc(names, (n + 1) * sizeof *names);
            names[n++] = strdup(de->d_name);
        }
    closedir(d);
    t->files = calloc(n ? n : 1, sizeof *t->files);
    for (size_t i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        floe_buf_t b = FLOE_BUF_INIT;
        floe_err_t e;
        floe_pq_reader_t *r = floe_ice_parquet_open(io, path, &b, &e);
        if (!r) return -1;
        if (!t->schema) {
            const char *sj = floe_pq_reader_kv(r, "iceberg.schema");
            t->schema = floe_ice_schema_from_json(sj, strlen(sj), &e);
        }
        floe_ice_data_file_t *f = &t->files[t->nfiles++];
        floe_ice_data_file_init(f);
        floe_ice_data_file_set_path(f, path, "PARQUET");
        f->record_count = floe_pq_reader_num_rows(r);
        f->file_size = (int64_t)b.len;
        t->rows += f->record_count;
        t->bytes += f->file_size;
        floe_pq_reader_free(r);
        floe_buf_free(&b);
        free(names[i]);
    }
    free(names);
    return t->schema ? 0 : -1;
}

int main(int argc, char **argv)
{
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_local_new(&e);
    table_t t;
    memset(&t, 0, sizeof t);
    if (argc == 3 && !strcmp(argv[2], "gen")) {
        size_t n = getenv("FLOE_MAINT_FILES") ? strtoul(getenv("FLOE_MAINT_FILES"), NULL, 10) : 200;
        double mb = getenv("FLOE_MAINT_FILE_MB") ? atof(getenv("FLOE_MAINT_FILE_MB")) : 1.5;
        mkdir(argv[1], 0755);
        return generate(io, argv[1], n, mb, &t) < 0 ? 1 : 0;
    }
    if (argc == 3 && !strcmp(argv[2], "floe-only")) {
        if (load(io, argv[1], &t) < 0) return 1;
        char out[512];
        snprintf(out, sizeof out, "%s/floe-only.parquet", argv[1]);
        double s, c;
        int64_t b;
        if (floe_compact(io, &t, out, getenv("FLOE_MAINT_DECODE") != NULL, &s, &c, &b) < 0)
            return 1;
        printf("floe: %zu files, %.1f MB in %.3f s (%.3f s CPU): %.1f MB/s, %lld bytes out\n",
               t.nfiles, (double)t.bytes / 1e6, s, c, (double)t.bytes / 1e6 / s, (long long)b);
        if (!getenv("FLOE_MAINT_KEEP")) unlink(out);
        return 0;
    }
    const char *root = getenv("FLOE_ROOT") ? getenv("FLOE_ROOT") : ".";
    size_t nfiles =
        getenv("FLOE_MAINT_FILES") ? strtoul(getenv("FLOE_MAINT_FILES"), NULL, 10) : 200;
    double file_mb = getenv("FLOE_MAINT_FILE_MB") ? atof(getenv("FLOE_MAINT_FILE_MB")) : 1.5;
    int rounds = getenv("FLOE_MAINT_ROUNDS") ? atoi(getenv("FLOE_MAINT_ROUNDS")) : 3;
    if (rounds < 1) rounds = 1;
    char dir[] = "/tmp/floe-bench-maint-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    fprintf(stderr, "maintenance: generating %zu files of ~%.1f MB\n", nfiles, file_mb);
    if (generate(io, dir, nfiles, file_mb, &t) < 0) return 1;
    double in_mb = (double)t.bytes / 1e6;
    char list[600], fo[600], dout[600], cmd[2048];
    snprintf(list, sizeof list, "%s/inputs.txt", dir);
    snprintf(fo, sizeof fo, "%s/floe.parquet", dir);
    snprintf(dout, sizeof dout, "%s/duck.parquet", dir);
    FILE *lf = fopen(list, "w");
    if (!lf) return 1;
    for (size_t i = 0; i < t.nfiles; i++) fprintf(lf, "%s\n", t.files[i].path);
    fclose(lf);
    snprintf(cmd, sizeof cmd,
             "cd '%s/tests/interop' && node '%s/bench/maintenance/duckdb_compact.mjs' '%s' '%s'",
             root, root, list, dout);

    /* Rounds alternate floe and DuckDB so that a slow spell hits both, and
     * each side's best counts (the two vCPUs differ in speed; see
     * bench/ingest). */
    double fs = 1e9, fc = 1e9, xs = 1e9, xc = 1e9, ds = 1e9, dc = 1e9, dbytes = 0, s, c;
    int64_t fbytes = 0, xbytes = 0;
    for (int r = 0; r < rounds; r++) {
        fprintf(stderr, "maintenance: round %d of %d: floe compacting\n", r + 1, rounds);
        double rs = 1e9;
        for (int k = 0; k < 2; k++) {
            if (floe_compact(io, &t, fo, false, &s, &c, &fbytes) < 0) return 1;
            if (s < rs) rs = s;
            if (c < fc) fc = c;
        }
        if (rs < fs) fs = rs;
        /* the same with every chunk decoded and encoded again: what the
         * page copies and dictionary merges save */
        if (floe_compact(io, &t, fo, true, &s, &c, &xbytes) < 0) return 1;
        if (s < xs) xs = s;
        if (c < xc) xc = c;
        fprintf(stderr, "maintenance: round %d of %d: DuckDB compacting\n", r + 1, rounds);
        double s2, b2, r2, c2;
        if (bench_duckdb_run(cmd, &s2, &b2, &r2, &c2) < 0) return 1;
        if ((int64_t)r2 != t.rows) {
            fprintf(stderr, "DuckDB wrote %.0f rows of %lld\n", r2, (long long)t.rows);
            return 1;
        }
        if (s2 < ds) ds = s2;
        if (c2 < dc) dc = c2;
        dbytes = b2;
        fprintf(stderr,
                "maintenance: round %d: floe %.3f s (all decoded %.3f s), DuckDB %.3f s "
                "(ratio %.2f)\n",
                r + 1, rs, s, s2, s2 / rs);
    }
    printf("inputs:  %zu files, %lld rows, %.1f MB of Parquet (zstd)\n", t.nfiles,
           (long long)t.rows, in_mb);
    printf("floe:    %.3f s, %.1f MB/s, %lld bytes out; %.3f s CPU\n", fs, in_mb / fs,
           (long long)fbytes, fc);
    printf("floe, every chunk decoded: %.3f s, %.1f MB/s, %lld bytes out; %.3f s CPU\n", xs,
           in_mb / xs, (long long)xbytes, xc);
    printf("duckdb:  %.3f s, %.1f MB/s, %.0f bytes out; %.3f s CPU\n", ds, in_mb / ds, dbytes, dc);
    /* ratio: wall clock, as the goal is stated; cpu_ratio: CPU seconds,
     * which other load on the machine distorts less */
    printf("maintenance files=%zu input_mb=%.1f rows=%lld compact_mb_s=%.1f duckdb_mb_s=%.1f "
           "ratio=%.2f cpu_ratio=%.2f decoded_mb_s=%.1f decoded_ratio=%.2f floe_bytes=%lld "
           "duckdb_bytes=%.0f bytes_ratio=%.3f\n",
           t.nfiles, in_mb, (long long)t.rows, in_mb / fs, in_mb / ds, ds / fs, dc / fc, in_mb / xs,
           ds / xs, (long long)fbytes, dbytes, (double)fbytes / dbytes);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
