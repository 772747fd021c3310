/* Parquet interop: files floe writes are read by DuckDB and hyparquet with
 * equal values, field ids, codecs and statistics; files DuckDB writes (every
 * type, nesting, codec, page v1/v2) are read by floe with equal values.
 * Drives tests/interop/parquet_check.mjs (node) and relays its verdicts. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/parquet.h"
#include "pq_gen.h"
#include "test.h"

static char dir[256];
static const char *root;

static void write_file(const char *path, const floe_buf_t *b)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK_EQ(fwrite(b->data, 1, b->len, f), b->len);
    fclose(f);
}

static void ids_dfs(const floe_pq_schema_t *s, int node, floe_buf_t *o, bool *first)
{
    int n = floe_pq_schema_num_children(s, node);
    for (int i = 0; i < n; i++) {
        int c = floe_pq_schema_child(s, node, i);
        const floe_pq_node_t *nd = floe_pq_schema_node(s, c);
        floe_buf_printf(o, "%s[\"%s\",%d]", *first ? "" : ",", nd->name, nd->field_id);
        *first = false;
        ids_dfs(s, c, o, first);
    }
}

static bool subtree_ok_for_hyparquet(const floe_pq_schema_t *s, int node)
{
    const floe_pq_node_t *n = floe_pq_schema_node(s, node);
    if (n->logical == FLOE_PQ_LT_DECIMAL || n->logical == FLOE_PQ_LT_MAP) return false;
    for (int i = 0; i < floe_pq_schema_num_children(s, node); i++)
        if (!subtree_ok_for_hyparquet(s, floe_pq_schema_child(s, node, i))) return false;
    return true;
}

/* Expected chunk statistics of top-level plain int/double/string columns. */
static void stats_json(const floe_pq_schema_t *s, pqg_val_t **rows, size_t n, floe_buf_t *o)
{
    bool first = true;
    int nc = floe_pq_schema_num_children(s, -1);
    for (int i = 0; i < nc; i++) {
        int c = floe_pq_schema_child(s, -1, i);
        const floe_pq_node_t *nd = floe_pq_schema_node(s, c);
        bool num = (nd->phys == FLOE_PQ_INT32 || nd->phys == FLOE_PQ_INT64 ||
                    nd->phys == FLOE_PQ_DOUBLE) &&
                   (nd->logical == FLOE_PQ_LT_NONE || nd->logical == FLOE_PQ_LT_INT);
        bool str = nd->phys == FLOE_PQ_BYTE_ARRAY && nd->logical == FLOE_PQ_LT_STRING;
        if (!num && !str) continue;
        int64_t nulls = 0;
        const pqg_val_t *mn = NULL, *mx = NULL;
        for (size_t r = 0; r < n; r++) {
            const pqg_val_t *v = &rows[r]->kids[i];
            if (v->null) {
                nulls++;
                continue;
            }
            if (nd->phys == FLOE_PQ_DOUBLE) {
                if (!mn || v->d < mn->d) mn = v;
                if (!mx || v->d > mx->d) mx = v;
            } else if (num) {
                if (!mn || v->i < mn->i) mn = v;
                if (!mx || v->i > mx->i) mx = v;
            } else {
                size_t l;
                if (!mn || ((l = v->blen < mn->blen ? v->blen : mn->blen),
                            memcmp(v->b, mn->b, l) < 0 ||
                                (memcmp(v->b, mn->b, l) == 0 && v->blen < mn->blen)))
                    mn = v;
                if (!mx || ((l = v->blen < mx->blen ? v->blen : mx->blen),
                            memcmp(v->b, mx->b, l) > 0 ||
                                (memcmp(v->b, mx->b, l) == 0 && v->blen > mx->blen)))
                    mx = v;
            }
        }
        if (!mn) continue;
        /* strings outside ASCII would need DuckDB's escaping: skip them */
        bool ascii = true;
        for (const pqg_val_t *v = mn; v; v = v == mn ? mx : NULL)
            for (uint32_t k = 0; str && k < v->blen; k++)
                ascii &= v->b[k] >= 0x20 && v->b[k] < 0x7f && v->b[k] != '"' && v->b[k] != '\\';
        if (!ascii) continue;
        floe_buf_printf(o, "%s{\"path\":\"%s\",\"num\":%s,\"nulls\":%lld,", first ? "" : ",",
                        nd->name, num ? "true" : "false", (long long)nulls);
        first = false;
        if (nd->phys == FLOE_PQ_DOUBLE)
            floe_buf_printf(o, "\"min\":\"%.17g\",\"max\":\"%.17g\"}", mn->d, mx->d);
        else if (num)
            floe_buf_printf(o, "\"min\":\"%lld\",\"max\":\"%lld\"}", (long long)mn->i,
                            (long long)mx->i);
        else
            floe_buf_printf(o, "\"min\":\"%.*s\",\"max\":\"%.*s\"}", (int)mn->blen,
                            (const char *)mn->b, (int)mx->blen, (const char *)mx->b);
    }
}

