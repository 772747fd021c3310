/* bench/jsonschema-ingest: JSON records typed by their JSON Schema (the
 * Confluent wire format, table.value.converter json_schema) into a table's
 * column buffers on one core, against floe's JSON path (types inferred) on
 * the same rows and against DuckDB loading the same rows from JSON.
 *   build/bench/jsonschema-ingest/jsonschema_ingest [ROWS]   (default 1000000)
 * Rows of the events shape are generated once; floe converts each record
 * with the table converter into a rows buffer, cleared every 16384 rows as
 * a flush would; DuckDB (SET threads=1; CREATE TABLE AS SELECT * FROM
 * read_json_auto(...), bench/proto-ingest/duckdb_load.mjs) loads the same
 * JSON.  Best of three rounds each; CPU seconds; MB/s counts each side's
 * own input bytes (json_schema's include its 5-byte header).
 * Last line: jsonschema_ingest rows=N mb=... schema_mb_s=... schema_rows_s=...
 *   json_mb_s=... json_rows_s=... duckdb_mb_s=... duckdb_rows_s=...
 *   schema_vs_json_rows=... schema_vs_duckdb_rows=... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "format/jschema.h"
#include "table/convert.h"

#include "../duckdb_run.h"
#include "../xorshift.h"

static const char *SCHEMA =
    "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
    "\"user_id\":{\"type\":\"integer\"},\"ts\":{\"type\":\"string\",\"format\":\"date-time\"},"
    "\"event\":{\"type\":\"string\"},\"url\":{\"type\":\"string\"},"
    "\"amount\":{\"type\":\"number\"},\"session_id\":{\"type\":\"string\"},"
    "\"country\":{\"type\":\"string\"},\"device\":{\"type\":\"string\"},"
    "\"seq\":{\"type\":\"integer\"}},\"required\":[\"user_id\",\"ts\",\"event\"]}";

/* The rows as wire records (header + JSON) in one buffer, each at off[i]
 * with length len[i]; the JSON alone is at off[i] + 5. */
typedef struct recs {
    floe_buf_t data;
    size_t *off, *len, n;
} recs_t;

static void generate(size_t rows, recs_t *r, const char *jsonl)
{
    static const char *events[] = {"view", "click", "purchase", "signup", "logout", "search"};
    static const char *countries[] = {"US", "DE", "FR", "JP", "BR", "IN", "GB", "CA", "MX", "KR"};
    static const char *devices[] = {"mobile", "desktop", "tablet"};
    FILE *f = fopen(jsonl, "w");
    int64_t ts = 1764633600000LL;
    for (size_t i = 0; i < rows; i++) {
        char sid[33], url[96];
        for (int k = 0; k < 32; k++) sid[k] = "0123456789abcdef"[bench_next() & 15];
        sid[32] = 0;
        ts += (int64_t)(bench_next() % 20);
        uint64_t user = bench_next() % 100000;
        const char *ev = events[bench_next() % 6], *c1 = countries[bench_next() % 10];
        snprintf(url, sizeof url, "https://shop.example/p/%llu?ref=%s",
                 (unsigned long long)(bench_next() % 5000), c1);
        double amount = (double)(bench_next() % 100000) / 100.0 + 0.001;
        const char *country = countries[bench_next() % 10], *dev = devices[bench_next() % 3];
        time_t secs = (time_t)(ts / 1000);
        struct tm tm;
        gmtime_r(&secs, &tm);
        char at[80];
        snprintf(at, sizeof at, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ts % 1000));
        r->off[r->n] = r->data.len;
        static const uint8_t hdr[5] = {0, 0, 0, 0, 1};
        floe_buf_append(&r->data, hdr, 5);
        size_t at_json = r->data.len;
        floe_buf_printf(&r->data,
                        "{\"user_id\":%llu,\"ts\":\"%s\",\"event\":\"%s\",\"url\":\"%s\","
                        "\"amount\":%.17g,\"session_id\":\"%s\",\"country\":\"%s\","
                        "\"device\":\"%s\",\"seq\":%zu}",
                        (unsigned long long)user, at, ev, url, amount, sid, country, dev, i);
        r->len[r->n] = r->data.len - r->off[r->n];
        r->n++;
        fwrite(r->data.data + at_json, 1, r->data.len - at_json, f);
        fputc('\n', f);
    }
    fclose(f);
}

