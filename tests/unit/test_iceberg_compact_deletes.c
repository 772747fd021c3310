/* Compaction that applies delete files (iceberg/maintain.h,
 * iceberg/rewrite.h, iceberg/snapshot.h, table/maint_ops.h), against the
 * Iceberg spec's rules:
 *   - which deletes apply to which data files (kind, data sequence
 *     numbers, partition; an unpartitioned equality delete is global);
 *   - the rewritten files keep the planned snapshot's data sequence
 *     number: an equality delete older than that no longer applies to them
 *     (a key deleted, then inserted again, survives the compaction), one
 *     committed after the plan still does;
 *   - the delete files nothing needs any more go in the same commit; one a
 *     file left alone needs stays;
 *   - a commit since the plan conflicts only when it would lose a delete:
 *     a position delete naming a rewritten file; an equality delete lands
 *     with the rewrite and still applies;
 *   - the trigger: a big file with many deleted rows is rewritten alone.
 * Tables are written with floe's Parquet writer and committed with floe's
 * iceberg library; the rows are read with floe's reader and checked
 * exactly. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/parquet.h"
#include "iceberg/catalog.h"
#include "iceberg/maintain.h"
#include "iceberg/read.h"
#include "iceberg/snapshot.h"
#include "ice_files.h"
#include "table/maint_ops.h"
#include "test.h"
#include "tmp_dir.h"
#include "util/fs.h"

static char *root;
static floe_fileio_t *io;
static floe_ice_catalog_t *cat;
static int nfile;

#define POS_PATH_ID 2147483546
#define POS_POS_ID 2147483545

/* ---- files ---- */

/* Columns of longs (ids[c] field ids) or, with paths, a string column
 * first: rows given column by column. */
static char *put(const char *table, const char *const *names, const int32_t *ids, int ncols,
                 const char *const *paths, const int64_t *const *cols, size_t nrows)
{
    floe_err_t e;
    floe_pq_schema_t *ps = floe_pq_schema_new();
    for (int c = 0; c < ncols; c++) {
        bool str = paths && c == 0;
        floe_pq_node_t n = floe_pq_leaf(names[c], FLOE_PQ_REQUIRED,
                                        str ? FLOE_PQ_BYTE_ARRAY : FLOE_PQ_INT64, ids[c]);
        if (str) n.logical = FLOE_PQ_LT_STRING;
        CHECK(floe_pq_schema_add(ps, &n, &e) >= 0);
    }
    floe_buf_t b = FLOE_BUF_INIT;
    floe_pq_write_opts_t o = floe_pq_write_opts_default();
    floe_pq_writer_t *w = floe_pq_writer_new(ps, &o, floe_pq_sink_buf, &b, &e);
    floe_slice_t *sl = calloc(nrows + 1, sizeof *sl);
    for (int c = 0; c < ncols; c++) {
        const void *v = cols[c];
        if (paths && c == 0) {
            for (size_t r = 0; r < nrows; r++) sl[r] = floe_slice_str(paths[r]);
            v = sl;
        }
        CHECK(floe_pq_write_column(w, c, nrows, NULL, NULL, v, nrows, &e) == 0);
    }
    CHECK(floe_pq_writer_rows(w, nrows, &e) == 0 && floe_pq_writer_close(w, &e) == 0);
    floe_pq_writer_free(w);
    floe_pq_schema_free(ps);
    free(sl);
    char *p = malloc(600);
    snprintf(p, 600, "%s/db/%s/data/f%03d.parquet", root, table, nfile++);
    CHECK(floe_fileio_write(io, p, b.data, b.len, FLOE_IO_EXCL, &e) == 0);
    floe_buf_free(&b);
    return p;
}

/* A data file of rows (ids[i], ns[i]); its path into *path when given. */
static void data(floe_ice_data_file_t *f, const char *table, const int64_t *ids, const int64_t *ns,
                 size_t n, char *path)
{
    static const char *const names[] = {"id", "n"};
    static const int32_t fid[] = {1, 2};
    const int64_t *cols[] = {ids, ns};
    ice_file_describe(f, put(table, names, fid, 2, NULL, cols, n), FLOE_ICE_CONTENT_DATA,
                      (int64_t)n);
    if (path) snprintf(path, 600, "%s", f->path);
}