static void write_ours(const char *name, pqg_t *g, const floe_pq_write_opts_t *o, size_t nrows)
{
    floe_err_t err;
    floe_buf_t file = FLOE_BUF_INIT, rows_json = FLOE_BUF_INIT, meta = FLOE_BUF_INIT;
    floe_pq_writer_t *w = floe_pq_writer_new(g->s, o, floe_pq_sink_buf, &file, &err);
    CHECK(w != NULL);
    if (!w) return;
    pqg_val_t **rows = malloc(sizeof *rows * nrows);
    for (size_t i = 0; i < nrows; i++) {
        rows[i] = pqg_row(g);
        pqg_json(g->s, rows[i], &rows_json);
        floe_buf_append_u8(&rows_json, '\n');
    }
    for (size_t at = 0; at < nrows; at += 128) {
        size_t k = nrows - at < 128 ? nrows - at : 128;
        CHECK_EQ(pqg_write(g, w, rows + at, k, &err), 0);
    }
    char ice[128];
    snprintf(ice, sizeof ice, "{\"type\":\"struct\",\"schema-id\":0,\"name\":\"%s\"}", name);
    CHECK_EQ(floe_pq_writer_set_kv(w, "iceberg.schema", ice, &err), 0);
    CHECK_EQ(floe_pq_writer_close(w, &err), 0);
    floe_pq_writer_free(w);
    static const char *const duck[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "", "ZSTD", "LZ4_RAW"};
    floe_buf_printf(&meta, "{\"codec\":\"%s\",\"ids\":[", duck[o->codec]);
    bool first = true;
    ids_dfs(g->s, -1, &meta, &first);
    floe_buf_append_str(&meta, "],\"stats\":[");
    stats_json(g->s, rows, nrows, &meta);
    floe_buf_append_str(&meta, "],\"hyparquet_cols\":[");
    first = true;
    for (int i = 0; i < floe_pq_schema_num_children(g->s, -1); i++) {
        int c = floe_pq_schema_child(g->s, -1, i);
        if (!subtree_ok_for_hyparquet(g->s, c)) continue;
        floe_buf_printf(&meta, "%s\"%s\"", first ? "" : ",", floe_pq_schema_node(g->s, c)->name);
        first = false;
    }
    floe_buf_append_str(&meta, "],\"iceberg_schema\":\"");
    for (const char *q = ice; *q; q++) {
        if (*q == '"' || *q == '\\') floe_buf_append_u8(&meta, '\\');
        floe_buf_append_u8(&meta, (uint8_t)*q);
    }
    floe_buf_append_str(&meta, "\"}");
    char path[512];
    snprintf(path, sizeof path, "%s/%s.parquet", dir, name);
    write_file(path, &file);
    snprintf(path, sizeof path, "%s/%s.jsonl", dir, name);
    write_file(path, &rows_json);
    snprintf(path, sizeof path, "%s/%s.meta.json", dir, name);
    write_file(path, &meta);
    free(rows);
    floe_buf_free(&file);
    floe_buf_free(&rows_json);
    floe_buf_free(&meta);
}

/* Run the node checker; relay its ok/not ok lines as our own. */
static int run_node(const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s/tests/interop' && node parquet_check.mjs %s 2>&1", root,
             args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    char line[4096];
    int bad = 0, good = 0;
    while (fgets(line, sizeof line, p)) {
        fputs(line, stdout);
        if (strncmp(line, "not ok - ", 9) == 0) bad++;
        else if (strncmp(line, "ok - ", 5) == 0)
            good++;
    }
    int rc = pclose(p);
    fflush(stdout);
    if (rc != 0 && bad == 0) {
        printf("not ok - node_parquet_check: exit %d\n", rc);
        return -1;
    }
    return bad || !good ? -1 : 0;
}

