/* Iceberg tables made by floe, read by peers nobody here wrote: icebird
 * (rows, with schema evolution, every partition transform and spec
 * evolution, position deletes, equality deletes), avsc and python3-avro
 * (manifests: header keys and field ids), DuckDB (every data file).
 * Data files are written by DuckDB with Parquet field ids and the
 * iceberg.schema key (and, for one table, by floe's own Parquet writer);
 * floe writes everything else.  Skips when node or the
 * interop packages are missing. */
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "format/parquet.h"
#include "iceberg/scan.h"
#include "iceberg/snapshot.h"

static char root[256], interop[1024];
static json_t *jobs, *expect;
static floe_fileio_t *io;
static floe_ice_catalog_t *cat;
static int nfile;

/* ---- rows and columns ---- */

typedef struct col {
    const char *name, *duck;
    int id;
} col_t;

/* A cell: SQL literal for DuckDB and JSON for the expectation. */
typedef struct cell {
    char sql[128];
    json_t *json; /* owned */
} cell_t;

static cell_t c_long(long long v)
{
    cell_t c;
    snprintf(c.sql, sizeof c.sql, "%lld", v);
    c.json = json_integer(v);
    return c;
}

static cell_t c_str(const char *s)
{
    cell_t c;
    if (!s) {
        snprintf(c.sql, sizeof c.sql, "NULL");
        c.json = json_null();
        return c;
    }
    snprintf(c.sql, sizeof c.sql, "'%s'", s);
    c.json = json_string(s);
    return c;
}

static cell_t c_double(double v)
{
    cell_t c;
    snprintf(c.sql, sizeof c.sql, "%.17g", v);
    c.json = json_real(v);
    return c;
}

static void iso(int64_t us, bool date_only, char *out, size_t n)
{
    int64_t days = us / 86400000000LL, rem = us % 86400000000LL;
    int64_t y;
    unsigned m, d;
    floe_ice_civil_from_days(days, &y, &m, &d);
    if (date_only) snprintf(out, n, "%04lld-%02u-%02u", (long long)y, m, d);
    else
        snprintf(out, n, "%04lld-%02u-%02uT%02lld:%02lld:%02lld", (long long)y, m, d,
                 (long long)(rem / 3600000000LL), (long long)(rem / 60000000 % 60),
                 (long long)(rem / 1000000 % 60));
}

static cell_t c_ts(int64_t us)
{
    cell_t c;
    char b[64], j[80];
    iso(us, false, b, sizeof b);
    snprintf(c.sql, sizeof c.sql, "TIMESTAMPTZ '%s+00'", b);
    snprintf(j, sizeof j, "%s.000Z", b);
    c.json = json_string(j);
    return c;
}

static cell_t c_date(int32_t days)
{
    cell_t c;
    char b[64], j[80];
    iso((int64_t)days * 86400000000LL, true, b, sizeof b);
    snprintf(c.sql, sizeof c.sql, "DATE '%s'", b);
    snprintf(j, sizeof j, "%sT00:00:00.000Z", b);
    c.json = json_string(j);
    return c;
}

/* Queue a DuckDB COPY writing rows (cells[r*ncols + c]) to path with field
 * ids and the iceberg.schema entry; returns nothing, the file appears when
 * flush_jobs runs. */
static void job(const char *path, const col_t *cols, size_t ncols, cell_t *cells, size_t nrows,
                const floe_ice_schema_t *schema)
{
    floe_buf_t b = FLOE_BUF_INIT;
    floe_buf_printf(&b, "COPY (SELECT * FROM (VALUES ");
    for (size_t r = 0; r < nrows; r++) {
        floe_buf_printf(&b, "%s(", r ? ", " : "");
        for (size_t c = 0; c < ncols; c++)
            floe_buf_printf(&b, "%sCAST(%s AS %s)", c ? ", " : "", cells[r * ncols + c].sql,
                            cols[c].duck);
        floe_buf_printf(&b, ")");
    }
    floe_buf_printf(&b, ") t(");
    for (size_t c = 0; c < ncols; c++) floe_buf_printf(&b, "%s%s", c ? ", " : "", cols[c].name);
    floe_buf_printf(&b, ")) TO '%s' (FORMAT parquet, FIELD_IDS {", path);
    for (size_t c = 0; c < ncols; c++)
        floe_buf_printf(&b, "%s%s: %d", c ? ", " : "", cols[c].name, cols[c].id);
    floe_buf_printf(&b, "}");
    if (schema) {
        floe_err_t e;
        char *sj = floe_ice_schema_to_json(schema, &e);
        floe_buf_printf(&b, ", KV_METADATA {'iceberg.schema': '%s'}", sj);
        free(sj);
    }
    floe_buf_printf(&b, ")");
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string(path));
    json_object_set_new(o, "sql", json_stringn((const char *)b.data, b.len));
    json_array_append_new(jobs, o);
    floe_buf_free(&b);
}

