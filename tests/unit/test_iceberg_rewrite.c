/* Rewriting data files (iceberg/rewrite.h): table-topic files written by
 * the engine's own writer compact into files holding the very rows, ids,
 * partition values and metrics a single file of all those rows would have;
 * schema evolution across inputs; row filters; record counts; failures at
 * every storage operation leave nothing behind. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/parquet.h"
#include "iceberg/metadata.h"
#include "iceberg/read.h"
#include "iceberg/rewrite.h"
#include "pq_gen.h"
#include "table/convert.h"
#include "table/datafile.h"
#include "table/schema_map.h"
#include "table/source_batches.h"
#include "test.h"

static char dir[256];
static floe_fileio_t *io;

/* ---- table-topic files, as the engine writes them ---------------------------- */

/* Records go to two buffers: `rows`, drained into one data file after
 * another, and `all`, which keeps every record (minus the ones a test
 * drops) for the reference file: what a single file of all the rows,
 * written by the table's own writer at the final schema, holds. */
typedef struct tbl {
    floe_rows_t *rows, *all;
    floe_conv_t *conv, *conv_all;
    floe_ice_schema_t *schema;
    int32_t last;
    floe_ice_field_remap_t widened[8];
    size_t nwidened;
    floe_dfw_t *w;
    char *sj;
    int64_t off;
    floe_ice_data_file_t files[16];
    size_t nfiles;
} tbl_t;

static void tbl_init(tbl_t *t)
{
    floe_err_t e;
    memset(t, 0, sizeof *t);
    t->rows = floe_rows_new(NULL);
    t->all = floe_rows_new(NULL);
    t->conv = floe_conv_new(t->rows, FLOE_CONV_JSON, FLOE_CONV_STRING, &e);
    t->conv_all = floe_conv_new(t->all, FLOE_CONV_JSON, FLOE_CONV_STRING, &e);
    t->schema = floe_ice_schema_new(0, floe_ice_type_struct());
}

static void tbl_free(tbl_t *t)
{
    for (size_t i = 0; i < t->nfiles; i++) floe_ice_data_file_clear(&t->files[i]);
    floe_conv_free(t->conv);
    floe_conv_free(t->conv_all);
    floe_rows_free(t->rows);
    floe_rows_free(t->all);
    floe_ice_schema_free(t->schema);
    free(t->sj);
}

/* One record (headers h0, h1 when nh > 0); keep: also into `all`. */
static void rec(tbl_t *t, const char *key, const char *json, int nh, bool keep)
{
    uint8_t hdr[32];
    size_t n = 0;
    for (int i = 0; i < nh; i++) {
        hdr[n++] = 2 * 2;
        hdr[n++] = 'h';
        hdr[n++] = (uint8_t)('0' + i);
        hdr[n++] = 2 * 1;
        hdr[n++] = (uint8_t)('a' + (t->off % 3));
    }
    floe_record_t r = {.offset = t->off,
                       .timestamp = 1700000000000LL + t->off * 7,
                       .key = floe_slice_str(key),
                       .key_null = key == NULL,
                       .value = floe_slice_str(json),
                       .header_count = nh,
                       .headers_raw = floe_slice(hdr, n)};
    t->off++;
    floe_tmsg_t m;
    floe_tmsg_from_record(&m, &r);
    floe_conv_stage_t st;
    floe_err_t e;
    CHECK_EQ(floe_conv_record(t->conv, 3, &m, &st, &e), 0);
    if (keep) CHECK_EQ(floe_conv_record(t->conv_all, 3, &m, &st, &e), 0);
}

/* The buffered rows as one row group of the open file (opened, with the
 * schema synced, on the first call). */
static void rg(tbl_t *t, const char *name)
{
    floe_err_t e;
    if (!t->w) {
        floe_ice_schema_t *before = floe_ice_schema_dup(t->schema);
        bool changed;
        CHECK_EQ(floe_tschema_merge(t->rows, t->schema, &t->last, false, &changed, &e), 0);
        floe_twiden_t *wd = NULL;
        size_t nw = 0;
        CHECK_EQ(floe_tschema_widened(before, t->schema, &wd, &nw), 0);
        for (size_t i = 0; i < nw && t->nwidened < 8; i++)
            t->widened[t->nwidened++] = (floe_ice_field_remap_t){wd[i].from, wd[i].to};
        free(wd);
        floe_ice_schema_free(before);
        free(t->sj);
        t->sj = floe_ice_schema_to_json(t->schema, &e);
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        t->w = floe_dfw_open(io, path, t->rows, t->sj, NULL, &e);
        CHECK(t->w != NULL);
        if (!t->w) return;
    }
    CHECK_EQ(floe_dfw_append(t->w, t->rows, &e), 0);
    CHECK_EQ(floe_dfw_flush(t->w, &e), 0);
    floe_rows_clear(t->rows);
}

/* Close the open file as data file number nfiles of spec 1, partition
 * (region "eu", bucket 7). */
static void file_end(tbl_t *t)
{
    floe_err_t e;
    floe_ice_data_file_t *f = &t->files[t->nfiles++];
    CHECK_EQ(floe_dfw_close(t->w, f, &e), 0);
    t->w = NULL;
    f->spec_id = 1;
    f->partition = calloc(2, sizeof *f->partition);
    f->npartition = 2;
    floe_ice_value_set_bytes(&f->partition[0], FLOE_ICE_STRING, "eu", 2);
    f->partition[1].kind = FLOE_ICE_INT;
    f->partition[1].v.i = 7;
}

/* The reference: every kept record in one file at the final schema. */
static void reference(tbl_t *t, floe_ice_data_file_t *ref)
{
    floe_err_t e;
    floe_ice_schema_t *s = floe_ice_schema_dup(t->schema);
    int32_t last = t->last;
    bool changed;
    CHECK_EQ(floe_tschema_merge(t->all, s, &last, false, &changed, &e), 0);
    CHECK(!changed);
    char path[512];
    snprintf(path, sizeof path, "%s/reference.parquet", dir);
    unlink(path);
    floe_dfw_t *w = floe_dfw_open(io, path, t->all, t->sj, NULL, &e);
    CHECK(w != NULL);
    CHECK_EQ(floe_dfw_append(w, t->all, &e), 0);
    CHECK_EQ(floe_dfw_close(w, ref, &e), 0);
    floe_ice_schema_free(s);
}

/* ---- reading back ----------------------------------------------------------- */

/* Rows of the Parquet file at path as JSON lines. */
static void rows_json(const char *path, floe_buf_t *out)
{
    floe_err_t e;
    floe_buf_t data = FLOE_BUF_INIT;
    floe_pq_reader_t *r = floe_ice_parquet_open(io, path, &data, &e);
    CHECK(r != NULL);
    for (int g = 0; r && g < floe_pq_reader_num_row_groups(r); g++)
        CHECK_EQ(pqg_read_json(r, g, out, &e), 0);
    floe_pq_reader_free(r);
    floe_buf_free(&data);
}

/* The Parquet schemas of two files: same nodes, names, ids, types. */
static void same_parquet_schema(const char *a, const char *b)
{
    floe_err_t e;
    floe_buf_t da = FLOE_BUF_INIT, db = FLOE_BUF_INIT;
    floe_pq_reader_t *ra = floe_ice_parquet_open(io, a, &da, &e);
    floe_pq_reader_t *rb = floe_ice_parquet_open(io, b, &db, &e);
    CHECK(ra && rb);
    if (ra && rb) {
        const floe_pq_schema_t *x = floe_pq_reader_schema(ra), *y = floe_pq_reader_schema(rb);
        CHECK_EQ(floe_pq_schema_num_nodes(x), floe_pq_schema_num_nodes(y));
        for (int i = 0; i < floe_pq_schema_num_nodes(x) && i < floe_pq_schema_num_nodes(y); i++) {
            const floe_pq_node_t *p = floe_pq_schema_node(x, i), *q = floe_pq_schema_node(y, i);
            CHECK_STR(p->name, q->name);
            CHECK_EQ(p->field_id, q->field_id);
            CHECK_EQ(p->parent, q->parent);
            CHECK_EQ(p->rep, q->rep);
            CHECK_EQ(p->phys, q->phys);
            CHECK_EQ(p->logical, q->logical);
        }
        CHECK_STR(floe_pq_reader_kv(ra, "iceberg.schema"), floe_pq_reader_kv(rb, "iceberg.schema"));
    }
    floe_pq_reader_free(ra);
    floe_pq_reader_free(rb);
    floe_buf_free(&da);
    floe_buf_free(&db);
}

