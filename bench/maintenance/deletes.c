/* bench/maintenance (deletes part): reading an upsert-shaped table before
 * and after a compaction that applies its delete files.
 *
 * Builds, through floe's iceberg library (no server), table db.upserts:
 * one data file of FLOE_DELETES_IDS (100,000) rows (id, v, n), then
 * FLOE_DELETES_COMMITS (100) row-delta commits, each of one data file with
 * new versions of FLOE_DELETES_UPDATES (1,000) distinct random ids and the
 * deletes of their old versions: odd commits a global equality delete
 * file on `id` (the `equality` delete mode: it applies to the older data
 * only), even ones a position delete file naming the old rows (the
 * `position` mode).  Then times floe's reader (iceberg/read.h, every row as
 * JSON with the deletes applied; best of FLOE_DELETES_ROUNDS, 3), compacts
 * the table as the maintenance thread does (table/maint_ops.h: the deletes
 * applied, the delete files no data file needs removed, the planned
 * sequence number kept) and times the reader again; the rows must be the
 * same (count and an order-free hash).  icebird (npm, an Iceberg reader
 * nobody here wrote) reads the table before and after as a peer
 * (tests/interop/icebird_count.mjs; FLOE_DELETES_ICEBIRD=0 skips it).
 * Last line: deletes rows=... data_files=... delete_files=...
 * read_ms_before=... read_ms_after=... compact_ms=... data_files_after=...
 * delete_files_after=... icebird_ms_before=... icebird_ms_after=...
 * read_cpu_ms_before=... read_cpu_ms_after=... compact_cpu_ms=... (the
 * process's CPU time of the same reads and compaction: a shared machine
 * stretches wall times)
 * Usage: deletes [DIR]  (DIR: only build the table, as
 * DIR/warehouse/db/upserts, for `floe table compact --data-dir DIR`) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "format/parquet.h"
#include "iceberg/catalog.h"
#include "iceberg/read.h"
#include "iceberg/snapshot.h"
#include "table/maint_ops.h"
#include "util/clock.h"
#include "util/fs.h"
#include "util/murmur3.h"

#include "../../tests/unit/ice_files.h"
#include "../xorshift.h"

#define POS_PATH_ID 2147483546
#define POS_POS_ID 2147483545

static floe_fileio_t *io;
static floe_ice_catalog_t *cat;
static char tdir[1500]; /* the table's data folder */
static int nfiles;

static long env_long(const char *k, long def)
{
    const char *v = getenv(k);
    return v && *v ? strtol(v, NULL, 10) : def;
}

static void die(const char *what, const floe_err_t *e)
{
    fprintf(stderr, "deletes: %s: %s\n", what, e ? e->msg : "failed");
    exit(1);
}

/* Write columns as a Parquet file at a new path (returned; caller frees). */
static char *write_file(floe_pq_schema_t *ps, const char *schema_json, size_t nrows,
                        const void *const *vals, floe_err_t *e)
{
    floe_buf_t b = FLOE_BUF_INIT;
    floe_pq_write_opts_t o = floe_pq_write_opts_default();
    o.codec = FLOE_CODEC_ZSTD; /* as a table topic's data files (table/datafile.c) */
    o.level = 1;
    o.delta_byte_array = false;
    o.page_size = 256u << 10;
    floe_pq_writer_t *w = floe_pq_writer_new(ps, &o, floe_pq_sink_buf, &b, e);
    if (!w) die("writer", e);
    if (schema_json && floe_pq_writer_set_kv(w, "iceberg.schema", schema_json, e) < 0) die("kv", e);
    for (int c = 0; c < floe_pq_schema_num_columns(ps); c++)
        if (floe_pq_write_column(w, c, nrows, NULL, NULL, vals[c], nrows, e) < 0) die("column", e);
    if (floe_pq_writer_rows(w, nrows, e) < 0 || floe_pq_writer_close(w, e) < 0) die("close", e);
    floe_pq_writer_free(w);
    char *p = malloc(1600);
    snprintf(p, 1600, "%s/d%05d.parquet", tdir, nfiles++);
    if (floe_fileio_write(io, p, b.data, b.len, FLOE_IO_EXCL, e) < 0) die(p, e);
    floe_buf_free(&b);
    return p;
}