static void floe_files_read_by_duckdb_and_hyparquet(void)
{
    floe_codec_t codecs[] = {FLOE_CODEC_NONE, FLOE_CODEC_SNAPPY, FLOE_CODEC_GZIP, FLOE_CODEC_ZSTD,
                             FLOE_CODEC_LZ4_RAW};
    for (int i = 0; i < 5; i++) {
        pqg_t g;
        pqg_init(&g, 500 + (uint64_t)i);
        pqg_all_types_schema(&g);
        floe_pq_write_opts_t o = floe_pq_write_opts_default();
        o.codec = codecs[i];
        o.page_size = i == 3 ? 1 << 20 : 4000;
        o.row_group_size = i == 1 ? 30000 : 1 << 20;
        char name[64];
        snprintf(name, sizeof name, "all_%s", floe_codec_name(codecs[i]));
        write_ours(name, &g, &o, 600);
        pqg_free(&g);
    }
    /* delta encodings and v2 pages without dictionaries; dictionary fallback */
    for (int v = 0; v < 2; v++) {
        pqg_t g;
        pqg_init(&g, 600 + (uint64_t)v);
        pqg_all_types_schema(&g);
        floe_pq_write_opts_t o = floe_pq_write_opts_default();
        o.dictionary = v == 1;
        o.dict_limit = 200;
        o.page_v2 = v == 0;
        o.page_size = 3000;
        write_ours(v == 0 ? "all_delta_v2" : "all_dict_fallback", &g, &o, 500);
        pqg_free(&g);
    }
    for (int t = 0; t < 12; t++) {
        pqg_t g;
        pqg_init(&g, 700 + (uint64_t)t);
        pqg_random_schema(&g, 6, 3);
        g.null_rate = 0.1 * (t % 4);
        floe_pq_write_opts_t o = floe_pq_write_opts_default();
        o.codec = t % 2 ? FLOE_CODEC_ZSTD : FLOE_CODEC_SNAPPY;
        o.page_size = 500 + pqg_rand(&g) % 5000;
        o.page_v2 = t % 3 == 0;
        char name[64];
        snprintf(name, sizeof name, "random_%02d", t);
        write_ours(name, &g, &o, 1 + pqg_rand(&g) % 300);
        pqg_free(&g);
    }
    CHECK_EQ(run_node(dir), 0);
}

static void duckdb_files_read_by_floe(void)
{
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d) return;
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (strncmp(e->d_name, "duck_", 5) != 0 || l < 9 ||
            strcmp(e->d_name + l - 8, ".parquet") != 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        floe_err_t err;
        floe_pq_reader_t *r = floe_pq_reader_open_file(path, &err);
        CHECK(r != NULL);
        if (!r) {
            fprintf(stderr, "%s: %s\n", path, err.msg);
            continue;
        }
        floe_buf_t out = FLOE_BUF_INIT;
        for (int rg = 0; rg < floe_pq_reader_num_row_groups(r); rg++) {
            int rc = pqg_read_json(r, rg, &out, &err);
            CHECK_EQ(rc, 0);
            if (rc) {
                fprintf(stderr, "%s: %s\n", path, err.msg);
                break;
            }
        }
        snprintf(path, sizeof path, "%s/%.*s.floe.jsonl", dir, (int)(l - 8), e->d_name);
        write_file(path, &out);
        floe_buf_free(&out);
        floe_pq_reader_free(r);
        files++;
    }
    closedir(d);
    CHECK(files >= 7);
    char args[300];
    snprintf(args, sizeof args, "--compare %s", dir);
    CHECK_EQ(run_node(args), 0);
}

int main(void)
{
    root = getenv("FLOE_ROOT") ? getenv("FLOE_ROOT") : ".";
    snprintf(dir, sizeof dir, "/tmp/floe-pq-interop-XXXXXX");
    if (!mkdtemp(dir)) {
        printf("not ok - mkdtemp\n");
        return 1;
    }
    RUN(floe_files_read_by_duckdb_and_hyparquet);
    RUN(duckdb_files_read_by_floe);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!getenv("FLOE_KEEP_TMP") && system(cmd) != 0) printf("# could not remove %s\n", dir);
    return t_tests_failed ? 1 : 0;
}
