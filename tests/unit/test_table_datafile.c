/* Data files: rows -> Parquet through the local FileIO, read back by
 * DuckDB (an independent reader) and by our reader; Iceberg metrics. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/parquet.h"
#include "format/parquet_int.h"
#include "iceberg/metadata.h"
#include "table/convert.h"
#include "table/datafile.h"
#include "table/schema_map.h"
#include "table/source_batches.h"
#include "test.h"

static char dir[256];

static void add(floe_conv_t *c, int64_t off, const char *key, const char *json, int nh)
{
    floe_record_t r = {.offset = off,
                       .timestamp = 1700000000000LL + off,
                       .key = floe_slice_str(key),
                       .key_null = key == NULL,
                       .value = floe_slice_str(json),
                       .value_null = json == NULL};
    /* headers in the record wire form: varint key len, key, varint value len, value */
    static uint8_t hdr[64];
    size_t n = 0;
    for (int i = 0; i < nh; i++) {
        hdr[n++] = 2 * 2; /* zigzag(2) */
        hdr[n++] = 'h';
        hdr[n++] = (uint8_t)('0' + i);
        if (i == 1) {
            hdr[n++] = 1; /* zigzag(-1): null value */
        } else {
            hdr[n++] = 2 * 1;
            hdr[n++] = 'v';
        }
    }
    r.header_count = nh;
    r.headers_raw = floe_slice(hdr, n);
    floe_conv_stage_t st;
    floe_err_t e;
    floe_tmsg_t m;
    floe_tmsg_from_record(&m, &r);
    if (floe_conv_record(c, 2, &m, &st, &e) < 0) printf("# convert failed: %s\n", e.msg);
}

static char *run(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    floe_buf_t b = FLOE_BUF_INIT;
    char tmp[4096];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, p)) > 0) floe_buf_append(&b, tmp, n);
    int rc = pclose(p);
    if (rc != 0) {
        floe_buf_free(&b);
        return NULL;
    }
    return floe_buf_cstr(&b);
}

/* A JSON converter into a buffer, and the data file its rows go to. */
typedef struct fixture {
    floe_rows_t *rows;
    floe_conv_t *c;
    floe_ice_schema_t *s;
    char *sj;
    floe_fileio_t *io;
    char path[512];
} fixture_t;

static void fx_init(fixture_t *x)
{
    floe_err_t e;
    memset(x, 0, sizeof *x);
    x->rows = floe_rows_new(NULL);
    x->c = floe_conv_new(x->rows, FLOE_CONV_JSON, FLOE_CONV_STRING, &e);
    x->io = floe_fileio_local_new(&e);
}

/* The table schema of the rows added so far, and a writer for DIR/name. */
static floe_dfw_t *fx_open(fixture_t *x, const char *name)
{
    floe_err_t e;
    x->s = floe_ice_schema_new(0, floe_ice_type_struct());
    int32_t last = 0;
    bool changed;
    CHECK_EQ(floe_tschema_merge(x->rows, x->s, &last, false, &changed, &e), 0);
    x->sj = floe_ice_schema_to_json(x->s, &e);
    snprintf(x->path, sizeof x->path, "%s/%s", dir, name);
    floe_dfw_t *w = floe_dfw_open(x->io, x->path, x->rows, x->sj, NULL, &e);
    CHECK(w != NULL);
    return w;
}

static void fx_free(fixture_t *x)
{
    free(x->sj);
    floe_ice_schema_free(x->s);
    floe_fileio_free(x->io);
    floe_conv_free(x->c);
    floe_rows_free(x->rows);
}