/* Metrics of out equal those of ref (column sizes aside: pages differ). */
static void same_metrics(const floe_ice_data_file_t *out, const floe_ice_data_file_t *ref)
{
    CHECK_EQ(out->nmetrics, ref->nmetrics);
    for (size_t i = 0; i < ref->nmetrics; i++) {
        const floe_ice_col_metrics_t *r = &ref->metrics[i], *m = NULL;
        for (size_t k = 0; k < out->nmetrics; k++)
            if (out->metrics[k].id == r->id) m = &out->metrics[k];
        CHECK(m != NULL);
        if (!m) continue;
        CHECK_EQ(m->values, r->values);
        CHECK_EQ(m->nulls, r->nulls);
        CHECK_EQ(m->nans, r->nans);
        CHECK(m->size > 0);
        CHECK_EQ(m->has_lower, r->has_lower);
        CHECK_EQ(m->has_upper, r->has_upper);
        CHECK(m->lower.len == r->lower.len &&
              (!r->lower.len || !memcmp(m->lower.data, r->lower.data, r->lower.len)));
        CHECK(m->upper.len == r->upper.len &&
              (!r->upper.len || !memcmp(m->upper.data, r->upper.data, r->upper.len)));
    }
}

static void check_file(const floe_ice_data_file_t *f)
{
    struct stat st;
    CHECK_EQ(stat(f->path, &st), 0);
    CHECK_EQ(f->file_size, st.st_size);
    CHECK_STR(f->format, "PARQUET");
    CHECK_EQ(f->content, FLOE_ICE_CONTENT_DATA);
    CHECK_EQ(f->spec_id, 1);
    CHECK_EQ(f->npartition, 2);
    if (f->npartition == 2) {
        CHECK(f->partition[0].len == 2 && !memcmp(f->partition[0].bytes, "eu", 2));
        CHECK_EQ(f->partition[1].v.i, 7);
    }
}

/* Output names: DIR/out-TAG-SEQ.parquet */
static char *name_out(void *ctx, unsigned seq, floe_err_t *err)
{
    char *p = malloc(600);
    if (!p) {
        floe_err_oom(err);
        return NULL;
    }
    snprintf(p, 600, "%s/out-%s-%u.parquet", dir, (const char *)ctx, seq);
    return p;
}

static void free_outs(floe_ice_data_file_t *outs, size_t n, bool unlink_them)
{
    for (size_t i = 0; i < n; i++) {
        if (unlink_them) unlink(outs[i].path);
        floe_ice_data_file_clear(&outs[i]);
    }
    free(outs);
}

/* Files in dir whose name starts with prefix (or is a temporary). */
static int count_files(const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (!strncmp(de->d_name, prefix, strlen(prefix)) || strstr(de->d_name, ".tmp")) n++;
    if (d) closedir(d);
    return n;
}

/* Five files of events: nested struct, list, the _kafka map of headers,
 * nulls everywhere, two row groups in some. */
static void five_files(tbl_t *t)
{
    char json[400];
    static const char *countries[] = {"DE", "FR", "US"};
    for (int f = 0; f < 5; f++) {
        char name[64];
        snprintf(name, sizeof name, "in-%d.parquet", f);
        for (int g = 0; g < 1 + f % 2; g++) {
            for (int i = 0; i < 40 + f * 13; i++) {
                int64_t n = t->off;
                if (n % 17 == 3) {
                    snprintf(json, sizeof json, "{\"id\":%lld}", (long long)n);
                } else {
                    snprintf(json, sizeof json,
                             "{\"id\":%lld,\"country\":\"%s\",\"name\":\"%s-%lld\",\"score\":%.2f,"
                             "\"tags\":[\"t%lld\",null,\"x\"],\"u\":{\"x\":%lld,\"ok\":%s}}",
                             (long long)n, countries[n % 3],
                             n % 5 ? "caf\xc3\xa9-long-enough-to-be-truncated" : "z", (long long)n,
                             (double)n * 0.25 - 3, (long long)(n % 4), (long long)-n,
                             n % 2 ? "true" : "false");
                }
                rec(t, n % 9 ? "key" : NULL, json, (int)(n % 3), true);
            }
            rg(t, name);
        }
        file_end(t);
    }
}

/* ---- independent readers ------------------------------------------------------ */

/* Lines tests/interop/rewrite_rows.mjs prints for files[0..n) (see there),
 * or NULL when node fails. */
static char *peer_rows(const char *const *files, int n)
{
    floe_buf_t cmd = FLOE_BUF_INIT;
    floe_buf_printf(&cmd, "cd %s/tests/interop && node rewrite_rows.mjs",
                    getenv("FLOE_ROOT") ? getenv("FLOE_ROOT") : ".");
    for (int i = 0; i < n; i++) floe_buf_printf(&cmd, " '%s'", files[i]);
    floe_buf_append_str(&cmd, " 2>&1");
    FILE *p = popen(floe_buf_cstr(&cmd), "r");
    floe_buf_free(&cmd);
    if (!p) return NULL;
    floe_buf_t b = FLOE_BUF_INIT;
    char tmp[4096];
    size_t k;
    while ((k = fread(tmp, 1, sizeof tmp, p)) > 0) floe_buf_append(&b, tmp, k);
    int rc = pclose(p);
    char *out = floe_buf_cstr(&b);
    if (rc != 0) {
        printf("# node: %.500s\n", out ? out : "");
        free(out);
        return NULL;
    }
    return out;
}

/* The lines of text starting with prefix, concatenated. */
static void lines_of(const char *text, const char *prefix, floe_buf_t *out)
{
    size_t pl = strlen(prefix);
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len >= pl && !memcmp(p, prefix, pl)) {
            floe_buf_append(out, p, len);
            floe_buf_append_u8(out, '\n');
        }
        p = nl ? nl + 1 : NULL;
    }
}

static size_t count_lines(const floe_buf_t *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->len; i++) n += b->data[i] == '\n';
    return n;
}

/* DuckDB and hyparquet read the compacted file as the very rows they read
 * in the small files, and DuckDB's parquet_schema() shows the same field
 * ids. */
static void compacted_rows_read_by_duckdb_and_hyparquet(void)
{
    tbl_t t;
    tbl_init(&t);
    five_files(&t);
    floe_ice_rewrite_input_t in[5];
    const char *paths[5];
    for (int i = 0; i < 5; i++) {
        in[i] = (floe_ice_rewrite_input_t){&t.files[i], NULL, 0};
        paths[i] = t.files[i].path;
    }
    floe_ice_data_file_t *outs;
    size_t nout;
    floe_err_t e;
    CHECK_EQ(floe_ice_rewrite(io, t.schema, in, 5, name_out, "peer", NULL, &outs, &nout, &e), 0);
    CHECK_EQ(nout, 1);
    char *before = peer_rows(paths, 5);
    const char *op = nout ? outs[0].path : paths[0];
    char *after = peer_rows(&op, 1);
    CHECK(before && after);
    const char *kinds[] = {"duck ", "hyp ", "ids "};
    for (int k = 0; before && after && k < 3; k++) {
        floe_buf_t x = FLOE_BUF_INIT, y = FLOE_BUF_INIT;
        lines_of(before, kinds[k], &x);
        lines_of(after, kinds[k], &y);
        CHECK_EQ(count_lines(&x), k < 2 ? (size_t)t.off : 1);
        CHECK(x.len == y.len && !memcmp(x.data, y.data, x.len));
        if (k == 2) /* the table's ids, from _kafka's down */
            CHECK(strstr(floe_buf_cstr(&x), "[\"_kafka\",1],[\"partition\",2],[\"offset\",3]") !=
                  NULL);
        floe_buf_free(&x);
        floe_buf_free(&y);
    }
    free(before);
    free(after);
    free_outs(outs, nout, true);
    for (size_t i = 0; i < t.nfiles; i++) unlink(t.files[i].path);
    tbl_free(&t);
}

/* ---- tests ------------------------------------------------------------------ */