static int by_id(void *arg, int32_t id, floe_jschema_t **out, floe_err_t *err)
{
    (void)arg;
    (void)id;
    return floe_jschema_parse(SCHEMA, strlen(SCHEMA), NULL, 0, out, err);
}

static double cpu_secs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One pass of converter kind over r (json: without the header): CPU
 * seconds, or -1. */
static double convert(floe_conv_kind_t kind, const recs_t *r)
{
    floe_err_t err = {0};
    floe_rows_opts_t o = {.infer_timestamps = true};
    floe_rows_t *rows = floe_rows_new(&o);
    floe_conv_t *c = floe_conv_new(rows, kind, FLOE_CONV_STRING, &err);
    if (!c) {
        fprintf(stderr, "converter: %s\n", err.msg);
        return -1;
    }
    floe_conv_schemas_t src = {.json = by_id};
    floe_conv_set_schemas(c, &src);
    size_t skip = kind == FLOE_CONV_JSON ? 5 : 0;
    double t0 = cpu_secs();
    for (size_t i = 0; i < r->n; i++) {
        floe_tmsg_t m = {.kind = FLOE_TMSG_RECORD,
                         .offset = (int64_t)i,
                         .timestamp = 1,
                         .key_null = true,
                         .value = floe_slice(r->data.data + r->off[i] + skip, r->len[i] - skip)};
        floe_conv_stage_t st;
        if (floe_conv_record(c, 0, &m, &st, &err)) {
            fprintf(stderr, "row %zu: %s\n", i, err.msg);
            return -1;
        }
        if (floe_rows_count(rows) == 16384) floe_rows_clear(rows);
    }
    double t = cpu_secs() - t0;
    floe_conv_free(c);
    floe_rows_free(rows);
    return t;
}

int main(int argc, char **argv)
{
    size_t rows = argc > 1 ? (size_t)atol(argv[1]) : 1000000;
    recs_t r = {FLOE_BUF_INIT, calloc(rows, sizeof(size_t)), calloc(rows, sizeof(size_t)), 0};
    char jsonl[] = "/tmp/floe-jsonschema-ingest-XXXXXX";
    int fd = mkstemp(jsonl);
    if (fd < 0 || !r.off || !r.len) return 1;
    close(fd);
    generate(rows, &r, jsonl);
    double best_s = 1e99, best_j = 1e99;
    for (int round = 0; round < 3; round++) {
        double s = convert(FLOE_CONV_JSON_SCHEMA, &r), j = convert(FLOE_CONV_JSON, &r);
        if (s < 0 || j < 0) return 1;
        if (s < best_s) best_s = s;
        if (j < best_j) best_j = j;
    }
    char cmd[1024];
    const char *root = getenv("FLOE_ROOT");
    snprintf(cmd, sizeof cmd,
             "cd %s/tests/interop && node ../../bench/proto-ingest/duckdb_load.mjs %s",
             root ? root : ".", jsonl);
    double dsecs, dbytes, drows, dcpu;
    int drc = bench_duckdb_run(cmd, &dsecs, &dbytes, &drows, &dcpu);
    unlink(jsonl);
    if (drc) return 1;
    double smb = (double)r.data.len / 1e6, jmb = smb - 5.0 * (double)rows / 1e6;
    double s_rows = (double)rows / best_s, j_rows = (double)rows / best_j, d_rows = drows / dcpu;
    printf("json_schema: %.1f MB in, %.3f s CPU: %.1f MB/s, %.0f rows/s\n", smb, best_s,
           smb / best_s, s_rows);
    printf("json:        %.1f MB in, %.3f s CPU: %.1f MB/s, %.0f rows/s\n", jmb, best_j,
           jmb / best_j, j_rows);
    printf("duckdb:      %.1f MB in, %.3f s CPU: %.1f MB/s, %.0f rows/s\n", dbytes / 1e6, dcpu,
           dbytes / 1e6 / dcpu, d_rows);
    printf("jsonschema_ingest rows=%zu mb=%.1f schema_mb_s=%.1f schema_rows_s=%.0f json_mb_s=%.1f "
           "json_rows_s=%.0f duckdb_mb_s=%.1f duckdb_rows_s=%.0f schema_vs_json_rows=%.2f "
           "schema_vs_duckdb_rows=%.2f\n",
           rows, smb, smb / best_s, s_rows, jmb / best_j, j_rows, dbytes / 1e6 / dcpu, d_rows,
           s_rows / j_rows, s_rows / d_rows);
    floe_buf_free(&r.data);
    free(r.off);
    free(r.len);
    return 0;
}