static void rows_to_parquet_read_by_duckdb(void)
{
    floe_err_t e;
    fixture_t x;
    fx_init(&x);
    floe_rows_t *rows = x.rows;
    floe_conv_t *c = x.c;
    add(c, 0, "k0",
        "{\"id\":1,\"name\":\"caf\xc3\xa9\",\"tags\":[\"a\",\"b\"],\"u\":{\"x\":1.5,\"ok\":true}}",
        2);
    add(c, 1, NULL, "{\"id\":2,\"tags\":[],\"u\":{\"ok\":false}}", 0);
    add(c, 2, "k2", "{\"id\":-3,\"name\":\"zzzzzzzzzzzzzzzzzzzzzzzzz\",\"tags\":null}", 1);
    floe_dfw_t *w = fx_open(&x, "f1.parquet");
    floe_ice_schema_t *s = x.s;
    const char *sj = x.sj, *path = x.path;
    CHECK_EQ(floe_dfw_append(w, rows, &e), 0);
    CHECK_EQ(floe_dfw_flush(w, &e), 0);
    floe_rows_clear(rows);
    add(c, 3, "k3", "{\"id\":4,\"name\":\"a\"}", 0); /* a second row group */
    CHECK_EQ(floe_dfw_append(w, rows, &e), 0);
    CHECK_EQ(floe_dfw_rows(w), 4);
    floe_ice_data_file_t f;
    CHECK_EQ(floe_dfw_close(w, &f, &e), 0);
    struct stat st;
    CHECK_EQ(stat(path, &st), 0);
    CHECK_EQ(f.file_size, st.st_size);
    CHECK_EQ(f.record_count, 4);
    CHECK_STR(f.format, "PARQUET");

    /* metrics: id is long in [-3, 4], name's upper bound truncated+bumped */
    int32_t id_id = floe_ice_schema_find_name(s, "id")->id;
    int32_t name_id = floe_ice_schema_find_name(s, "name")->id;
    int32_t el_id = floe_ice_schema_find_name(s, "tags.element")->id;
    for (size_t i = 0; i < f.nmetrics; i++) {
        floe_ice_col_metrics_t *m = &f.metrics[i];
        CHECK(m->size > 0); /* column_sizes: every leaf's chunks */
        if (m->id == id_id) {
            CHECK_EQ(m->values, 4);
            CHECK_EQ(m->nulls, 0);
            CHECK(m->has_lower && m->lower.len == 8 && (int64_t)floe_rd_le64(m->lower.data) == -3);
            CHECK(m->has_upper && (int64_t)floe_rd_le64(m->upper.data) == 4);
        } else if (m->id == name_id) {
            CHECK_EQ(m->nulls, 1);
            CHECK(m->lower.len == 1 && m->lower.data[0] == 'a');
            CHECK_EQ(m->upper.len, 16); /* 16 'z' truncated; last one bumped to '{' */
            CHECK(m->has_upper && m->upper.data[15] == '{' && m->upper.data[14] == 'z');
        } else if (m->id == el_id) {
            CHECK_EQ(m->values, 5); /* a, b | empty | null list | absent */
            CHECK(!m->has_lower);   /* no bounds inside lists */
        }
    }

    /* our reader */
    floe_pq_reader_t *r = floe_pq_reader_open_file(path, &e);
    CHECK(r != NULL);
    if (r) {
        CHECK_EQ(floe_pq_reader_num_rows(r), 4);
        CHECK_EQ(floe_pq_reader_num_row_groups(r), 2);
        CHECK_STR(floe_pq_reader_kv(r, "iceberg.schema"), sj);
        floe_pq_reader_free(r);
    }

    /* DuckDB */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd %s/tests/interop && node duck_rows.mjs %s 2>&1",
             getenv("FLOE_ROOT") ? getenv("FLOE_ROOT") : ".", path);
    char *out = run(cmd);
    CHECK(out != NULL);
    const char *want =
        "{\"_kafka\":{\"partition\":2,\"offset\":\"0\",\"timestamp\":\"2023-11-14 22:13:20+00\","
        "\"key\":\"k0\",\"headers\":[{\"key\":\"h0\",\"value\":\"v\"},{\"key\":\"h1\",\"value\":"
        "null}]},"
        "\"id\":\"1\",\"name\":\"caf\xc3\xa9\",\"tags\":[\"a\",\"b\"],\"u\":{\"x\":1.5,\"ok\":true}"
        "}\n"
        "{\"_kafka\":{\"partition\":2,\"offset\":\"1\",\"timestamp\":\"2023-11-14 "
        "22:13:20.001+00\","
        "\"key\":null,\"headers\":[]},\"id\":\"2\",\"name\":null,\"tags\":[],\"u\":{\"x\":null,"
        "\"ok\":false}}\n"
        "{\"_kafka\":{\"partition\":2,\"offset\":\"2\",\"timestamp\":\"2023-11-14 "
        "22:13:20.002+00\","
        "\"key\":\"k2\",\"headers\":[{\"key\":\"h0\",\"value\":\"v\"}]},\"id\":\"-3\","
        "\"name\":\"zzzzzzzzzzzzzzzzzzzzzzzzz\",\"tags\":null,\"u\":null}\n"
        "{\"_kafka\":{\"partition\":2,\"offset\":\"3\",\"timestamp\":\"2023-11-14 "
        "22:13:20.003+00\","
        "\"key\":\"k3\",\"headers\":[]},\"id\":\"4\",\"name\":\"a\",\"tags\":null,\"u\":null}\n"
        "{\"field_ids\":[\"_kafka=1\",\"partition=2\",\"offset=3\",\"timestamp=4\",\"key=5\","
        "\"headers=6\","
        "\"key=7\",\"value=8\",\"id=9\",\"name=10\",\"tags=11\",\"element=12\",\"u=13\",\"x=14\","
        "\"ok=15\"],"
        "\"kv_keys\":[\"iceberg.schema\"]}\n";
    CHECK_STR(out, want);
    free(out);
    floe_ice_data_file_clear(&f);
    fx_free(&x);
}