static int run_cmd(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    fflush(stdout);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int flush_jobs(void)
{
    char p[300];
    snprintf(p, sizeof p, "%s/jobs.json", root);
    json_dump_file(jobs, p, 0);
    json_array_clear(jobs);
    return run_cmd("cd '%s' && node iceberg_write_parquet.mjs '%s'", interop, p);
}

/* ---- tables ---- */

static char *data_path(const char *table, const char *part)
{
    char *p = malloc(600);
    snprintf(p, 600, "%s/db/%s/data/%s%sf%03d.parquet", root, table, part ? part : "",
             part ? "/" : "", nfile++);
    return p;
}

/* A data file description for a written Parquet file (size from disk),
 * with metrics for column 1 (long id) from the cells. */
static void describe(floe_ice_data_file_t *f, const char *path, floe_ice_content_t content,
                     int64_t rows, cell_t *cells, size_t ncols)
{
    floe_ice_data_file_init(f);
    floe_ice_data_file_set_path(f, path, "PARQUET");
    f->content = content;
    f->record_count = rows;
    struct stat st;
    f->file_size = stat(path, &st) == 0 ? st.st_size : 0;
    if (content != FLOE_ICE_CONTENT_POSITION_DELETES && cells) {
        floe_ice_col_metrics_t *m = floe_ice_data_file_metrics(f, 1);
        long long lo = 0, hi = 0;
        for (int64_t r = 0; r < rows; r++) {
            long long v = json_integer_value(cells[r * ncols].json);
            if (r == 0 || v < lo) lo = v;
            if (r == 0 || v > hi) hi = v;
        }
        floe_err_t e;
        floe_ice_value_t a = {.kind = FLOE_ICE_LONG, .v.l = lo},
                         b = {.kind = FLOE_ICE_LONG, .v.l = hi};
        m->values = rows;
        m->nulls = 0;
        floe_ice_value_serialize(&a, &m->lower, &e);
        floe_ice_value_serialize(&b, &m->upper, &e);
        m->has_lower = m->has_upper = true;
    }
}

static void expect_rows(json_t *rows, cell_t *cells, const col_t *cols, size_t ncols, size_t nrows,
                        const char *const *as_names)
{
    for (size_t r = 0; r < nrows; r++) {
        json_t *o = json_object();
        for (size_t c = 0; c < ncols; c++)
            json_object_set(o, as_names ? as_names[c] : cols[c].name, cells[r * ncols + c].json);
        json_array_append_new(rows, o);
    }
}

static void free_cells(cell_t *cells, size_t n)
{
    for (size_t i = 0; i < n; i++) json_decref(cells[i].json);
}

static void add_expect(const char *table, json_t *rows, const char *const *columns, size_t ncol)
{
    json_t *o = json_object(), *cs = json_array();
    char url[400];
    snprintf(url, sizeof url, "%s/db/%s", root, table);
    json_object_set_new(o, "name", json_string(table));
    json_object_set_new(o, "url", json_string(url));
    for (size_t i = 0; i < ncol; i++) json_array_append_new(cs, json_string(columns[i]));
    json_object_set_new(o, "columns", cs);
    json_object_set_new(o, "rows", rows);
    json_array_append_new(expect, o);
}

static int commit_files(const char *table, floe_ice_op_t op, floe_ice_data_file_t *files, size_t n)
{
    floe_err_t e;
    floe_ice_commit_t *c = floe_ice_commit_new(cat, "db", table, op, &e);
    for (size_t i = 0; i < n; i++) floe_ice_commit_add(c, &files[i], &e);
    int rc = floe_ice_commit_run(c, NULL, &e);
    if (rc < 0) fprintf(stderr, "commit %s: %s\n", table, e.msg);
    floe_ice_commit_free(c);
    for (size_t i = 0; i < n; i++) floe_ice_data_file_clear(&files[i]);
    return rc;
}

static const char *regions[] = {"us", "eu", "ap"};
static const int64_t base_ts = 1510871468000000LL; /* 2017-11-16T22:31:08Z */

/* A: ten appends */
static void table_appends(void)
{
    floe_err_t e;
    floe_ice_type_t *r = floe_ice_type_struct();
    floe_ice_struct_add(r, 1, "id", true, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    floe_ice_struct_add(r, 2, "region", false, floe_ice_type_prim(FLOE_ICE_STRING), NULL);
    floe_ice_struct_add(r, 3, "ts", false, floe_ice_type_prim(FLOE_ICE_TIMESTAMPTZ), NULL);
    floe_ice_schema_t *s = floe_ice_schema_new(0, r);
    CHECK(floe_ice_catalog_create_table(cat, "db", "appends", s, NULL, NULL, NULL, NULL, &e) == 0);
    col_t cols[] = {{"id", "BIGINT", 1}, {"region", "VARCHAR", 2}, {"ts", "TIMESTAMPTZ", 3}};
    json_t *rows = json_array();
    char *paths[10];
    cell_t cells[10][9];
    for (int i = 0; i < 10; i++) {
        for (int j = 0; j < 3; j++) {
            int id = i * 3 + j;
            cells[i][j * 3] = c_long(id);
            cells[i][j * 3 + 1] = c_str(j == 2 && i % 2 ? NULL : regions[j]);
            cells[i][j * 3 + 2] = c_ts(base_ts + (int64_t)id * 3600000000LL);
        }
        paths[i] = data_path("appends", NULL);
        job(paths[i], cols, 3, cells[i], 3, s);
        expect_rows(rows, cells[i], cols, 3, 3, NULL);
    }
    CHECK(flush_jobs() == 0);
    for (int i = 0; i < 10; i++) {
        floe_ice_data_file_t f;
        describe(&f, paths[i], FLOE_ICE_CONTENT_DATA, 3, cells[i], 3);
        CHECK(commit_files("appends", FLOE_ICE_OP_APPEND, &f, 1) == 0);
        free(paths[i]);
        free_cells(cells[i], 9);
    }
    const char *cn[] = {"id", "region", "ts"};
    add_expect("appends", rows, cn, 3);
    floe_ice_schema_free(s);
}

/* B: schema evolution: add a column, rename one; old files read null */
static void table_evolve(void)
{
    floe_err_t e;
    floe_ice_type_t *r = floe_ice_type_struct();
    floe_ice_struct_add(r, 1, "id", true, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    floe_ice_struct_add(r, 2, "name", false, floe_ice_type_prim(FLOE_ICE_STRING), NULL);
    floe_ice_schema_t *s0 = floe_ice_schema_new(0, r);
    floe_ice_table_t *t;
    CHECK(floe_ice_catalog_create_table(cat, "db", "evolve", s0, NULL, NULL, NULL, &t, &e) == 0);
    floe_ice_schema_t *s1 = floe_ice_schema_dup(s0);
    int32_t last = floe_ice_table_metadata(t)->last_column_id;
    CHECK(floe_ice_schema_add_column(s1, &last, NULL, "score", floe_ice_type_prim(FLOE_ICE_DOUBLE),
                                     NULL, &e) == 0);
    CHECK(floe_ice_schema_rename(s1, "name", "label", &e) == 0);
    floe_ice_table_free(t);
    col_t c0[] = {{"id", "BIGINT", 1}, {"name", "VARCHAR", 2}};
    col_t c1[] = {{"id", "BIGINT", 1}, {"label", "VARCHAR", 2}, {"score", "DOUBLE", 3}};
    cell_t a[6];
    for (int i = 0; i < 3; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "n%d", i);
        a[i * 2] = c_long(i);
        a[i * 2 + 1] = c_str(nm);
    }
    cell_t bb[9];
    for (int i = 0; i < 3; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "m%d", i);
        bb[i * 3] = c_long(10 + i);
        bb[i * 3 + 1] = c_str(nm);
        bb[i * 3 + 2] = c_double(0.5 + i);
    }
    char *pa = data_path("evolve", NULL), *pb = data_path("evolve", NULL);
    job(pa, c0, 2, a, 3, s0);
    job(pb, c1, 3, bb, 3, s1);
    CHECK(flush_jobs() == 0);
    floe_ice_data_file_t f;
    describe(&f, pa, FLOE_ICE_CONTENT_DATA, 3, a, 2);
    CHECK(commit_files("evolve", FLOE_ICE_OP_APPEND, &f, 1) == 0);
    /* evolve through the catalog, REST style */
    floe_ice_req_t rq = {.kind = FLOE_ICE_REQ_ASSERT_CURRENT_SCHEMA_ID, .value = 0};
    floe_ice_update_t ups[2] = {{.kind = FLOE_ICE_UP_ADD_SCHEMA, .schema = s1},
                                {.kind = FLOE_ICE_UP_SET_CURRENT_SCHEMA, .id = -1}};
    CHECK(floe_ice_catalog_commit(cat, "db", "evolve", &rq, 1, ups, 2, NULL, &e) == 0);
    describe(&f, pb, FLOE_ICE_CONTENT_DATA, 3, bb, 3);
    CHECK(commit_files("evolve", FLOE_ICE_OP_APPEND, &f, 1) == 0);
    json_t *rows = json_array();
    for (int i = 0; i < 3; i++) {
        json_t *o = json_object();
        json_object_set(o, "id", a[i * 2].json);
        json_object_set(o, "label", a[i * 2 + 1].json);
        json_object_set_new(o, "score", json_null());
        json_array_append_new(rows, o);
    }
    expect_rows(rows, bb, c1, 3, 3, NULL);
    const char *cn[] = {"id", "label", "score"};
    add_expect("evolve", rows, cn, 3);
    free_cells(a, 6);
    free_cells(bb, 9);
    free(pa);
    free(pb);
    floe_ice_schema_free(s0);
    floe_ice_schema_free(s1);
}

/* Group rows by partition tuple, write one file per group under its
 * partition path, commit them in one append. */
static void write_partitioned(const char *table, const floe_ice_schema_t *s,
                              const floe_ice_spec_t *sp, const col_t *cols, size_t ncols,
                              cell_t *cells, floe_ice_value_t *vals, size_t nrows)
{
    floe_err_t e;
    floe_ice_value_t *pv = calloc(nrows * sp->nfields, sizeof *pv);
    char **ppath = calloc(nrows, sizeof *ppath);
    for (size_t r = 0; r < nrows; r++) {
        for (size_t k = 0; k < sp->nfields; k++) {
            const floe_ice_partition_field_t *pf = &sp->fields[k];
            const floe_ice_field_t *src = floe_ice_schema_find(s, pf->source_id);
            size_t c = 0;
            while (c < ncols && cols[c].id != pf->source_id) c++;
            CHECK(floe_ice_transform_apply(pf->transform, src->type, &vals[r * ncols + c],
                                           &pv[r * sp->nfields + k], &e) == 0);
        }
        floe_buf_t b = FLOE_BUF_INIT;
        CHECK(floe_ice_spec_partition_path(sp, &pv[r * sp->nfields], &b, &e) == 0);
        ppath[r] = strdup(floe_buf_cstr(&b));
        floe_buf_free(&b);
    }
    bool *done = calloc(nrows, 1);
    floe_ice_data_file_t files[64];
    char *paths[64];
    cell_t *groups[64];
    size_t gn[64], gfirst[64], ng = 0;
    for (size_t r = 0; r < nrows; r++) {
        if (done[r]) continue;
        groups[ng] = calloc(nrows * ncols, sizeof(cell_t));
        gn[ng] = 0;
        gfirst[ng] = r;
        for (size_t q = r; q < nrows; q++)
            if (!done[q] && strcmp(ppath[q], ppath[r]) == 0) {
                done[q] = true;
                memcpy(&groups[ng][gn[ng] * ncols], &cells[q * ncols], ncols * sizeof(cell_t));
                gn[ng]++;
            }
        paths[ng] = data_path(table, ppath[r]);
        job(paths[ng], cols, ncols, groups[ng], gn[ng], s);
        ng++;
    }
    CHECK(flush_jobs() == 0);
    for (size_t g = 0; g < ng; g++) {
        describe(&files[g], paths[g], FLOE_ICE_CONTENT_DATA, (int64_t)gn[g], groups[g], ncols);
        files[g].spec_id = sp->spec_id;
        files[g].npartition = sp->nfields;
        files[g].partition = calloc(sp->nfields, sizeof(floe_ice_value_t));
        size_t first = gfirst[g]; /* every row of the group has this tuple */
        for (size_t k = 0; k < sp->nfields; k++)
            floe_ice_value_copy(&files[g].partition[k], &pv[first * sp->nfields + k]);
        free(paths[g]);
        free(groups[g]);
    }
    CHECK(commit_files(table, FLOE_ICE_OP_APPEND, files, ng) == 0);
    for (size_t i = 0; i < nrows * sp->nfields; i++) floe_ice_value_clear(&pv[i]);
    for (size_t r = 0; r < nrows; r++) free(ppath[r]);
    free(pv);
    free(ppath);
    free(done);
}

/* C: every transform, then spec evolution */
static void table_parts(void)
{
    floe_err_t e;
    floe_ice_type_t *r = floe_ice_type_struct();
    floe_ice_struct_add(r, 1, "id", true, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    floe_ice_struct_add(r, 2, "region", false, floe_ice_type_prim(FLOE_ICE_STRING), NULL);
    floe_ice_struct_add(r, 3, "name", false, floe_ice_type_prim(FLOE_ICE_STRING), NULL);
    floe_ice_struct_add(r, 4, "ts", false, floe_ice_type_prim(FLOE_ICE_TIMESTAMPTZ), NULL);
    floe_ice_struct_add(r, 5, "d", false, floe_ice_type_prim(FLOE_ICE_DATE), NULL);
    floe_ice_schema_t *s = floe_ice_schema_new(0, r);
    int32_t last = 999;
    floe_ice_spec_t *sp = floe_ice_spec_parse(s,
                                              "region, bucket(id, 4), truncate(name, 2), year(ts), "
                                              "month(ts), day(d), hour(ts), void(name)",
                                              0, &last, &e);
    CHECK(sp != NULL);
    if (!sp) {
        floe_ice_schema_free(s);
        return;
    }
    CHECK(floe_ice_catalog_create_table(cat, "db", "parts", s, sp, NULL, NULL, NULL, &e) == 0);
    col_t cols[] = {{"id", "BIGINT", 1},
                    {"region", "VARCHAR", 2},
                    {"name", "VARCHAR", 3},
                    {"ts", "TIMESTAMPTZ", 4},
                    {"d", "DATE", 5}};
    enum { N1 = 12, N2 = 6, NC = 5 };
    cell_t cells[(N1 + N2) * NC];
    floe_ice_value_t vals[(N1 + N2) * NC];
    memset(vals, 0, sizeof vals);
    static const char *names[] = {"alpha", "beta", "gamma", "al", "b", NULL};
    for (int i = 0; i < N1 + N2; i++) {
        int64_t ts =
            base_ts + (int64_t)(i % 5) * 40 * 86400000000LL + (int64_t)(i % 3) * 3600000000LL;
        int32_t d = 17486 + i % 4;
        const char *nm = names[i % 6], *rg = i % 7 == 6 ? NULL : regions[i % 3];
        cells[i * NC] = c_long(100 + i);
        cells[i * NC + 1] = c_str(rg);
        cells[i * NC + 2] = c_str(nm);
        cells[i * NC + 3] = c_ts(ts);
        cells[i * NC + 4] = c_date(d);
        vals[i * NC] = (floe_ice_value_t){.kind = FLOE_ICE_LONG, .v.l = 100 + i};
        if (rg) floe_ice_value_set_bytes(&vals[i * NC + 1], FLOE_ICE_STRING, rg, strlen(rg));
        else
            vals[i * NC + 1] = (floe_ice_value_t){.kind = FLOE_ICE_STRING, .is_null = true};
        if (nm) floe_ice_value_set_bytes(&vals[i * NC + 2], FLOE_ICE_STRING, nm, strlen(nm));
        else
            vals[i * NC + 2] = (floe_ice_value_t){.kind = FLOE_ICE_STRING, .is_null = true};
        vals[i * NC + 3] = (floe_ice_value_t){.kind = FLOE_ICE_TIMESTAMPTZ, .v.l = ts};
        vals[i * NC + 4] = (floe_ice_value_t){.kind = FLOE_ICE_DATE, .v.i = d};
    }
    write_partitioned("parts", s, sp, cols, NC, cells, vals, N1);
    /* spec evolution: bucket(id, 8), day(ts) */
    floe_ice_table_t *t;
    CHECK(floe_ice_catalog_load_table(cat, "db", "parts", &t, &e) == 0);
    int32_t lp = floe_ice_table_metadata(t)->last_partition_id;
    floe_ice_spec_t *sp2 = floe_ice_spec_parse(s, "bucket(id, 8), day(ts)", 0, &lp, &e);
    floe_ice_req_t rq = {.kind = FLOE_ICE_REQ_ASSERT_DEFAULT_SPEC_ID, .value = 0};
    floe_ice_update_t ups[2] = {{.kind = FLOE_ICE_UP_ADD_SPEC, .spec = sp2},
                                {.kind = FLOE_ICE_UP_SET_DEFAULT_SPEC, .id = -1}};
    floe_ice_table_t *t2 = NULL;
    CHECK(floe_ice_catalog_commit(cat, "db", "parts", &rq, 1, ups, 2, &t2, &e) == 0);
    const floe_ice_spec_t *bound =
        t2 ? floe_ice_metadata_default_spec(floe_ice_table_metadata(t2)) : NULL;
    CHECK(bound && bound->spec_id == 1);
    if (bound) write_partitioned("parts", s, bound, cols, NC, cells + N1 * NC, vals + N1 * NC, N2);
    floe_ice_table_free(t);
    floe_ice_table_free(t2);
    json_t *rows = json_array();
    expect_rows(rows, cells, cols, NC, N1 + N2, NULL);
    const char *cn[] = {"id", "region", "name", "ts", "d"};
    add_expect("parts", rows, cn, 5);
    free_cells(cells, (N1 + N2) * NC);
    for (int i = 0; i < (N1 + N2) * NC; i++) floe_ice_value_clear(&vals[i]);
    floe_ice_spec_free(sp);
    floe_ice_spec_free(sp2);
    floe_ice_schema_free(s);
}

static floe_ice_schema_t *id_region_schema(bool identifier)
{
    floe_ice_type_t *r = floe_ice_type_struct();
    floe_ice_struct_add(r, 1, "id", true, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    floe_ice_struct_add(r, 2, "region", false, floe_ice_type_prim(FLOE_ICE_STRING), NULL);
    floe_ice_schema_t *s = floe_ice_schema_new(0, r);
    if (identifier) {
        s->identifier_ids = malloc(sizeof(int32_t));
        s->identifier_ids[0] = 1;
        s->n_identifier_ids = 1;
    }
    return s;
}

static void id_rows(cell_t *cells, int from, int n)
{
    for (int i = 0; i < n; i++) {
        cells[i * 2] = c_long(from + i);
        cells[i * 2 + 1] = c_str(regions[(from + i) % 3]);
    }
}

/* D: position deletes */
static void table_posdel(void)
{
    floe_err_t e;
    floe_ice_schema_t *s = id_region_schema(false);
    CHECK(floe_ice_catalog_create_table(cat, "db", "posdel", s, NULL, NULL, NULL, NULL, &e) == 0);
    col_t cols[] = {{"id", "BIGINT", 1}, {"region", "VARCHAR", 2}};
    col_t dcols[] = {{"file_path", "VARCHAR", 2147483546}, {"pos", "BIGINT", 2147483545}};
    cell_t a[10], b[10], dl[6];
    id_rows(a, 0, 5);
    id_rows(b, 5, 5);
    char *pa = data_path("posdel", NULL), *pb = data_path("posdel", NULL),
         *pd = data_path("posdel", NULL);
    dl[0] = c_str(pa);
    dl[1] = c_long(1);
    dl[2] = c_str(pa);
    dl[3] = c_long(3);
    dl[4] = c_str(pb);
    dl[5] = c_long(0);
    job(pa, cols, 2, a, 5, s);
    job(pb, cols, 2, b, 5, s);
    job(pd, dcols, 2, dl, 3, NULL);
    CHECK(flush_jobs() == 0);
    floe_ice_data_file_t f[2];
    describe(&f[0], pa, FLOE_ICE_CONTENT_DATA, 5, a, 2);
    describe(&f[1], pb, FLOE_ICE_CONTENT_DATA, 5, b, 2);
    CHECK(commit_files("posdel", FLOE_ICE_OP_APPEND, f, 2) == 0);
    describe(&f[0], pd, FLOE_ICE_CONTENT_POSITION_DELETES, 3, NULL, 2);
    CHECK(commit_files("posdel", FLOE_ICE_OP_ROW_DELTA, f, 1) == 0);
    json_t *rows = json_array();
    static const int keep_a[] = {0, 2, 4}, keep_b[] = {1, 2, 3, 4};
    for (int i = 0; i < 3; i++) expect_rows(rows, &a[keep_a[i] * 2], cols, 2, 1, NULL);
    for (int i = 0; i < 4; i++) expect_rows(rows, &b[keep_b[i] * 2], cols, 2, 1, NULL);
    const char *cn[] = {"id", "region"};
    add_expect("posdel", rows, cn, 2);
    free_cells(a, 10);
    free_cells(b, 10);
    free_cells(dl, 6);
    free(pa);
    free(pb);
    free(pd);
    floe_ice_schema_free(s);
}

/* E: equality deletes (delete files hold only the equality column) */
static void table_eqdel(void)
{
    floe_err_t e;
    floe_ice_schema_t *s = id_region_schema(true);
    CHECK(floe_ice_catalog_create_table(cat, "db", "eqdel", s, NULL, NULL, NULL, NULL, &e) == 0);
    col_t cols[] = {{"id", "BIGINT", 1}, {"region", "VARCHAR", 2}};
    col_t dcols[] = {{"id", "BIGINT", 1}};
    cell_t a[12], b[4], c[2], dl[2];
    id_rows(a, 0, 6);
    id_rows(b, 10, 2);
    id_rows(c, 1, 1); /* id 1 again, after the delete: stays */
    dl[0] = c_long(1);
    dl[1] = c_long(4);
    char *pa = data_path("eqdel", NULL), *pb = data_path("eqdel", NULL),
         *pc = data_path("eqdel", NULL), *pd = data_path("eqdel", NULL);
    job(pa, cols, 2, a, 6, s);
    job(pb, cols, 2, b, 2, s);
    job(pc, cols, 2, c, 1, s);
    job(pd, dcols, 1, dl, 2, NULL);
    CHECK(flush_jobs() == 0);
    floe_ice_data_file_t f[2];
    describe(&f[0], pa, FLOE_ICE_CONTENT_DATA, 6, a, 2);
    CHECK(commit_files("eqdel", FLOE_ICE_OP_APPEND, f, 1) == 0);
    describe(&f[0], pb, FLOE_ICE_CONTENT_DATA, 2, b, 2);
    describe(&f[1], pd, FLOE_ICE_CONTENT_EQUALITY_DELETES, 2, dl, 1);
    f[1].equality_ids = malloc(sizeof(int32_t));
    f[1].equality_ids[0] = 1;
    f[1].nequality_ids = 1;
    CHECK(commit_files("eqdel", FLOE_ICE_OP_ROW_DELTA, f, 2) == 0);
    describe(&f[0], pc, FLOE_ICE_CONTENT_DATA, 1, c, 2);
    CHECK(commit_files("eqdel", FLOE_ICE_OP_APPEND, f, 1) == 0);
    json_t *rows = json_array();
    static const int keep_a[] = {0, 2, 3, 5};
    for (int i = 0; i < 4; i++) expect_rows(rows, &a[keep_a[i] * 2], cols, 2, 1, NULL);
    expect_rows(rows, b, cols, 2, 2, NULL);
    expect_rows(rows, c, cols, 2, 1, NULL);
    const char *cn[] = {"id", "region"};
    add_expect("eqdel", rows, cn, 2);
    free_cells(a, 12);
    free_cells(b, 4);
    free_cells(c, 2);
    free_cells(dl, 2);
    free(pa);
    free(pb);
    free(pc);
    free(pd);
    floe_ice_schema_free(s);
}

/* F: data files written by floe's own Parquet writer (zstd, field ids,
 * iceberg.schema), three appends */
static int write_floe_parquet(const char *path, const floe_ice_schema_t *s, const int64_t *ids,
                              const char *const *regions_, size_t n, floe_err_t *e)
{
    floe_pq_schema_t *ps = floe_pq_schema_new();
    floe_pq_node_t a = floe_pq_leaf("id", FLOE_PQ_REQUIRED, FLOE_PQ_INT64, 1);
    floe_pq_node_t b = floe_pq_leaf("region", FLOE_PQ_OPTIONAL, FLOE_PQ_BYTE_ARRAY, 2);
    b.logical = FLOE_PQ_LT_STRING;
    if (floe_pq_schema_add(ps, &a, e) < 0 || floe_pq_schema_add(ps, &b, e) < 0) {
        floe_pq_schema_free(ps);
        return -1;
    }
    floe_buf_t out = FLOE_BUF_INIT;
    floe_pq_write_opts_t o = floe_pq_write_opts_default();
    floe_pq_writer_t *w = floe_pq_writer_new(ps, &o, floe_pq_sink_buf, &out, e);
    char *sj = floe_ice_schema_to_json(s, e);
    int16_t def[16];
    floe_slice_t vals[16];
    size_t nv = 0;
    for (size_t i = 0; i < n; i++) {
        def[i] = regions_[i] ? 1 : 0;
        if (regions_[i]) vals[nv++] = floe_slice_str(regions_[i]);
    }
    int rc = (w && sj && floe_pq_writer_set_kv(w, "iceberg.schema", sj, e) == 0 &&
              floe_pq_write_column(w, 0, n, NULL, NULL, ids, n, e) == 0 &&
              floe_pq_write_column(w, 1, n, def, NULL, vals, nv, e) == 0 &&
              floe_pq_writer_rows(w, n, e) == 0 && floe_pq_writer_close(w, e) == 0)
                 ? 0
                 : -1;
    if (rc == 0) rc = floe_fileio_write(io, path, out.data, out.len, FLOE_IO_EXCL, e);
    free(sj);
    floe_pq_writer_free(w);
    floe_pq_schema_free(ps);
    floe_buf_free(&out);
    return rc;
}

static void table_floe_writer(void)
{
    floe_err_t e;
    floe_ice_schema_t *s = id_region_schema(false);
    CHECK(floe_ice_catalog_create_table(cat, "db", "floewriter", s, NULL, NULL, NULL, NULL, &e) ==
          0);
    json_t *rows = json_array();
    for (int k = 0; k < 3; k++) {
        int64_t ids[4];
        const char *rg[4];
        for (int i = 0; i < 4; i++) {
            ids[i] = k * 4 + i;
            rg[i] = i == 3 ? NULL : regions[i];
            json_t *o = json_object();
            json_object_set_new(o, "id", json_integer(ids[i]));
            json_object_set_new(o, "region", rg[i] ? json_string(rg[i]) : json_null());
            json_array_append_new(rows, o);
        }
        char *p = data_path("floewriter", NULL);
        CHECK(write_floe_parquet(p, s, ids, rg, 4, &e) == 0);
        floe_ice_data_file_t f;
        describe(&f, p, FLOE_ICE_CONTENT_DATA, 4, NULL, 2);
        CHECK(f.file_size > 0);
        CHECK(commit_files("floewriter", FLOE_ICE_OP_APPEND, &f, 1) == 0);
        free(p);
    }
    const char *cn[] = {"id", "region"};
    add_expect("floewriter", rows, cn, 2);
    floe_ice_schema_free(s);
}

/* G: 1,000 commits of one file each, with Iceberg's manifest merging (the
 * default minimum of 100), old metadata files deleted (20 kept) and an
 * expiry every 100 commits: the manifest list never reaches 100, floe's
 * planner sees every file, and peers read every row (merged manifests
 * hold files of expired snapshots as EXISTING entries). */
static void table_thousand_commits(void)
{
    floe_err_t e;
    floe_ice_schema_t *s = id_region_schema(false);
    floe_ice_props_t props = {0};
    floe_ice_props_set(&props, "write.metadata.delete-after-commit.enabled", "true");
    floe_ice_props_set(&props, "write.metadata.previous-versions-max", "20");
    CHECK(floe_ice_catalog_create_table(cat, "db", "thousand", s, NULL, NULL, &props, NULL, &e) ==
          0);
    floe_ice_props_clear(&props);
    json_t *rows = json_array();
    size_t longest = 0, merged = 0;
    int failed = 0;
    for (int k = 0; k < 1000 && !failed; k++) {
        int64_t id = k;
        const char *rg = regions[k % 3];
        char *p = data_path("thousand", NULL);
        floe_ice_data_file_t f;
        failed |= write_floe_parquet(p, s, &id, &rg, 1, &e) != 0;
        describe(&f, p, FLOE_ICE_CONTENT_DATA, 1, NULL, 2);
        free(p);
        floe_ice_commit_t *c = floe_ice_commit_new(cat, "db", "thousand", FLOE_ICE_OP_APPEND, &e);
        floe_ice_commit_add(c, &f, &e);
        failed |= floe_ice_commit_run(c, NULL, &e) != 0;
        floe_ice_commit_stats_t st;
        floe_ice_commit_stats(c, &st);
        if (st.manifests > longest) longest = st.manifests;
        merged += st.manifests_merged;
        floe_ice_commit_free(c);
        floe_ice_data_file_clear(&f);
        json_t *o = json_object();
        json_object_set_new(o, "id", json_integer(id));
        json_object_set_new(o, "region", json_string(rg));
        json_array_append_new(rows, o);
        if (k % 100 == 99) {
            floe_ice_expire_opts_t eo = {
                .older_than_ms = -1, .keep_last = 10, .delete_files = true};
            failed |= floe_ice_expire_snapshots(cat, "db", "thousand", &eo, NULL, &e) != 0;
        }
    }
    if (failed) fprintf(stderr, "thousand: %s\n", e.msg);
    CHECK(!failed);
    CHECK(longest < 100);
    CHECK(merged >= 900);
    floe_ice_table_t *t;
    CHECK(floe_ice_catalog_load_table(cat, "db", "thousand", &t, &e) == 0);
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    CHECK_EQ(floe_ice_table_version(t), 1001 + 10);
    CHECK_EQ(md->nmetadata_log, 20);
    CHECK(md->nsnapshots <= 10 + 99);
    floe_ice_scan_t *sc;
    CHECK(floe_ice_scan_plan(io, md, -1, NULL, 0, &sc, &e) == 0);
    CHECK_EQ(floe_ice_scan_ntasks(sc), 1000);
    floe_ice_scan_free(sc);
    floe_ice_table_free(t);
    const char *cn[] = {"id", "region"};
    add_expect("thousand", rows, cn, 2);
    floe_ice_schema_free(s);
}

static void peers_read_tables(void)
{
    char p[300];
    snprintf(p, sizeof p, "%s/expect.json", root);
    json_dump_file(expect, p, 0);
    CHECK(run_cmd("cd '%s' && node iceberg_verify.mjs '%s'", interop, p) == 0);
    CHECK(run_cmd("/usr/bin/python3 '%s/iceberg_verify_avro.py' %s/db/appends/metadata "
                  "%s/db/evolve/metadata "
                  "%s/db/parts/metadata %s/db/posdel/metadata %s/db/eqdel/metadata "
                  "%s/db/floewriter/metadata %s/db/thousand/metadata",
                  interop, root, root, root, root, root, root, root) == 0);
}

int main(void)
{
    const char *froot = getenv("FLOE_ROOT");
    snprintf(interop, sizeof interop, "%s/tests/interop", froot ? froot : ".");
    char probe[1200];
    snprintf(probe, sizeof probe, "%s/node_modules/icebird/package.json", interop);
    if (access(probe, R_OK) != 0 || system("node --version >/dev/null 2>&1") != 0 ||
        system("/usr/bin/python3 -c 'import avro' >/dev/null 2>&1") != 0) {
        printf("ok - iceberg_interop # SKIP node, icebird or python3-avro missing\n");
        return 0;
    }
    if (interop[0] != '/') {
        char *abs = realpath(interop, NULL);
        if (abs) {
            snprintf(interop, sizeof interop, "%s", abs);
            free(abs);
        }
    }
    snprintf(root, sizeof root, "/tmp/floe-ice-interop-%d", (int)getpid());
    char cmd[800];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", root, root);
    if (system(cmd) != 0) return 1;
    floe_err_t e;
    io = floe_fileio_local_new(&e);
    cat = floe_ice_catalog_fs_new(io, root, &e);
    jobs = json_array();
    expect = json_array();
    RUN(table_appends);
    RUN(table_evolve);
    RUN(table_parts);
    RUN(table_posdel);
    RUN(table_eqdel);
    RUN(table_floe_writer);
    RUN(table_thousand_commits);
    RUN(peers_read_tables);
    json_decref(jobs);
    json_decref(expect);
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
    if (!t_tests_failed) {
        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        if (system(cmd) != 0) return 1;
    }
    return t_tests_failed ? 1 : 0;
}