static floe_pq_schema_t *leaves(const char *const *names, const int32_t *ids,
                                const floe_pq_phys_t *phys, int n)
{
    floe_err_t e;
    floe_pq_schema_t *ps = floe_pq_schema_new();
    for (int i = 0; i < n; i++) {
        floe_pq_node_t nd = floe_pq_leaf(names[i], FLOE_PQ_REQUIRED, phys[i], ids[i]);
        if (phys[i] == FLOE_PQ_BYTE_ARRAY) nd.logical = FLOE_PQ_LT_STRING;
        if (floe_pq_schema_add(ps, &nd, &e) < 0) die("schema", &e);
    }
    return ps;
}

/* Rows (ids[i], "v-<id>-<ver>", ver) as a data file. */
static char *data_file(const int64_t *ids, size_t n, int64_t ver, const char *sj)
{
    static const char *const names[] = {"id", "v", "n"};
    static const int32_t fid[] = {1, 2, 3};
    static const floe_pq_phys_t ph[] = {FLOE_PQ_INT64, FLOE_PQ_BYTE_ARRAY, FLOE_PQ_INT64};
    floe_pq_schema_t *ps = leaves(names, fid, ph, 3);
    floe_slice_t *vs = calloc(n + 1, sizeof *vs);
    int64_t *vers = calloc(n + 1, sizeof *vers);
    floe_buf_t text = FLOE_BUF_INIT;
    size_t *offs = calloc(n + 1, sizeof *offs);
    for (size_t i = 0; i < n; i++) {
        offs[i] = text.len;
        floe_buf_printf(&text, "v-%lld-%lld", (long long)ids[i], (long long)ver);
        vers[i] = ver;
    }
    for (size_t i = 0; i < n; i++)
        vs[i] = (floe_slice_t){text.data + offs[i], (i + 1 < n ? offs[i + 1] : text.len) - offs[i]};
    const void *vals[] = {ids, vs, vers};
    floe_err_t e;
    char *p = write_file(ps, sj, n, vals, &e);
    free(vs);
    free(vers);
    free(offs);
    floe_buf_free(&text);
    floe_pq_schema_free(ps);
    return p;
}

static void commit(floe_ice_op_t op, floe_ice_data_file_t *files, size_t n)
{
    if (ice_file_commit(cat, "db", "upserts", op, files, n) < 0) die("commit", NULL);
}

typedef struct pos_row {
    const char *path;
    int64_t pos;
} pos_row_t;