static void eq_delete(floe_ice_data_file_t *f, const char *table, const int64_t *ids, size_t n)
{
    static const char *const names[] = {"id"};
    static const int32_t fid[] = {1};
    const int64_t *cols[] = {ids};
    ice_file_describe(f, put(table, names, fid, 1, NULL, cols, n),
                      FLOE_ICE_CONTENT_EQUALITY_DELETES, (int64_t)n);
    f->equality_ids = malloc(sizeof *f->equality_ids);
    f->equality_ids[0] = 1;
    f->nequality_ids = 1;
}

/* Position deletes of rows pos[i] of data file path (no bounds: only
 * reading it tells what it names). */
static void pos_delete(floe_ice_data_file_t *f, const char *table, const char *path,
                       const int64_t *pos, size_t n)
{
    static const char *const names[] = {"file_path", "pos"};
    static const int32_t fid[] = {POS_PATH_ID, POS_POS_ID};
    const char *paths[16];
    for (size_t i = 0; i < n && i < 16; i++) paths[i] = path;
    const int64_t *cols[] = {NULL, pos};
    ice_file_describe(f, put(table, names, fid, 2, paths, cols, n),
                      FLOE_ICE_CONTENT_POSITION_DELETES, (int64_t)n);
}

static int commit(const char *table, floe_ice_op_t op, floe_ice_data_file_t *files, size_t n)
{
    return ice_file_commit(cat, "db", table, op, files, n);
}

static void create(const char *table, const char *partition_by)
{
    static const char js[] = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                             "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
                             "{\"id\":2,\"name\":\"n\",\"required\":true,\"type\":\"long\"}]}";
    floe_err_t e;
    floe_ice_schema_t *s = floe_ice_schema_from_json(js, strlen(js), &e);
    int32_t last = 999;
    floe_ice_spec_t *sp = partition_by ? floe_ice_spec_parse(s, partition_by, 0, &last, &e) : NULL;
    CHECK(floe_ice_catalog_create_table(cat, "db", table, s, sp, NULL, NULL, NULL, &e) == 0);
    floe_ice_spec_free(sp);
    floe_ice_schema_free(s);
    char dir[600];
    snprintf(dir, sizeof dir, "%s/db/%s/data", root, table);
    CHECK(floe_fs_mkdirs(dir, &e) == 0);
}

/* ---- reading ---- */

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rows floe reads, sorted, one per line (static buffer). */
static const char *rows(const char *table)
{
    static char out[65536];
    floe_err_t e;
    floe_ice_table_t *t;
    out[0] = 0;
    if (floe_ice_catalog_load_table(cat, "db", table, &t, &e)) return "load failed";
    floe_buf_t b = FLOE_BUF_INIT;
    int rc = floe_ice_read_table(io, floe_ice_table_metadata(t), -1, ice_rows_collect, &b, &e);
    floe_ice_table_free(t);
    if (rc) {
        floe_buf_free(&b);
        return "read failed";
    }
    floe_buf_append_u8(&b, 0);
    static char *lines[1024];
    size_t n = 0;
    for (char *save = NULL, *l = strtok_r((char *)b.data, "\n", &save); l && n < 1024;
         l = strtok_r(NULL, "\n", &save))
        lines[n++] = l;
    qsort(lines, n, sizeof *lines, cmp_line);
    size_t o = 0;
    for (size_t i = 0; i < n && o < sizeof out - 100; i++)
        o += (size_t)snprintf(out + o, sizeof out - o, "%s\n", lines[i]);
    floe_buf_free(&b);
    return out;
}

typedef struct live {
    size_t data, dels;
    int64_t data_seq[16]; /* of the data files, in scan order */
    int64_t seq;          /* the current snapshot's sequence number */
} live_t;

static live_t live(const char *table)
{
    live_t l;
    memset(&l, 0, sizeof l);
    floe_err_t e;
    floe_ice_table_t *t;
    floe_ice_scan_t *sc;
    if (floe_ice_catalog_load_table(cat, "db", table, &t, &e)) return l;
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    l.seq = floe_ice_metadata_current_snapshot(md)->sequence_number;
    CHECK(floe_ice_scan_plan(io, md, -1, NULL, 0, &sc, &e) == 0);
    l.data = floe_ice_scan_ntasks(sc);
    l.dels = floe_ice_scan_ndelete_files(sc);
    for (size_t i = 0; i < l.data && i < 16; i++)
        l.data_seq[i] = floe_ice_scan_task(sc, i)->sequence_number;
    floe_ice_scan_free(sc);
    floe_ice_table_free(t);
    return l;
}