static void compacts_table_files_exactly(void)
{
    tbl_t t;
    tbl_init(&t);
    five_files(&t);
    floe_ice_data_file_t ref;
    reference(&t, &ref);
    floe_buf_t want = FLOE_BUF_INIT;
    rows_json(ref.path, &want);
    for (int decode = 0; decode < 2; decode++) {
        floe_ice_rewrite_input_t in[5];
        for (int i = 0; i < 5; i++) in[i] = (floe_ice_rewrite_input_t){&t.files[i], NULL, 0};
        floe_ice_rewrite_opts_t o = floe_ice_rewrite_opts_default();
        o.decode_all = decode;
        floe_ice_data_file_t *outs;
        size_t nout;
        floe_err_t e;
        int rc = floe_ice_rewrite(io, t.schema, in, 5, name_out, decode ? "dec" : "copy", &o, &outs,
                                  &nout, &e);
        CHECK_EQ(rc, 0);
        if (rc) {
            printf("# %s\n", e.msg);
            continue;
        }
        CHECK_EQ(nout, 1);
        CHECK_EQ(outs[0].record_count, ref.record_count);
        check_file(&outs[0]);
        floe_buf_t got = FLOE_BUF_INIT;
        rows_json(outs[0].path, &got);
        CHECK(got.len > 1000);
        CHECK(got.len == want.len && !memcmp(got.data, want.data, got.len));
        same_parquet_schema(outs[0].path, ref.path);
        same_metrics(&outs[0], &ref);
        floe_buf_free(&got);
        free_outs(outs, nout, true);
    }
    floe_buf_free(&want);
    unlink(ref.path);
    floe_ice_data_file_clear(&ref);
    for (size_t i = 0; i < t.nfiles; i++) unlink(t.files[i].path);
    tbl_free(&t);
}

/* Files written while the schema grew: fields added at the top and inside
 * a struct, a long field widened to double (a new field id, floe's own
 * widening), a list appearing later. */
static void evolution_of_table_files(void)
{
    tbl_t t;
    tbl_init(&t);
    char json[300];
    for (int i = 0; i < 30; i++) {
        snprintf(json, sizeof json, "{\"id\":%d,\"n\":%d,\"u\":{\"x\":%d}}", i, i * 3, i % 4);
        rec(&t, "k", json, 1, true);
    }
    rg(&t, "ev-0.parquet");
    file_end(&t);
    for (int i = 0; i < 30; i++) {
        snprintf(json, sizeof json,
                 "{\"id\":%d,\"n\":%d,\"u\":{\"x\":%d,\"y\":\"s%d\"},\"extra\":true,"
                 "\"tags\":[%d,%d]}",
                 i, -i, i, i, i, i + 1);
        rec(&t, "k", json, 0, true);
    }
    rg(&t, "ev-1.parquet");
    file_end(&t);
    for (int i = 0; i < 30; i++) {
        snprintf(json, sizeof json, "{\"id\":%d,\"n\":%d.5,\"u\":null}", i, i);
        rec(&t, NULL, json, 2, true);
    }
    rg(&t, "ev-2.parquet");
    file_end(&t);
    CHECK_EQ(t.nwidened, 1); /* n: long -> double under a new id */
    floe_ice_data_file_t ref;
    reference(&t, &ref);
    floe_buf_t want = FLOE_BUF_INIT, got = FLOE_BUF_INIT;
    rows_json(ref.path, &want);
    floe_ice_rewrite_input_t in[3];
    for (int i = 0; i < 3; i++) in[i] = (floe_ice_rewrite_input_t){&t.files[i], NULL, 0};
    floe_ice_rewrite_opts_t o = floe_ice_rewrite_opts_default();
    o.remap = t.widened;
    o.nremap = t.nwidened;
    floe_ice_data_file_t *outs;
    size_t nout;
    floe_err_t e;
    int rc = floe_ice_rewrite(io, t.schema, in, 3, name_out, "ev", &o, &outs, &nout, &e);
    CHECK_EQ(rc, 0);
    if (rc == 0) {
        CHECK_EQ(nout, 1);
        rows_json(outs[0].path, &got);
        CHECK(got.len == want.len && !memcmp(got.data, want.data, got.len));
        if (got.len != want.len || memcmp(got.data, want.data, got.len))
            printf("# want %.300s\n# got  %.300s\n", want.data, got.data);
        same_parquet_schema(outs[0].path, ref.path);
        same_metrics(&outs[0], &ref);
        free_outs(outs, nout, true);
    } else {
        printf("# %s\n", e.msg);
    }
    /* without the remap, the old long field's values would be lost */
    o.nremap = 0;
    rc = floe_ice_rewrite(io, t.schema, in, 3, name_out, "ev", &o, &outs, &nout, &e);
    CHECK_EQ(rc, 0);
    if (rc == 0) {
        floe_buf_reset(&got);
        rows_json(outs[0].path, &got);
        CHECK(got.len != want.len || memcmp(got.data, want.data, got.len));
        free_outs(outs, nout, true);
    }
    floe_buf_free(&want);
    floe_buf_free(&got);
    unlink(ref.path);
    floe_ice_data_file_clear(&ref);
    for (size_t i = 0; i < t.nfiles; i++) unlink(t.files[i].path);
    tbl_free(&t);
}

/* ---- a file written by hand, in an older schema ---------------------------- */

static int add(floe_pq_schema_t *s, const char *name, int parent, floe_pq_rep_t rep,
               floe_pq_phys_t phys, floe_pq_logical_t lt, int32_t id)
{
    floe_err_t e;
    floe_pq_node_t n = phys == FLOE_PQ_GROUP ? floe_pq_group(name, rep, lt, id)
                                             : floe_pq_leaf(name, rep, phys, id);
    if (phys != FLOE_PQ_GROUP) n.logical = lt;
    n.parent = parent;
    return floe_pq_schema_add(s, &n, &e);
}

/* Close writer w of schema ps (the file's bytes in buf), free all three,
 * and store the file at DIR/name, described in *f as a data file of nrows
 * rows. */
static void publish(floe_pq_writer_t *w, floe_pq_schema_t *ps, floe_buf_t *buf, const char *name,
                    int64_t nrows, floe_ice_data_file_t *f)
{
    floe_err_t e;
    CHECK_EQ(floe_pq_writer_rows(w, (size_t)nrows, &e), 0);
    CHECK_EQ(floe_pq_writer_close(w, &e), 0);
    floe_pq_writer_free(w);
    floe_pq_schema_free(ps);
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK_EQ(floe_fileio_write(io, path, buf->data, buf->len, 0, &e), 0);
    floe_ice_data_file_init(f);
    floe_ice_data_file_set_path(f, path, "PARQUET");
    f->record_count = nrows;
    f->file_size = (int64_t)buf->len;
    floe_buf_free(buf);
}

/* Four rows in the old schema: i int, f float, l long, w long, s struct<a
 * int>, lst list<struct<p long>>, r required long, m map<string,
 * struct<q int>>. */