static int cmp_pos(const void *a, const void *b)
{
    const pos_row_t *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The table: see the top of this file. */
static void build(const char *wh, long nids, long ncommits, long nupd)
{
    floe_err_t e;
    if (!(cat = floe_ice_catalog_fs_new(io, wh, &e))) die("catalog", &e);
    static const char js[] = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                             "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
                             "{\"id\":2,\"name\":\"v\",\"required\":true,\"type\":\"string\"},"
                             "{\"id\":3,\"name\":\"n\",\"required\":true,\"type\":\"long\"}]}";
    floe_ice_schema_t *schema = floe_ice_schema_from_json(js, strlen(js), &e);
    if (!schema ||
        floe_ice_catalog_create_table(cat, "db", "upserts", schema, NULL, NULL, NULL, NULL, &e) < 0)
        die("create", &e);
    char *sj = floe_ice_schema_to_json(schema, &e);
    floe_ice_table_t *t;
    if (floe_ice_catalog_load_table(cat, "db", "upserts", &t, &e) < 0) die("load", &e);
    snprintf(tdir, sizeof tdir, "%s/data", floe_ice_table_metadata(t)->location);
    floe_ice_table_free(t);
    if (floe_fs_mkdirs(tdir, &e) < 0) die(tdir, &e);
    /* where each id's live version is: file (index into paths) and row */
    int32_t *where = malloc((size_t)nids * sizeof *where);
    int64_t *row = malloc((size_t)nids * sizeof *row), *ids = malloc((size_t)nids * sizeof *ids);
    uint32_t *stamp = calloc((size_t)nids, sizeof *stamp);
    char **paths = calloc((size_t)ncommits + 2, sizeof *paths);
    for (long i = 0; i < nids; i++) {
        ids[i] = i;
        where[i] = 0;
        row[i] = i;
    }
    floe_ice_data_file_t f[2];
    char *p = data_file(ids, (size_t)nids, 0, sj);
    paths[0] = strdup(p);
    ice_file_describe(&f[0], p, FLOE_ICE_CONTENT_DATA, nids);
    commit(FLOE_ICE_OP_APPEND, f, 1);
    pos_row_t *pr = malloc((size_t)nupd * sizeof *pr);
    for (long k = 1; k <= ncommits; k++) {
        size_t n = 0;
        while ((long)n < nupd && (long)n < nids) {
            int64_t id = (int64_t)(bench_next() % (uint64_t)nids);
            if (stamp[id] == (uint32_t)k) continue;
            stamp[id] = (uint32_t)k;
            ids[n++] = id;
        }
        qsort(ids, n, sizeof *ids, cmp_i64);
        p = data_file(ids, n, k, sj);
        paths[k] = strdup(p);
        ice_file_describe(&f[0], p, FLOE_ICE_CONTENT_DATA, (int64_t)n);
        if (k % 2) {
            /* equality mode: the keys, in a file of the id column alone */
            static const char *const nm[] = {"id"};
            static const int32_t fid[] = {1};
            static const floe_pq_phys_t ph[] = {FLOE_PQ_INT64};
            floe_pq_schema_t *ps = leaves(nm, fid, ph, 1);
            const void *vals[] = {ids};
            ice_file_describe(&f[1], write_file(ps, NULL, n, vals, &e),
                              FLOE_ICE_CONTENT_EQUALITY_DELETES, (int64_t)n);
            floe_pq_schema_free(ps);
            f[1].equality_ids = malloc(sizeof *f[1].equality_ids);
            f[1].equality_ids[0] = 1;
            f[1].nequality_ids = 1;
        } else {
            /* position mode: the old rows, sorted by path and position */
            for (size_t i = 0; i < n; i++) pr[i] = (pos_row_t){paths[where[ids[i]]], row[ids[i]]};
            qsort(pr, n, sizeof *pr, cmp_pos);
            static const char *const nm[] = {"file_path", "pos"};
            static const int32_t fid[] = {POS_PATH_ID, POS_POS_ID};
            static const floe_pq_phys_t ph[] = {FLOE_PQ_BYTE_ARRAY, FLOE_PQ_INT64};
            floe_pq_schema_t *ps = leaves(nm, fid, ph, 2);
            floe_slice_t *sl = malloc(n * sizeof *sl);
            int64_t *pos = malloc(n * sizeof *pos);
            for (size_t i = 0; i < n; i++) {
                sl[i] = floe_slice_str(pr[i].path);
                pos[i] = pr[i].pos;
            }
            const void *vals[] = {sl, pos};
            ice_file_describe(&f[1], write_file(ps, NULL, n, vals, &e),
                              FLOE_ICE_CONTENT_POSITION_DELETES, (int64_t)n);
            /* file_path bounds, as Iceberg writers record them */
            floe_ice_col_metrics_t *m = floe_ice_data_file_metrics(&f[1], POS_PATH_ID);
            m->has_lower = m->has_upper = true;
            floe_buf_append_str(&m->lower, pr[0].path);
            floe_buf_append_str(&m->upper, pr[n - 1].path);
            floe_pq_schema_free(ps);
            free(sl);
            free(pos);
        }
        commit(FLOE_ICE_OP_ROW_DELTA, f, 2);
        for (size_t i = 0; i < n; i++) {
            where[ids[i]] = (int32_t)k;
            row[ids[i]] = (int64_t)i;
        }
    }
    for (long k = 0; k <= ncommits; k++) free(paths[k]);
    free(paths);
    free(pr);
    free(where);
    free(row);
    free(ids);
    free(stamp);
    free(sj);
    floe_ice_schema_free(schema);
}

typedef struct digest {
    int64_t rows;
    uint64_t sum; /* order-free: the sum of the rows' hashes */
} digest_t;

static int on_row(void *arg, const char *json, size_t len, floe_err_t *err)
{
    (void)err;
    digest_t *d = arg;
    d->rows++;
    d->sum += (uint64_t)floe_murmur3_32(json, len, 1) << 32 | floe_murmur3_32(json, len, 2);
    return 0;
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Read the table with floe's reader: best wall time of rounds (its CPU
 * time into *cpu: the machine may be shared), and the digest. */
static double read_ms(int rounds, digest_t *d, double *cpu)
{
    double best = 1e18;
    for (int r = 0; r < rounds; r++) {
        floe_err_t e;
        floe_ice_table_t *t;
        if (floe_ice_catalog_load_table(cat, "db", "upserts", &t, &e) < 0) die("load", &e);
        memset(d, 0, sizeof *d);
        int64_t t0 = floe_mono_us();
        double c0 = cpu_ms();
        if (floe_ice_read_table(io, floe_ice_table_metadata(t), -1, on_row, d, &e) < 0)
            die("read", &e);
        double ms = (double)(floe_mono_us() - t0) / 1000.0;
        if (ms < best) {
            best = ms;
            *cpu = cpu_ms() - c0;
        }
        floe_ice_table_free(t);
    }
    return best;
}

/* Live data and delete files of the current snapshot. */
static void count_files(size_t *data, size_t *dels)
{
    floe_err_t e;
    floe_ice_table_t *t;
    floe_ice_scan_t *sc;
    if (floe_ice_catalog_load_table(cat, "db", "upserts", &t, &e) < 0 ||
        floe_ice_scan_plan(io, floe_ice_table_metadata(t), -1, NULL, 0, &sc, &e) < 0)
        die("scan", &e);
    *data = floe_ice_scan_ntasks(sc);
    *dels = floe_ice_scan_ndelete_files(sc);
    floe_ice_scan_free(sc);
    floe_ice_table_free(t);
}

/* icebird's read of the table (tests/interop/icebird_count.mjs): its own
 * timing in ms, its row count; -1 when it cannot run. */
static double icebird_ms(const char *loc, int64_t *rows)
{
    const char *root = getenv("FLOE_ROOT");
    char cmd[4000];
    snprintf(cmd, sizeof cmd, "node %s/tests/interop/icebird_count.mjs '%s' 2>/dev/null",
             root ? root : ".", loc);
    FILE *f = popen(cmd, "r");
    double ms = -1;
    long long n = -1;
    if (f && fscanf(f, "rows=%lld ms=%lf", &n, &ms) != 2) ms = -1;
    if (f) pclose(f);
    *rows = n;
    return ms;
}

int main(int argc, char **argv)
{
    long nids = env_long("FLOE_DELETES_IDS", 100000),
         ncommits = env_long("FLOE_DELETES_COMMITS", 100),
         nupd = env_long("FLOE_DELETES_UPDATES", 1000);
    int rounds = (int)env_long("FLOE_DELETES_ROUNDS", 3);
    long seed = env_long("FLOE_DELETES_SEED", 0);
    if (seed) bench_rng = (uint64_t)seed;
    if (nids < 1 || ncommits < 0 || nupd < 1 || ncommits > 100000 || rounds < 1) {
        fprintf(stderr, "deletes: bad FLOE_DELETES_* settings\n");
        return 1;
    }
    floe_err_t e;
    if (!(io = floe_fileio_local_new(&e))) die("fileio", &e);
    char dir[1024], wh[1100];
    bool keep = argc > 1;
    if (keep) snprintf(dir, sizeof dir, "%s", argv[1]);
    else
        snprintf(dir, sizeof dir, "/tmp/floe-bench-deletes-%d", (int)getpid());
    snprintf(wh, sizeof wh, "%s/warehouse", dir);
    if (floe_fs_mkdirs(wh, &e) < 0) die(wh, &e);
    build(wh, nids, ncommits, nupd);
    if (keep) {
        printf("deletes: table db.upserts under %s (%ld ids, %ld commits of %ld updates)\n", wh,
               nids, ncommits, nupd);
        floe_ice_catalog_free(cat);
        floe_fileio_free(io);
        return 0;
    }
    char loc[1300];
    snprintf(loc, sizeof loc, "%s/db/upserts", wh);
    size_t data0, dels0, data1, dels1;
    count_files(&data0, &dels0);
    digest_t before, after;
    double c0, c1;
    double r0 = read_ms(rounds, &before, &c0);
    bool peer = env_long("FLOE_DELETES_ICEBIRD", 1) != 0;
    int64_t ib_rows0 = -1, ib_rows1 = -1;
    double ib0 = peer ? icebird_ms(loc, &ib_rows0) : -1;
    printf("before: %lld rows, %zu data files, %zu delete files: floe %.1f ms (%.1f ms CPU), "
           "icebird %.1f ms (%lld rows)\n",
           (long long)before.rows, data0, dels0, r0, c0, ib0, (long long)ib_rows0);
    floe_tmaint_compact_opts_t co = {.target_file_bytes = 64 << 20,
                                     .min_input_files = 5,
                                     .tier_ratio = 4,
                                     .delete_percent = 10,
                                     .delete_files = 20};
    floe_tmaint_compact_result_t cr;
    int64_t t0 = floe_mono_us();
    double cc0 = cpu_ms();
    if (floe_tmaint_compact(cat, "db", "upserts", &co, &cr, &e) < 0) die("compact", &e);
    double cms = (double)(floe_mono_us() - t0) / 1000.0, ccpu = cpu_ms() - cc0;
    printf("compaction: %zu files into %zu, %lld rows left out, %zu delete files removed, "
           "%.1f ms (%.1f ms CPU)\n",
           cr.files_in, cr.files_out, (long long)cr.rows_deleted, cr.delete_files_removed, cms,
           ccpu);
    floe_tmaint_compact_result_clear(&cr);
    count_files(&data1, &dels1);
    double r1 = read_ms(rounds, &after, &c1);
    double ib1 = peer ? icebird_ms(loc, &ib_rows1) : -1;
    printf("after: %lld rows, %zu data files, %zu delete files: floe %.1f ms (%.1f ms CPU), "
           "icebird %.1f ms (%lld rows)\n",
           (long long)after.rows, data1, dels1, r1, c1, ib1, (long long)ib_rows1);
    int rc = 0;
    if (after.rows != before.rows || after.sum != before.sum || before.rows != nids) {
        fprintf(stderr, "deletes: the rows differ: %lld rows before, %lld after, %ld ids\n",
                (long long)before.rows, (long long)after.rows, nids);
        rc = 1;
    }
    if (peer && (ib_rows0 != before.rows || ib_rows1 != after.rows)) {
        fprintf(stderr, "deletes: icebird read %lld rows before, %lld after\n", (long long)ib_rows0,
                (long long)ib_rows1);
        rc = 1;
    }
    printf("deletes rows=%lld data_files=%zu delete_files=%zu read_ms_before=%.1f "
           "read_ms_after=%.1f compact_ms=%.1f data_files_after=%zu delete_files_after=%zu "
           "icebird_ms_before=%.1f icebird_ms_after=%.1f read_cpu_ms_before=%.1f "
           "read_cpu_ms_after=%.1f compact_cpu_ms=%.1f\n",
           (long long)after.rows, data0, dels0, r0, r1, cms, data1, dels1, ib0, ib1, c0, c1, ccpu);
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (rc == 0 && system(cmd) != 0) rc = 1;
    return rc;
}