static int64_t seq_now(const char *table)
{
    return live(table).seq;
}

/* ---- the rules ---- */

static floe_ice_manifest_entry_t entry(floe_ice_content_t content, int64_t seq, int32_t spec,
                                       const char *region)
{
    floe_ice_manifest_entry_t x;
    memset(&x, 0, sizeof x);
    floe_ice_data_file_init(&x.file);
    x.file.content = content;
    x.sequence_number = seq;
    x.file.spec_id = spec;
    if (region) {
        x.file.partition = calloc(1, sizeof *x.file.partition);
        floe_ice_value_set_bytes(x.file.partition, FLOE_ICE_STRING, region, strlen(region));
        x.file.npartition = 1;
    }
    return x;
}

/* Spec 0 unpartitioned, spec 1 identity(region): position deletes apply
 * at the same or a later sequence number, equality deletes only later;
 * both in their own partition; an unpartitioned equality delete in
 * every partition. */
static void applicability_rules(void)
{
    static const char js[] = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                             "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
                             "{\"id\":2,\"name\":\"region\",\"required\":false,"
                             "\"type\":\"string\"}]}";
    floe_err_t e;
    floe_ice_schema_t *s = floe_ice_schema_from_json(js, strlen(js), &e);
    CHECK(floe_ice_catalog_create_table(cat, "db", "rules", s, NULL, NULL, NULL, NULL, &e) == 0);
    int32_t last = 999;
    floe_ice_spec_t *sp = floe_ice_spec_parse(s, "region", 0, &last, &e);
    floe_ice_update_t ups[1] = {{.kind = FLOE_ICE_UP_ADD_SPEC, .spec = sp}};
    floe_ice_table_t *t = NULL;
    CHECK(floe_ice_catalog_commit(cat, "db", "rules", NULL, 0, ups, 1, &t, &e) == 0);
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    floe_ice_manifest_entry_t d_eu = entry(FLOE_ICE_CONTENT_DATA, 5, 1, "eu"),
                              d_un = entry(FLOE_ICE_CONTENT_DATA, 5, 0, NULL);
    struct {
        floe_ice_content_t k;
        int64_t seq;
        int32_t spec;
        const char *region;
        bool eu, un; /* applies to d_eu, to d_un */
    } cases[] = {
        {FLOE_ICE_CONTENT_POSITION_DELETES, 5, 1, "eu", true, false},
        {FLOE_ICE_CONTENT_POSITION_DELETES, 4, 1, "eu", false, false},
        {FLOE_ICE_CONTENT_POSITION_DELETES, 6, 1, "us", false, false},
        {FLOE_ICE_CONTENT_POSITION_DELETES, 5, 0, NULL, true, true},
        {FLOE_ICE_CONTENT_EQUALITY_DELETES, 5, 1, "eu", false, false},
        {FLOE_ICE_CONTENT_EQUALITY_DELETES, 6, 1, "eu", true, false},
        {FLOE_ICE_CONTENT_EQUALITY_DELETES, 6, 1, "us", false, false},
        {FLOE_ICE_CONTENT_EQUALITY_DELETES, 6, 0, NULL, true, true},
        {FLOE_ICE_CONTENT_EQUALITY_DELETES, 5, 0, NULL, false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        floe_ice_manifest_entry_t x =
            entry(cases[i].k, cases[i].seq, cases[i].spec, cases[i].region);
        CHECK_EQ(floe_ice_delete_applies(md, &x, &d_eu), cases[i].eu);
        CHECK_EQ(floe_ice_delete_applies(md, &x, &d_un), cases[i].un);
        floe_ice_data_file_clear(&x.file);
    }
    floe_ice_data_file_clear(&d_eu.file);
    floe_ice_data_file_clear(&d_un.file);
    floe_ice_table_free(t);
    floe_ice_spec_free(sp);
    floe_ice_schema_free(s);
}

/* ---- compaction ---- */

static floe_tmaint_compact_opts_t copts(void)
{
    floe_tmaint_compact_opts_t o = {.target_file_bytes = 64 << 20,
                                    .min_input_files = 2,
                                    .delete_percent = 10,
                                    .delete_files = 20};
    return o;
}

/* id 1 in A (seq 1); an equality delete of id 1 with id 2's new version
 * (seq 2); id 1 inserted again (seq 3); a position delete of id 3 in A
 * (seq 4).  Compaction keeps id 1 (the re-insert), drops both delete files
 * (nothing else needs them), and gives the new file sequence number 4:
 * the old equality delete would delete id 1 again were it lower. */
static void sequence_numbers_kept(void)
{
    create("seq", NULL);
    floe_ice_data_file_t f[2];
    char a[600];
    int64_t ids_a[] = {1, 2, 3, 4}, n0[] = {0, 0, 0, 0};
    data(&f[0], "seq", ids_a, n0, 4, a);
    CHECK(commit("seq", FLOE_ICE_OP_APPEND, f, 1) == 0);
    int64_t one[] = {1}, two[] = {2}, n1[] = {1};
    int64_t k12[] = {1, 2};
    data(&f[0], "seq", two, n1, 1, NULL);
    eq_delete(&f[1], "seq", k12, 2);
    CHECK(commit("seq", FLOE_ICE_OP_ROW_DELTA, f, 2) == 0);
    int64_t n2[] = {2};
    data(&f[0], "seq", one, n2, 1, NULL);
    CHECK(commit("seq", FLOE_ICE_OP_APPEND, f, 1) == 0);
    int64_t p2[] = {2};
    pos_delete(&f[0], "seq", a, p2, 1);
    CHECK(commit("seq", FLOE_ICE_OP_ROW_DELTA, f, 1) == 0);
    const char *want = "{\"id\":1,\"n\":2}\n{\"id\":2,\"n\":1}\n{\"id\":4,\"n\":0}\n";
    CHECK_STR(rows("seq"), want);
    int64_t planned = seq_now("seq");
    CHECK_EQ(planned, 4);
    floe_tmaint_compact_opts_t o = copts();
    floe_tmaint_compact_result_t r;
    floe_err_t e;
    CHECK(floe_tmaint_compact(cat, "db", "seq", &o, &r, &e) == 0);
    CHECK_EQ(r.files_in, 3);
    CHECK_EQ(r.files_out, 1);
    CHECK_EQ(r.rows_deleted, 3); /* ids 1 and 2 of A, id 3 of A */
    CHECK_EQ(r.delete_files_removed, 2);
    floe_tmaint_compact_result_clear(&r);
    live_t l = live("seq");
    CHECK_EQ(l.data, 1);
    CHECK_EQ(l.dels, 0);
    CHECK_EQ(l.data_seq[0], planned); /* the plan's, not the commit's (5) */
    CHECK_EQ(l.seq, 5);
    CHECK_STR(rows("seq"), want);
    /* a newer equality delete still applies to the rewritten file */
    eq_delete(&f[0], "seq", one, 1);
    CHECK(commit("seq", FLOE_ICE_OP_ROW_DELTA, f, 1) == 0);
    CHECK_STR(rows("seq"), "{\"id\":2,\"n\":1}\n{\"id\":4,\"n\":0}\n");
}

/* A delete file that a file outside the groups needs stays: a big file
 * (not small, few deletes) keeps its position delete and the global
 * equality delete that applies to it; with a lower delete percent, or
 * with delete_files at the partition's count of delete files, it is
 * rewritten alone, and they go. */
static void needed_deletes_stay_in(const char *keep, bool by_files)
{
    create(keep, NULL);
    floe_ice_data_file_t f[2];
    int64_t big[300], nb[300];
    uint64_t x = 88172645463325252ull; /* values that do not compress */
    for (int i = 0; i < 300; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        big[i] = 100 + i;
        nb[i] = (int64_t)(x >> 1);
    }
    char b[600];
    data(&f[0], keep, big, nb, 300, b);
    CHECK(commit(keep, FLOE_ICE_OP_APPEND, f, 1) == 0);
    int64_t s1[] = {1}, s2[] = {2}, n0[] = {0};
    data(&f[0], keep, s1, n0, 1, NULL);
    CHECK(commit(keep, FLOE_ICE_OP_APPEND, f, 1) == 0);
    data(&f[0], keep, s2, n0, 1, NULL);
    CHECK(commit(keep, FLOE_ICE_OP_APPEND, f, 1) == 0);
    int64_t k[] = {1, 399}, p012[] = {0, 1, 2};
    eq_delete(&f[0], keep, k, 2);
    pos_delete(&f[1], keep, b, p012, 3);
    CHECK(commit(keep, FLOE_ICE_OP_ROW_DELTA, f, 2) == 0);
    struct stat st;
    CHECK(stat(b, &st) == 0);
    floe_tmaint_compact_opts_t o = copts();
    o.target_file_bytes = st.st_size; /* the big file is not small */
    o.delete_files = 0;
    floe_tmaint_compact_result_t r;
    floe_err_t e;
    CHECK(floe_tmaint_compact(cat, "db", keep, &o, &r, &e) == 0);
    CHECK_EQ(r.files_in, 2);
    CHECK_EQ(r.rows_deleted, 1);
    CHECK_EQ(r.delete_files_removed, 0); /* both apply to the big file */
    floe_tmaint_compact_result_clear(&r);
    live_t l = live(keep);
    CHECK_EQ(l.data, 2);
    CHECK_EQ(l.dels, 2);
    char *got = strdup(rows(keep));
    CHECK(strstr(got, "{\"id\":1,") == NULL);
    CHECK(strstr(got, "{\"id\":2,") != NULL);
    CHECK(strstr(got, "{\"id\":100,") == NULL);
    CHECK(strstr(got, "{\"id\":102,") == NULL);
    CHECK(strstr(got, "{\"id\":103,") != NULL);
    CHECK(strstr(got, "{\"id\":399,") == NULL);
    CHECK(strstr(got, "{\"id\":398,") != NULL);
    /* 4 of its 300 rows deleted is 1.3%: at 1 percent the trigger
     * rewrites it alone, and the deletes go; or as the partition has 2
     * delete files, with delete_files 2 (not 3) */
    if (by_files) {
        o.delete_files = 3;
        CHECK(floe_tmaint_compact(cat, "db", keep, &o, &r, &e) == 0);
        CHECK_EQ(r.snapshot_id, -1);
        floe_tmaint_compact_result_clear(&r);
        o.delete_files = 2;
    } else {
        o.delete_percent = 1;
    }
    CHECK(floe_tmaint_compact(cat, "db", keep, &o, &r, &e) == 0);
    CHECK_EQ(r.files_in, 1);
    CHECK_EQ(r.rows_deleted, 4);
    CHECK_EQ(r.delete_files_removed, 2);
    floe_tmaint_compact_result_clear(&r);
    l = live(keep);
    CHECK_EQ(l.dels, 0);
    CHECK_STR(rows(keep), got);
    free(got);
}

static void needed_deletes_stay(void)
{
    needed_deletes_stay_in("keep0", false);
    needed_deletes_stay_in("keep1", true);
}

/* Commits landing between the plan and the compaction's commit (made at
 * its first attempt, so that attempt loses the race): an equality delete
 * never conflicts and still applies after; a position delete naming a
 * rewritten file does (final), one naming another file does not. */
typedef struct race {
    const char *table;
    int what; /* 0 equality delete of id 2; 1 position delete of row 0 of path; 2 of other */
    char path[600], other[600];
} race_t;

static void race_commit(void *ctx, int attempt)
{
    race_t *r = ctx;
    if (attempt != 1) return;
    floe_ice_data_file_t f;
    int64_t two[] = {2}, p0[] = {0};
    if (r->what == 0) eq_delete(&f, r->table, two, 1);
    else
        pos_delete(&f, r->table, r->what == 1 ? r->path : r->other, p0, 1);
    CHECK(commit(r->table, FLOE_ICE_OP_ROW_DELTA, &f, 1) == 0);
}

static void concurrent_deletes(void)
{
    for (int what = 0; what < 3; what++) {
        char table[16];
        snprintf(table, sizeof table, "race%d", what);
        create(table, NULL);
        race_t r = {.table = table, .what = what};
        floe_ice_data_file_t f;
        int64_t a[] = {1, 2}, b[] = {3, 4}, n0[] = {0, 0};
        data(&f, table, a, n0, 2, r.path);
        CHECK(commit(table, FLOE_ICE_OP_APPEND, &f, 1) == 0);
        data(&f, table, b, n0, 2, NULL);
        CHECK(commit(table, FLOE_ICE_OP_APPEND, &f, 1) == 0);
        int64_t c[] = {5};
        data(&f, table, c, n0, 1, r.other); /* alone in its run: outside the plan */
        CHECK(commit(table, FLOE_ICE_OP_APPEND, &f, 1) == 0);
        floe_tmaint_compact_opts_t o = copts();
        struct stat sa, sb;
        CHECK(stat(r.path, &sa) == 0);
        CHECK(stat(r.other, &sb) == 0);
        /* the first two files make a run; the third does not fit it */
        o.target_file_bytes = 2 * sa.st_size;
        o.contended = race_commit;
        o.contended_ctx = &r;
        floe_tmaint_compact_result_t res;
        floe_err_t e;
        int rc = floe_tmaint_compact(cat, "db", table, &o, &res, &e);
        if (what == 1) {
            CHECK_EQ(rc, -1);
            CHECK_EQ(e.code, FLOE_ECONFLICT);
            CHECK(strstr(e.msg, "applies to") != NULL);
            CHECK_STR(rows(table), "{\"id\":2,\"n\":0}\n{\"id\":3,\"n\":0}\n{\"id\":4,\"n\":0}\n"
                                   "{\"id\":5,\"n\":0}\n");
        } else {
            CHECK_EQ(rc, 0);
            CHECK(res.snapshot_id >= 0);
            CHECK_STR(rows(table), what == 0 ? "{\"id\":1,\"n\":0}\n{\"id\":3,\"n\":0}\n"
                                               "{\"id\":4,\"n\":0}\n{\"id\":5,\"n\":0}\n"
                                             : "{\"id\":1,\"n\":0}\n{\"id\":2,\"n\":0}\n"
                                               "{\"id\":3,\"n\":0}\n{\"id\":4,\"n\":0}\n");
        }
        floe_tmaint_compact_result_clear(&res);
    }
}

/* A widening rewrites files one for one without their deletes: it refuses
 * a table with delete files (the rows they delete would come back), and
 * goes through once compaction has applied and removed them. */
static void widening_waits_for_deletes(void)
{
    create("wid", NULL);
    floe_ice_data_file_t f[2];
    int64_t a[] = {1, 2, 3}, n0[] = {7, 8, 9}, two[] = {2};
    data(&f[0], "wid", a, n0, 3, NULL);
    CHECK(commit("wid", FLOE_ICE_OP_APPEND, f, 1) == 0);
    data(&f[0], "wid", two, n0, 1, NULL);
    CHECK(commit("wid", FLOE_ICE_OP_APPEND, f, 1) == 0);
    eq_delete(&f[0], "wid", two, 1);
    CHECK(commit("wid", FLOE_ICE_OP_ROW_DELTA, f, 1) == 0);
    floe_twiden_t pair = {2, 1000}; /* n becomes a double */
    floe_err_t e;
    floe_tmaint_widen_t *w = floe_tmaint_widen_new(cat, "db", "wid", &pair, 1, NULL, &e);
    CHECK(w != NULL);
    size_t files;
    int64_t bytes;
    CHECK_EQ(floe_tmaint_widen_round(w, NULL, &files, &bytes, &e), -1);
    CHECK_EQ(e.code, FLOE_EUNSUPPORTED);
    CHECK(strstr(e.msg, "delete files") != NULL);
    floe_tmaint_widen_free(w, false);
    floe_tmaint_compact_opts_t o = copts();
    floe_tmaint_compact_result_t r;
    CHECK(floe_tmaint_compact(cat, "db", "wid", &o, &r, &e) == 0);
    CHECK_EQ(r.delete_files_removed, 1);
    floe_tmaint_compact_result_clear(&r);
    w = floe_tmaint_widen_new(cat, "db", "wid", &pair, 1, NULL, &e);
    int64_t snap;
    CHECK_EQ(floe_tmaint_widen_commit(w, NULL, &snap, &e), 0);
    floe_tmaint_widen_free(w, true);
    CHECK_STR(rows("wid"), "{\"id\":1,\"n\":7.0}\n{\"id\":3,\"n\":9.0}\n");
}

int main(void)
{
    root = floe_test_tmpdir("compact-deletes");
    floe_err_t e;
    io = floe_fileio_local_new(&e);
    cat = floe_ice_catalog_fs_new(io, root, &e);
    RUN(applicability_rules);
    RUN(sequence_numbers_kept);
    RUN(needed_deletes_stay);
    RUN(concurrent_deletes);
    RUN(widening_waits_for_deletes);
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
    if (!t_tests_failed) floe_test_rm_rf(root);
    free(root);
    return t_tests_failed ? 1 : 0;
}