static void old_file(const char *name, floe_ice_data_file_t *f)
{
    floe_err_t e;
    floe_pq_schema_t *s = floe_pq_schema_new();
    add(s, "i", -1, FLOE_PQ_OPTIONAL, FLOE_PQ_INT32, 0, 1);
    add(s, "f", -1, FLOE_PQ_OPTIONAL, FLOE_PQ_FLOAT, 0, 2);
    add(s, "l", -1, FLOE_PQ_OPTIONAL, FLOE_PQ_INT64, 0, 3);
    add(s, "w", -1, FLOE_PQ_OPTIONAL, FLOE_PQ_INT64, 0, 4);
    int st = add(s, "s", -1, FLOE_PQ_OPTIONAL, FLOE_PQ_GROUP, 0, 5);
    add(s, "a", st, FLOE_PQ_OPTIONAL, FLOE_PQ_INT32, 0, 6);
    int l = add(s, "lst", -1, FLOE_PQ_OPTIONAL, FLOE_PQ_GROUP, FLOE_PQ_LT_LIST, 7);
    l = add(s, "list", l, FLOE_PQ_REPEATED, FLOE_PQ_GROUP, 0, -1);
    l = add(s, "element", l, FLOE_PQ_OPTIONAL, FLOE_PQ_GROUP, 0, 8);
    add(s, "p", l, FLOE_PQ_OPTIONAL, FLOE_PQ_INT64, 0, 9);
    add(s, "r", -1, FLOE_PQ_REQUIRED, FLOE_PQ_INT64, 0, 10);
    int m = add(s, "m", -1, FLOE_PQ_OPTIONAL, FLOE_PQ_GROUP, FLOE_PQ_LT_MAP, 11);
    m = add(s, "key_value", m, FLOE_PQ_REPEATED, FLOE_PQ_GROUP, 0, -1);
    add(s, "key", m, FLOE_PQ_REQUIRED, FLOE_PQ_BYTE_ARRAY, FLOE_PQ_LT_STRING, 12);
    m = add(s, "value", m, FLOE_PQ_OPTIONAL, FLOE_PQ_GROUP, 0, 13);
    add(s, "q", m, FLOE_PQ_OPTIONAL, FLOE_PQ_INT32, 0, 14);
    floe_buf_t buf = FLOE_BUF_INIT;
    floe_pq_writer_t *w = floe_pq_writer_new(s, NULL, floe_pq_sink_buf, &buf, &e);
    floe_pq_writer_set_kv(w, "iceberg.schema", "{\"type\":\"struct\",\"fields\":[]}", &e);
    int16_t d1[] = {1, 0, 1, 1};
    int32_t iv[] = {1, -2, 2147483647};
    float fv[] = {1.5f, NAN, -0.0f};
    int64_t lv[] = {10, -1, 9007199254740993LL}, wv[] = {-7, 5, 0};
    CHECK_EQ(floe_pq_write_column(w, 0, 4, d1, NULL, iv, 3, &e), 0);
    CHECK_EQ(floe_pq_write_column(w, 1, 4, d1, NULL, fv, 3, &e), 0);
    CHECK_EQ(floe_pq_write_column(w, 2, 4, d1, NULL, lv, 3, &e), 0);
    CHECK_EQ(floe_pq_write_column(w, 3, 4, d1, NULL, wv, 3, &e), 0);
    int16_t sd[] = {2, 0, 1, 2};
    int32_t av[] = {3, -5};
    CHECK_EQ(floe_pq_write_column(w, 4, 4, sd, NULL, av, 2, &e), 0);
    int16_t pd[] = {4, 2, 3, 0, 1, 4}, pr[] = {0, 1, 1, 0, 0, 0};
    int64_t pv[] = {1, 7};
    CHECK_EQ(floe_pq_write_column(w, 5, 6, pd, pr, pv, 2, &e), 0);
    int64_t rv[] = {100, 101, 102, 103};
    CHECK_EQ(floe_pq_write_column(w, 6, 4, NULL, NULL, rv, 4, &e), 0);
    int16_t kd[] = {2, 2, 0, 1, 2}, kr[] = {0, 1, 0, 0, 0};
    floe_slice_t kv[] = {floe_slice_str("a"), floe_slice_str("b"), floe_slice_str("c")};
    CHECK_EQ(floe_pq_write_column(w, 7, 5, kd, kr, kv, 3, &e), 0);
    int16_t qd[] = {4, 2, 0, 1, 3};
    int32_t qv[] = {1};
    CHECK_EQ(floe_pq_write_column(w, 8, 5, qd, kr, qv, 1, &e), 0);
    publish(w, s, &buf, name, 4, f);
}

static floe_ice_type_t *st1(int32_t id, const char *name, floe_ice_kind_t k)
{
    floe_ice_type_t *t = floe_ice_type_struct();
    floe_ice_struct_add(t, id, name, false, floe_ice_type_prim(k), NULL);
    return t;
}

/* The table today: i long, f double, l double (same id), w -> field 20
 * double (floe's widening), s gains b, list elements gain z, r made
 * optional, map values gain y, a new struct top<k>. */