/* Table data files cut pages at 256 KiB of encoded values (not the
 * writer's 1 MiB default): a wide column of 20000 rows spreads over several
 * pages, none past the size (plus one value), the full ones near it. */
static void pages_of_a_quarter_mebibyte(void)
{
    floe_err_t e;
    fixture_t x;
    fx_init(&x);
    char json[200];
    for (int i = 0; i < 20000; i++) {
        snprintf(json, sizeof json, "{\"n\":%d,\"pad\":\"%0100d\"}", i, i * 7919);
        add(x.c, i, NULL, json, 0);
    }
    floe_dfw_t *w = fx_open(&x, "pages.parquet");
    const char *path = x.path;
    CHECK_EQ(floe_dfw_append(w, x.rows, &e), 0);
    floe_ice_data_file_t f;
    CHECK_EQ(floe_dfw_close(w, &f, &e), 0);
    CHECK_EQ(f.record_count, 20000);
    /* walk the pad column's pages */
    FILE *fp = fopen(path, "rb");
    CHECK(fp != NULL);
    static uint8_t data[4 << 20];
    size_t len = fp ? fread(data, 1, sizeof data, fp) : 0;
    if (fp) fclose(fp);
    CHECK(len > 12 && len < sizeof data);
    uint32_t flen = floe_rd_le32(data + len - 8);
    pq_file_meta_t m;
    memset(&m, 0, sizeof m);
    CHECK_EQ(pq_footer_decode(data + len - 8 - flen, flen, &m, &e), 0);
    int pad = -1;
    for (int i = 0; i < floe_pq_schema_num_columns(m.schema); i++)
        if (!strcmp(floe_pq_schema_node(m.schema, floe_pq_schema_column_node(m.schema, i))->name,
                    "pad"))
            pad = i;
    CHECK(pad >= 0 && m.nrg == 1);
    int pages = 0, big = 0;
    if (pad >= 0 && m.nrg == 1) {
        const pq_chunk_meta_t *cm = &m.rgs[0].cols[pad];
        size_t at =
            (size_t)(cm->dict_page_offset >= 0 ? cm->dict_page_offset : cm->data_page_offset);
        size_t end = at + (size_t)cm->total_compressed;
        while (at < end) {
            pq_page_header_t h;
            size_t used;
            if (pq_page_header_decode(data + at, end - at, &h, &used, &e) < 0) break;
            if (h.type == PQ_PAGE_DATA) {
                pages++;
                CHECK(h.uncompressed <= (256 << 10) + 200);
                big += h.uncompressed > (200 << 10);
            }
            at += used + (size_t)h.compressed;
        }
        CHECK_EQ(at, end);
    }
    /* 20000 x ~105 bytes = 2.1 MB: 8 or 9 pages, all but the last full */
    CHECK(pages >= 8 && pages <= 10);
    CHECK(big >= pages - 1);
    pq_file_meta_free(&m);
    floe_ice_data_file_clear(&f);
    fx_free(&x);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/floe-test-datafile-%d", (int)getpid());
    mkdir(dir, 0755);
    RUN(rows_to_parquet_read_by_duckdb);
    RUN(pages_of_a_quarter_mebibyte);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) return 1;
    return t_tests_failed ? 1 : 0;
}