static floe_ice_schema_t *new_schema(void)
{
    floe_ice_type_t *root = floe_ice_type_struct();
    floe_ice_struct_add(root, 1, "i", false, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    floe_ice_struct_add(root, 2, "f", false, floe_ice_type_prim(FLOE_ICE_DOUBLE), NULL);
    floe_ice_struct_add(root, 3, "l", false, floe_ice_type_prim(FLOE_ICE_DOUBLE), NULL);
    floe_ice_struct_add(root, 20, "w", false, floe_ice_type_prim(FLOE_ICE_DOUBLE), NULL);
    floe_ice_type_t *s = st1(6, "a", FLOE_ICE_LONG);
    floe_ice_struct_add(s, 15, "b", false, floe_ice_type_prim(FLOE_ICE_STRING), NULL);
    floe_ice_struct_add(root, 5, "s", false, s, NULL);
    floe_ice_type_t *el = st1(9, "p", FLOE_ICE_LONG);
    floe_ice_struct_add(el, 16, "z", false, floe_ice_type_prim(FLOE_ICE_STRING), NULL);
    floe_ice_struct_add(root, 7, "lst", false, floe_ice_type_list(8, false, el), NULL);
    floe_ice_struct_add(root, 10, "r", false, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    floe_ice_type_t *mv = st1(14, "q", FLOE_ICE_LONG);
    floe_ice_struct_add(mv, 17, "y", false, floe_ice_type_prim(FLOE_ICE_DOUBLE), NULL);
    floe_ice_struct_add(root, 11, "m", false,
                        floe_ice_type_map(12, floe_ice_type_prim(FLOE_ICE_STRING), 13, false, mv),
                        NULL);
    floe_ice_struct_add(root, 18, "top", false, st1(19, "k", FLOE_ICE_INT), NULL);
    return floe_ice_schema_new(1, root);
}

/* Column of field id in r, decoded; -1 when absent. */
static int column_by_id(floe_pq_reader_t *r, int32_t id, floe_pq_column_t *c)
{
    floe_err_t e;
    const floe_pq_schema_t *s = floe_pq_reader_schema(r);
    int n = floe_pq_schema_find_field(s, id);
    int col = n >= 0 ? floe_pq_schema_column_of(s, n) : -1;
    if (col < 0 || floe_pq_read_column(r, 0, col, c, &e) < 0) return -1;
    return 0;
}

static bool levels_are(const floe_pq_column_t *c, const int16_t *def, const int16_t *rep, size_t n)
{
    if (c->n_levels != n) return false;
    for (size_t i = 0; i < n; i++) {
        if (def && (!c->def || c->def[i] != def[i])) return false;
        if (rep && (!c->rep || c->rep[i] != rep[i])) return false;
    }
    return true;
}

static void promotions_and_added_fields(void)
{
    floe_ice_data_file_t f;
    old_file("old.parquet", &f);
    floe_ice_schema_t *s = new_schema();
    floe_ice_field_remap_t remap = {4, 20};
    for (int decode = 0; decode < 2; decode++) {
        floe_ice_rewrite_input_t in = {&f, NULL, 0};
        floe_ice_rewrite_opts_t o = floe_ice_rewrite_opts_default();
        o.remap = &remap;
        o.nremap = 1;
        o.decode_all = decode;
        floe_ice_data_file_t *outs;
        size_t nout;
        floe_err_t e;
        int rc = floe_ice_rewrite(io, s, &in, 1, name_out, "evo", &o, &outs, &nout, &e);
        CHECK_EQ(rc, 0);
        if (rc) {
            printf("# %s\n", e.msg);
            break;
        }
        CHECK_EQ(nout, 1);
        floe_buf_t data = FLOE_BUF_INIT;
        floe_pq_reader_t *r = floe_ice_parquet_open(io, outs[0].path, &data, &e);
        CHECK(r != NULL);
        floe_pq_column_t c;
        /* i: int -> long */
        CHECK_EQ(column_by_id(r, 1, &c), 0);
        int16_t d1[] = {1, 0, 1, 1};
        CHECK(c.phys == FLOE_PQ_INT64 && levels_are(&c, d1, NULL, 4) && c.n_values == 3);
        if (c.n_values == 3) {
            const int64_t *v = c.values;
            CHECK(v[0] == 1 && v[1] == -2 && v[2] == 2147483647);
        }
        floe_pq_column_free(&c);
        /* f: float -> double, NaN and -0.0 kept */
        CHECK_EQ(column_by_id(r, 2, &c), 0);
        CHECK(c.phys == FLOE_PQ_DOUBLE && levels_are(&c, d1, NULL, 4) && c.n_values == 3);
        if (c.n_values == 3) {
            const double *v = c.values;
            CHECK(v[0] == 1.5 && isnan(v[1]) && v[2] == 0 && signbit(v[2]));
        }
        floe_pq_column_free(&c);
        /* l: long -> double, same id; w: long -> double under id 20 */
        CHECK_EQ(column_by_id(r, 3, &c), 0);
        CHECK(c.phys == FLOE_PQ_DOUBLE && c.n_values == 3);
        if (c.n_values == 3) {
            const double *v = c.values;
            CHECK(v[0] == 10 && v[1] == -1 && v[2] == 9007199254740992.0);
        }
        floe_pq_column_free(&c);
        CHECK_EQ(column_by_id(r, 20, &c), 0);
        CHECK(c.phys == FLOE_PQ_DOUBLE && c.n_values == 3);
        if (c.n_values == 3) {
            const double *v = c.values;
            CHECK(v[0] == -7 && v[1] == 5 && v[2] == 0);
        }
        floe_pq_column_free(&c);
        CHECK(floe_pq_schema_find_field(floe_pq_reader_schema(r), 4) < 0);
        /* s.a int -> long; s.b added: null where s is, absent where s is null */
        CHECK_EQ(column_by_id(r, 6, &c), 0);
        int16_t sd[] = {2, 0, 1, 2};
        CHECK(c.phys == FLOE_PQ_INT64 && levels_are(&c, sd, NULL, 4) && c.n_values == 2);
        floe_pq_column_free(&c);
        CHECK_EQ(column_by_id(r, 15, &c), 0);
        int16_t bd[] = {1, 0, 1, 1};
        CHECK(levels_are(&c, bd, NULL, 4) && c.n_values == 0);
        floe_pq_column_free(&c);
        /* list elements: p kept, z added (one entry per element slot) */
        CHECK_EQ(column_by_id(r, 9, &c), 0);
        int16_t pd[] = {4, 2, 3, 0, 1, 4}, pr[] = {0, 1, 1, 0, 0, 0};
        CHECK(levels_are(&c, pd, pr, 6) && c.n_values == 2);
        floe_pq_column_free(&c);
        CHECK_EQ(column_by_id(r, 16, &c), 0);
        int16_t zd[] = {3, 2, 3, 0, 1, 3};
        CHECK(levels_are(&c, zd, pr, 6) && c.n_values == 0);
        floe_pq_column_free(&c);
        /* r: required -> optional */
        CHECK_EQ(column_by_id(r, 10, &c), 0);
        int16_t rd[] = {1, 1, 1, 1};
        CHECK(levels_are(&c, rd, NULL, 4) && c.n_values == 4);
        if (c.n_values == 4) CHECK_EQ(((int64_t *)c.values)[3], 103);
        floe_pq_column_free(&c);
        /* map values: q int -> long, y added */
        CHECK_EQ(column_by_id(r, 14, &c), 0);
        int16_t qd[] = {4, 2, 0, 1, 3}, qr[] = {0, 1, 0, 0, 0};
        CHECK(c.phys == FLOE_PQ_INT64 && levels_are(&c, qd, qr, 5) && c.n_values == 1);
        floe_pq_column_free(&c);
        CHECK_EQ(column_by_id(r, 17, &c), 0);
        int16_t yd[] = {3, 2, 0, 1, 3};
        CHECK(levels_are(&c, yd, qr, 5) && c.n_values == 0);
        floe_pq_column_free(&c);
        CHECK_EQ(column_by_id(r, 12, &c), 0);
        int16_t kd[] = {2, 2, 0, 1, 2};
        CHECK(levels_are(&c, kd, qr, 5) && c.n_values == 3);
        floe_pq_column_free(&c);
        /* a struct added at the top: null in every row */
        CHECK_EQ(column_by_id(r, 19, &c), 0);
        int16_t td[] = {0, 0, 0, 0};
        CHECK(levels_are(&c, td, NULL, 4) && c.n_values == 0);
        floe_pq_column_free(&c);
        /* metrics of converted columns: NaN counted, bounds of the new type */
        for (size_t k = 0; k < outs[0].nmetrics; k++) {
            const floe_ice_col_metrics_t *m = &outs[0].metrics[k];
            if (m->id == 2) {
                CHECK_EQ(m->nans, 1);
                CHECK_EQ(m->nulls, 1);
                CHECK(m->has_lower && m->lower.len == 8);
            } else if (m->id == 1) {
                CHECK(m->has_upper && m->upper.len == 8 &&
                      (int64_t)floe_rd_le64(m->upper.data) == 2147483647);
            } else if (m->id == 19) {
                CHECK_EQ(m->nulls, 4);
                CHECK(!m->has_lower);
            } else if (m->id == 9) {
                CHECK_EQ(m->values, 6);
                CHECK(!m->has_lower); /* inside a list */
            }
        }
        floe_pq_reader_free(r);
        floe_buf_free(&data);
        free_outs(outs, nout, true);
    }
    unlink(f.path);
    floe_ice_data_file_clear(&f);
    floe_ice_schema_free(s);
}

/* Decimals of any stored form become the table's (wider) decimal, their
 * bounds Iceberg's minimal big-endian bytes; timestamps stored in
 * milliseconds become microseconds. */
static void decimals_and_millis_convert(void)
{
    floe_err_t e;
    floe_pq_schema_t *ps = floe_pq_schema_new();
    floe_pq_node_t n = floe_pq_leaf("d1", FLOE_PQ_REQUIRED, FLOE_PQ_INT32, 1);
    n.logical = FLOE_PQ_LT_DECIMAL;
    n.precision = 5;
    n.scale = 2;
    floe_pq_schema_add(ps, &n, &e);
    n = floe_pq_leaf("d2", FLOE_PQ_REQUIRED, FLOE_PQ_INT64, 2);
    n.logical = FLOE_PQ_LT_DECIMAL;
    n.precision = 15;
    n.scale = 2;
    floe_pq_schema_add(ps, &n, &e);
    n = floe_pq_leaf("ts", FLOE_PQ_REQUIRED, FLOE_PQ_INT64, 3);
    n.logical = FLOE_PQ_LT_TIMESTAMP;
    n.unit = FLOE_PQ_MILLIS;
    n.utc = true;
    floe_pq_schema_add(ps, &n, &e);
    n = floe_pq_leaf("d3", FLOE_PQ_REQUIRED, FLOE_PQ_FIXED, 4);
    n.type_length = 4;
    n.logical = FLOE_PQ_LT_DECIMAL;
    n.precision = 9;
    n.scale = 2;
    floe_pq_schema_add(ps, &n, &e);
    floe_buf_t buf = FLOE_BUF_INIT;
    floe_pq_writer_t *w = floe_pq_writer_new(ps, NULL, floe_pq_sink_buf, &buf, &e);
    int32_t v1[] = {12345, -1};
    int64_t v2[] = {123456789012345LL, -5}, v3[] = {1700000000123LL, -2};
    uint8_t b3[] = {0, 0, 0x30, 0x39, 0xff, 0xff, 0xff, 0xff};
    floe_slice_t s3[] = {{b3, 4}, {b3 + 4, 4}};
    CHECK_EQ(floe_pq_write_column(w, 0, 2, NULL, NULL, v1, 2, &e), 0);
    CHECK_EQ(floe_pq_write_column(w, 1, 2, NULL, NULL, v2, 2, &e), 0);
    CHECK_EQ(floe_pq_write_column(w, 2, 2, NULL, NULL, v3, 2, &e), 0);
    CHECK_EQ(floe_pq_write_column(w, 3, 2, NULL, NULL, s3, 2, &e), 0);
    floe_ice_data_file_t f;
    publish(w, ps, &buf, "dec.parquet", 2, &f);
    floe_ice_type_t *root = floe_ice_type_struct();
    floe_ice_struct_add(root, 1, "d1", true, floe_ice_type_decimal(20, 2), NULL);
    floe_ice_struct_add(root, 2, "d2", true, floe_ice_type_decimal(18, 2), NULL);
    floe_ice_struct_add(root, 3, "ts", true, floe_ice_type_prim(FLOE_ICE_TIMESTAMPTZ), NULL);
    floe_ice_struct_add(root, 4, "d3", true, floe_ice_type_decimal(9, 2), NULL);
    floe_ice_schema_t *s = floe_ice_schema_new(1, root);
    floe_ice_rewrite_input_t in = {&f, NULL, 0};
    floe_ice_data_file_t *outs;
    size_t nout;
    int rc = floe_ice_rewrite(io, s, &in, 1, name_out, "dec", NULL, &outs, &nout, &e);
    CHECK_EQ(rc, 0);
    if (rc == 0) {
        floe_buf_t data = FLOE_BUF_INIT;
        floe_pq_reader_t *r = floe_ice_parquet_open(io, outs[0].path, &data, &e);
        CHECK(r != NULL);
        floe_pq_column_t c;
        CHECK_EQ(column_by_id(r, 1, &c), 0); /* decimal(20,2): 9 bytes, big-endian */
        CHECK(c.phys == FLOE_PQ_FIXED && c.n_values == 2);
        if (c.n_values == 2) {
            const floe_slice_t *sl = c.values;
            static const uint8_t a[9] = {0, 0, 0, 0, 0, 0, 0, 0x30, 0x39};
            static const uint8_t b[9] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
            CHECK(sl[0].len == 9 && !memcmp(sl[0].ptr, a, 9));
            CHECK(sl[1].len == 9 && !memcmp(sl[1].ptr, b, 9));
        }
        floe_pq_column_free(&c);
        CHECK_EQ(column_by_id(r, 2, &c), 0);
        CHECK(c.phys == FLOE_PQ_INT64 && c.n_values == 2 &&
              ((int64_t *)c.values)[0] == 123456789012345LL);
        floe_pq_column_free(&c);
        CHECK_EQ(column_by_id(r, 3, &c), 0); /* milliseconds -> microseconds */
        CHECK(c.n_values == 2 && ((int64_t *)c.values)[0] == 1700000000123000LL &&
              ((int64_t *)c.values)[1] == -2000);
        floe_pq_column_free(&c);
        CHECK_EQ(column_by_id(r, 4, &c), 0); /* fixed[4] -> int32 */
        CHECK(c.phys == FLOE_PQ_INT32 && c.n_values == 2 && ((int32_t *)c.values)[0] == 12345 &&
              ((int32_t *)c.values)[1] == -1);
        floe_pq_column_free(&c);
        floe_pq_reader_free(r);
        floe_buf_free(&data);
        /* bounds: the unscaled values' minimal two's complement bytes */
        for (size_t k = 0; k < outs[0].nmetrics; k++) {
            const floe_ice_col_metrics_t *m = &outs[0].metrics[k];
            if (m->id == 1 || m->id == 4) {
                CHECK(m->has_lower && m->lower.len == 1 && m->lower.data[0] == 0xff);
                CHECK(m->has_upper && m->upper.len == 2 && m->upper.data[0] == 0x30 &&
                      m->upper.data[1] == 0x39);
            } else if (m->id == 2) {
                CHECK(m->has_lower && m->lower.len == 1 && m->lower.data[0] == 0xfb);
                CHECK(m->has_upper && m->upper.len == 6 && m->upper.data[0] == 0x70);
            } else if (m->id == 3) {
                CHECK(m->has_lower && (int64_t)floe_rd_le64(m->lower.data) == -2000);
            }
        }
        free_outs(outs, nout, true);
    }
    unlink(f.path);
    floe_ice_data_file_clear(&f);
    floe_ice_schema_free(s);
}

/* A column stored as a type the table's cannot come from is refused with
 * the column named; a required column the file lacks too, and a file
 * without field ids. */
static void incompatible_columns_refused(void)
{
    floe_ice_data_file_t f;
    old_file("old2.parquet", &f);
    floe_ice_type_t *root = floe_ice_type_struct();
    floe_ice_struct_add(root, 1, "i", false, floe_ice_type_prim(FLOE_ICE_STRING), NULL);
    floe_ice_schema_t *s = floe_ice_schema_new(1, root);
    floe_ice_rewrite_input_t in = {&f, NULL, 0};
    floe_ice_data_file_t *outs;
    size_t nout;
    floe_err_t e;
    CHECK_EQ(floe_ice_rewrite(io, s, &in, 1, name_out, "bad", NULL, &outs, &nout, &e), -1);
    CHECK_EQ(e.code, FLOE_EUNSUPPORTED);
    CHECK(strstr(e.msg, "column i (field 1)") != NULL);
    floe_ice_schema_free(s);
    root = floe_ice_type_struct();
    floe_ice_struct_add(root, 99, "must", true, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    s = floe_ice_schema_new(1, root);
    CHECK_EQ(floe_ice_rewrite(io, s, &in, 1, name_out, "bad", NULL, &outs, &nout, &e), -1);
    CHECK(strstr(e.msg, "required field must") != NULL);
    CHECK_EQ(count_files("out-bad"), 0);
    floe_ice_schema_free(s);
    /* a file without field ids (columns would be matched by name) */
    floe_pq_schema_t *ps = floe_pq_schema_new();
    add(ps, "i", -1, FLOE_PQ_OPTIONAL, FLOE_PQ_INT64, 0, -1);
    floe_buf_t buf = FLOE_BUF_INIT;
    floe_pq_writer_t *w = floe_pq_writer_new(ps, NULL, floe_pq_sink_buf, &buf, &e);
    int16_t d[] = {1};
    int64_t v[] = {5};
    CHECK_EQ(floe_pq_write_column(w, 0, 1, d, NULL, v, 1, &e), 0);
    floe_ice_data_file_t nf;
    publish(w, ps, &buf, "noids.parquet", 1, &nf);
    root = floe_ice_type_struct();
    floe_ice_struct_add(root, 1, "i", false, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    s = floe_ice_schema_new(1, root);
    floe_ice_rewrite_input_t nin = {&nf, NULL, 0};
    CHECK_EQ(floe_ice_rewrite(io, s, &nin, 1, name_out, "bad", NULL, &outs, &nout, &e), -1);
    CHECK(strstr(e.msg, "column i has no field id") != NULL);
    CHECK_EQ(count_files("out-bad"), 0);
    unlink(nf.path);
    floe_ice_data_file_clear(&nf);
    floe_ice_schema_free(s);
    unlink(f.path);
    floe_ice_data_file_clear(&f);
}

/* An id column made required after files held it optional (an upsert
 * table's identifier field): the rewrite writes it required when every
 * kept row has a value, a deleted row's null included, and refuses a null
 * it would keep. */
static void optional_file_column_into_required_field(void)
{
    floe_err_t e;
    floe_pq_schema_t *ps = floe_pq_schema_new();
    add(ps, "id", -1, FLOE_PQ_OPTIONAL, FLOE_PQ_INT64, 0, 1);
    floe_buf_t buf = FLOE_BUF_INIT;
    floe_pq_writer_t *w = floe_pq_writer_new(ps, NULL, floe_pq_sink_buf, &buf, &e);
    int16_t d[] = {1, 0, 1};
    int64_t v[] = {5, 7};
    CHECK_EQ(floe_pq_write_column(w, 0, 3, d, NULL, v, 2, &e), 0);
    floe_ice_data_file_t f;
    publish(w, ps, &buf, "optid.parquet", 3, &f);
    floe_ice_type_t *root = floe_ice_type_struct();
    floe_ice_struct_add(root, 1, "id", true, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    floe_ice_schema_t *s = floe_ice_schema_new(1, root);
    floe_ice_rewrite_input_t in = {&f, NULL, 0};
    floe_ice_data_file_t *outs;
    size_t nout;
    CHECK_EQ(floe_ice_rewrite(io, s, &in, 1, name_out, "optid", NULL, &outs, &nout, &e), -1);
    CHECK(strstr(e.msg, "a null where the table requires a value") != NULL);
    CHECK_EQ(count_files("out-optid"), 0);
    int64_t gone[] = {1};
    in = (floe_ice_rewrite_input_t){&f, gone, 1};
    CHECK_EQ(floe_ice_rewrite(io, s, &in, 1, name_out, "optid", NULL, &outs, &nout, &e), 0);
    CHECK_EQ(nout, 1);
    CHECK_EQ(outs[0].record_count, 2);
    floe_buf_t data = FLOE_BUF_INIT;
    floe_pq_reader_t *r = floe_ice_parquet_open(io, outs[0].path, &data, &e);
    CHECK(r != NULL);
    const floe_pq_schema_t *os = floe_pq_reader_schema(r);
    CHECK_EQ(floe_pq_schema_node(os, floe_pq_schema_find_field(os, 1))->rep, FLOE_PQ_REQUIRED);
    floe_pq_column_t c;
    CHECK_EQ(column_by_id(r, 1, &c), 0);
    CHECK(c.n_values == 2 && c.n_levels == 2);
    if (c.n_values == 2)
        CHECK(((const int64_t *)c.values)[0] == 5 && ((const int64_t *)c.values)[1] == 7);
    floe_pq_column_free(&c);
    floe_pq_reader_free(r);
    floe_buf_free(&data);
    free_outs(outs, nout, true);
    floe_ice_schema_free(s);
    unlink(f.path);
    floe_ice_data_file_clear(&f);
}

/* Position deletes: the rows listed are left out (first, last, a whole
 * row group, across row group boundaries); the rest come out as a file of
 * only those rows would hold them. */
static void row_filter_drops_positions(void)
{
    tbl_t t;
    tbl_init(&t);
    char json[200];
    /* deleted: file 0: 0, 5, 39 (its last); file 1: its whole second row
     * group (30..59) and 61; file 2: nothing; file 3: everything */
    static const int64_t d0[] = {0, 5, 39},
                         d1[] = {29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44,
                                 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 61};
    int64_t d3[20];
    for (int i = 0; i < 20; i++) d3[i] = i;
    const int64_t *dels[4] = {d0, d1, NULL, d3};
    size_t ndel[4] = {3, 32, 0, 20};
    int sizes[4][3] = {{20, 20, 0}, {30, 30, 10}, {25, 0, 0}, {20, 0, 0}};
    for (int f = 0; f < 4; f++) {
        char name[32];
        snprintf(name, sizeof name, "del-%d.parquet", f);
        size_t k = 0;
        int64_t pos = 0;
        for (int g = 0; g < 3 && sizes[f][g]; g++) {
            for (int i = 0; i < sizes[f][g]; i++, pos++) {
                bool drop = k < ndel[f] && dels[f][k] == pos;
                k += drop;
                snprintf(json, sizeof json, "{\"id\":%lld,\"tags\":[%d,%d],\"s\":\"v%d\"}",
                         (long long)t.off, i, i % 3, i % 4);
                rec(&t, "k", json, i % 2, !drop);
            }
            rg(&t, name);
        }
        file_end(&t);
    }
    floe_ice_data_file_t ref;
    reference(&t, &ref);
    floe_buf_t want = FLOE_BUF_INIT;
    rows_json(ref.path, &want);
    for (int decode = 0; decode < 2; decode++) {
        floe_ice_rewrite_input_t in[4];
        for (int f = 0; f < 4; f++)
            in[f] = (floe_ice_rewrite_input_t){&t.files[f], dels[f], ndel[f]};
        floe_ice_rewrite_opts_t o = floe_ice_rewrite_opts_default();
        o.decode_all = decode;
        floe_ice_data_file_t *outs;
        size_t nout;
        floe_err_t e;
        int rc = floe_ice_rewrite(io, t.schema, in, 4, name_out, "del", &o, &outs, &nout, &e);
        CHECK_EQ(rc, 0);
        if (rc) {
            printf("# %s\n", e.msg);
            break;
        }
        CHECK_EQ(nout, 1);
        CHECK_EQ(outs[0].record_count, 40 - 3 + 70 - 32 + 25);
        floe_buf_t got = FLOE_BUF_INIT;
        rows_json(outs[0].path, &got);
        CHECK(got.len == want.len && !memcmp(got.data, want.data, got.len));
        same_metrics(&outs[0], &ref);
        floe_buf_free(&got);
        free_outs(outs, nout, true);
    }
    /* every row dropped: no output at all */
    floe_ice_rewrite_input_t only = {&t.files[3], d3, 20};
    floe_ice_data_file_t *outs;
    size_t nout;
    floe_err_t e;
    CHECK_EQ(floe_ice_rewrite(io, t.schema, &only, 1, name_out, "none", NULL, &outs, &nout, &e), 0);
    CHECK_EQ(nout, 0);
    free(outs);
    CHECK_EQ(count_files("out-none"), 0);
    /* positions out of order or past the file: refused, nothing written */
    static const int64_t bad1[] = {3, 2}, bad2[] = {25};
    floe_ice_rewrite_input_t b1[2] = {{&t.files[0], NULL, 0}, {&t.files[2], bad1, 2}};
    CHECK_EQ(floe_ice_rewrite(io, t.schema, b1, 2, name_out, "badpos", NULL, &outs, &nout, &e), -1);
    CHECK_EQ(e.code, FLOE_EINVAL);
    floe_ice_rewrite_input_t b2[2] = {{&t.files[0], NULL, 0}, {&t.files[2], bad2, 1}};
    CHECK_EQ(floe_ice_rewrite(io, t.schema, b2, 2, name_out, "badpos", NULL, &outs, &nout, &e), -1);
    CHECK(strstr(e.msg, "past its 25 rows") != NULL);
    CHECK_EQ(count_files("out-badpos"), 0);
    floe_buf_free(&want);
    unlink(ref.path);
    floe_ice_data_file_clear(&ref);
    for (size_t i = 0; i < t.nfiles; i++) unlink(t.files[i].path);
    tbl_free(&t);
}

/* Outputs roll near the target size; together they hold every row once,
 * in order. */
static void rolls_at_target_size(void)
{
    tbl_t t;
    tbl_init(&t);
    five_files(&t);
    floe_ice_data_file_t ref;
    reference(&t, &ref);
    floe_buf_t want = FLOE_BUF_INIT, got = FLOE_BUF_INIT;
    rows_json(ref.path, &want);
    floe_ice_rewrite_input_t in[5];
    for (int i = 0; i < 5; i++) in[i] = (floe_ice_rewrite_input_t){&t.files[i], NULL, 0};
    floe_ice_rewrite_opts_t o = floe_ice_rewrite_opts_default();
    o.target_file_size = 4000;
    floe_ice_data_file_t *outs;
    size_t nout;
    floe_err_t e;
    CHECK_EQ(floe_ice_rewrite(io, t.schema, in, 5, name_out, "roll", &o, &outs, &nout, &e), 0);
    CHECK(nout >= 2);
    if (nout < 2)
        printf("# %zu outputs; the reference is %lld bytes\n", nout, (long long)ref.file_size);
    int64_t rows = 0;
    for (size_t i = 0; i < nout; i++) {
        check_file(&outs[i]);
        rows += outs[i].record_count;
        rows_json(outs[i].path, &got);
        for (size_t k = 0; k < i; k++) CHECK(strcmp(outs[k].path, outs[i].path) != 0);
    }
    CHECK_EQ(rows, ref.record_count);
    CHECK(got.len == want.len && !memcmp(got.data, want.data, got.len));
    free_outs(outs, nout, true);
    floe_buf_free(&want);
    floe_buf_free(&got);
    unlink(ref.path);
    floe_ice_data_file_clear(&ref);
    for (size_t i = 0; i < t.nfiles; i++) unlink(t.files[i].path);
    tbl_free(&t);
}

/* An input whose manifest entry's record count differs from the file's
 * rows fails the rewrite, as do files of another partition; nothing is
 * left behind, also outputs finished before the bad input. */
static void record_counts_and_partitions_checked(void)
{
    tbl_t t;
    tbl_init(&t);
    five_files(&t);
    floe_ice_rewrite_input_t in[5];
    for (int i = 0; i < 5; i++) in[i] = (floe_ice_rewrite_input_t){&t.files[i], NULL, 0};
    floe_ice_rewrite_opts_t o = floe_ice_rewrite_opts_default();
    o.target_file_size = 3000; /* outputs finish before the bad input */
    floe_ice_data_file_t *outs;
    size_t nout;
    floe_err_t e;
    t.files[3].record_count++;
    CHECK_EQ(floe_ice_rewrite(io, t.schema, in, 5, name_out, "count", &o, &outs, &nout, &e), -1);
    CHECK_EQ(e.code, FLOE_ECORRUPT);
    CHECK(strstr(e.msg, "its entry says") != NULL);
    CHECK_EQ(count_files("out-count"), 0);
    t.files[3].record_count--;
    t.files[4].partition[1].v.i = 8;
    CHECK_EQ(floe_ice_rewrite(io, t.schema, in, 5, name_out, "part", &o, &outs, &nout, &e), -1);
    CHECK_EQ(e.code, FLOE_EINVAL);
    CHECK(strstr(e.msg, "another partition") != NULL);
    CHECK_EQ(count_files("out-part"), 0);
    /* the streaming form: an abort after outputs were finished removes them */
    floe_ice_rewriter_t *rw = floe_ice_rewriter_new(io, t.schema, name_out, "abort", &o, &e);
    CHECK(rw != NULL);
    for (int i = 0; rw && i < 4; i++)
        CHECK_EQ(floe_ice_rewriter_add(rw, &t.files[i], NULL, 0, &e), 0);
    CHECK(count_files("out-abort") >= 2);
    floe_ice_rewriter_abort(rw);
    CHECK_EQ(count_files("out-abort"), 0);
    for (size_t i = 0; i < t.nfiles; i++) unlink(t.files[i].path);
    tbl_free(&t);
}

/* A storage failure at any operation of a rewrite (reads, creates, every
 * write, closes) fails it with the storage's error and leaves no output
 * and no temporary; an answer lost after the operation was done too (a
 * close that published). */
static void storage_faults_leave_nothing(void)
{
    tbl_t t;
    tbl_init(&t);
    five_files(&t);
    floe_err_t e;
    floe_fileio_t *fio = floe_fileio_fault_new(io, &e);
    floe_ice_rewrite_input_t in[5];
    for (int i = 0; i < 5; i++) in[i] = (floe_ice_rewrite_input_t){&t.files[i], NULL, 0};
    floe_ice_rewrite_opts_t o = floe_ice_rewrite_opts_default();
    o.target_file_size = 5000; /* several outputs */
    static const floe_fault_mode_t modes[] = {FLOE_FAULT_FAIL, FLOE_FAULT_LOST_ACK};
    for (int mi = 0; mi < 2; mi++) {
        int failures = 0;
        for (uint64_t n = 1; n < 500; n++) {
            floe_fileio_fault_arm(fio, n, modes[mi]);
            floe_ice_data_file_t *outs;
            size_t nout;
            int rc =
                floe_ice_rewrite(fio, t.schema, in, 5, name_out, "fault", &o, &outs, &nout, &e);
            bool fired = floe_fileio_fault_fired(fio);
            floe_fileio_fault_disarm(fio);
            if (!fired) { /* past the last operation: done */
                CHECK_EQ(rc, 0);
                CHECK(nout >= 2);
                if (rc == 0) free_outs(outs, nout, true);
                break;
            }
            CHECK_EQ(rc, -1);
            CHECK(strstr(e.msg, "injected") != NULL);
            CHECK_EQ(count_files("out-fault"), 0);
            failures++;
        }
        CHECK(failures > 20); /* reads, creates, writes, closes of several files */
    }
    floe_fileio_free(fio);
    for (size_t i = 0; i < t.nfiles; i++) unlink(t.files[i].path);
    tbl_free(&t);
}

/* The file of an older schema, rewritten in today's, as DuckDB reads it:
 * promoted values, fields added at the top and inside a struct, list
 * elements and map values (null where their parent is, absent where it is
 * not), a column made optional; hyparquet reads the same rows. */
static void evolved_rows_read_by_duckdb_and_hyparquet(void)
{
    floe_ice_data_file_t f;
    old_file("old3.parquet", &f);
    floe_ice_schema_t *s = new_schema();
    floe_ice_field_remap_t remap = {4, 20};
    floe_ice_rewrite_input_t in = {&f, NULL, 0};
    floe_ice_rewrite_opts_t o = floe_ice_rewrite_opts_default();
    o.remap = &remap;
    o.nremap = 1;
    floe_ice_data_file_t *outs;
    size_t nout;
    floe_err_t e;
    CHECK_EQ(floe_ice_rewrite(io, s, &in, 1, name_out, "evpeer", &o, &outs, &nout, &e), 0);
    CHECK_EQ(nout, 1);
    const char *op = nout ? outs[0].path : f.path;
    char *got = peer_rows(&op, 1);
    CHECK(got != NULL);
    floe_buf_t duck = FLOE_BUF_INIT, hyp = FLOE_BUF_INIT, ids = FLOE_BUF_INIT;
    lines_of(got, "duck ", &duck);
    lines_of(got, "hyp ", &hyp);
    lines_of(got, "ids ", &ids);
    const char *want_duck =
        "duck "
        "{\"i\":\"1\",\"f\":1.5,\"l\":10,\"w\":-7,\"s\":{\"a\":\"3\",\"b\":null},\"lst\":[{\"p\":"
        "\"1\",\"z\":null},null,{\"p\":null,\"z\":null}],\"r\":\"100\",\"m\":[{\"key\":\"a\","
        "\"value\":{\"q\":\"1\",\"y\":null}},{\"key\":\"b\",\"value\":null}],\"top\":null}\n"
        "duck "
        "{\"i\":null,\"f\":null,\"l\":null,\"w\":null,\"s\":null,\"lst\":null,\"r\":\"101\",\"m\":"
        "null,\"top\":null}\n"
        "duck "
        "{\"i\":\"-2\",\"f\":\"NaN\",\"l\":-1,\"w\":5,\"s\":{\"a\":null,\"b\":null},\"lst\":[],"
        "\"r\":\"102\",\"m\":[],\"top\":null}\n"
        "duck "
        "{\"i\":\"2147483647\",\"f\":\"-0\",\"l\":9007199254740992,\"w\":0,\"s\":{\"a\":\"-5\","
        "\"b\":null},\"lst\":[{\"p\":\"7\",\"z\":null}],\"r\":\"103\",\"m\":[{\"key\":\"c\","
        "\"value\":{\"q\":null,\"y\":null}}],\"top\":null}\n";
    const char *want_hyp =
        "hyp "
        "{\"i\":\"1\",\"f\":1.5,\"l\":10,\"w\":-7,\"s\":{\"a\":\"3\",\"b\":null},\"lst\":[{\"p\":"
        "\"1\",\"z\":null},null,{\"p\":null,\"z\":null}],\"r\":\"100\",\"m\":{\"a\":{\"q\":\"1\","
        "\"y\":null},\"b\":null},\"top\":null}\n"
        "hyp "
        "{\"i\":null,\"f\":null,\"l\":null,\"w\":null,\"s\":null,\"lst\":null,\"r\":\"101\",\"m\":"
        "null,\"top\":null}\n"
        "hyp "
        "{\"i\":\"-2\",\"f\":\"NaN\",\"l\":-1,\"w\":5,\"s\":{\"a\":null,\"b\":null},\"lst\":[],"
        "\"r\":\"102\",\"m\":{},\"top\":null}\n"
        "hyp "
        "{\"i\":\"2147483647\",\"f\":\"-0\",\"l\":9007199254740992,\"w\":0,\"s\":{\"a\":\"-5\","
        "\"b\":null},\"lst\":[{\"p\":\"7\",\"z\":null}],\"r\":\"103\",\"m\":{\"c\":{\"q\":null,"
        "\"y\":null}},\"top\":null}\n";
    const char *want_ids = "ids "
                           "[[\"schema\",null],[\"i\",1],[\"f\",2],[\"l\",3],[\"w\",20],[\"s\",5],["
                           "\"a\",6],[\"b\",15],[\"lst\",7],[\"list\",null],[\"element\",8],[\"p\","
                           "9],[\"z\",16],[\"r\",10],[\"m\",11],[\"key_value\",null],[\"key\",12],["
                           "\"value\",13],[\"q\",14],[\"y\",17],[\"top\",18],[\"k\",19]]\n";
    CHECK_STR(floe_buf_cstr(&duck), want_duck);
    CHECK_STR(floe_buf_cstr(&hyp), want_hyp);
    CHECK_STR(floe_buf_cstr(&ids), want_ids);
    free(got);
    floe_buf_free(&duck);
    floe_buf_free(&hyp);
    floe_buf_free(&ids);
    free_outs(outs, nout, true);
    unlink(f.path);
    floe_ice_data_file_clear(&f);
    floe_ice_schema_free(s);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/floe-test-rewrite-%d", (int)getpid());
    mkdir(dir, 0755);
    floe_err_t e;
    io = floe_fileio_local_new(&e);
    RUN(compacts_table_files_exactly);
    RUN(evolution_of_table_files);
    RUN(promotions_and_added_fields);
    RUN(decimals_and_millis_convert);
    RUN(incompatible_columns_refused);
    RUN(optional_file_column_into_required_field);
    RUN(row_filter_drops_positions);
    RUN(rolls_at_target_size);
    RUN(record_counts_and_partitions_checked);
    RUN(storage_faults_leave_nothing);
    RUN(compacted_rows_read_by_duckdb_and_hyparquet);
    RUN(evolved_rows_read_by_duckdb_and_hyparquet);
    floe_fileio_free(io);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) return 1;
    return t_tests_failed ? 1 : 0;
}
