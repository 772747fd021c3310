/* bench/proto-ingest: protobuf records (the Confluent wire format) into a
 * table's column buffers on one core, against floe's JSON path on the same
 * rows and against DuckDB loading the same rows from JSON.
 *   build/bench/proto-ingest/proto_ingest [ROWS]   (default 1000000)
 * Rows of the events shape are generated once in both forms; floe
 * converts each record with the table converter (table.value.converter
 * protobuf, then json) into a rows buffer, cleared every 16384 rows as a
 * flush would; DuckDB (SET threads=1; CREATE TABLE AS SELECT * FROM
 * read_json_auto(...), bench/proto-ingest/duckdb_load.mjs) loads the JSON
 * file into its own columns.  Best of three rounds each; MB/s counts each
 * side's own input bytes, rows/s compares like with like.
 * A second, nested shape (orders: messages in messages, a repeated message,
 * a map, a timestamp, an enum) compares the protobuf converter with the
 * JSON path on the JSON text the protobuf converter renders for the same
 * messages.
 * Last line: proto_ingest rows=N proto_mb=... json_mb=... proto_mb_s=...
 *   proto_rows_s=... json_mb_s=... json_rows_s=... duckdb_mb_s=...
 *   duckdb_rows_s=... proto_vs_json_rows=... proto_vs_duckdb_rows=...
 *   nested_proto_rows_s=... nested_json_rows_s=... nested_proto_vs_json_rows=... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "format/proto.h"
#include "table/convert.h"
#include "table/proto_conv.h"
#include "util/clock.h"

#include "../duckdb_run.h"
#include "../xorshift.h"

static const char *SCHEMA = "syntax = \"proto3\"; package bench;\n"
                            "message Event { int64 user_id = 1; int64 ts = 2; string event = 3;\n"
                            "  string url = 4; double amount = 5; string session_id = 6;\n"
                            "  string country = 7; string device = 8; int64 seq = 9; }\n";

/* The nested shape (schema id 2): messages in messages, a repeated
 * message, a map, a timestamp, an enum, packed integers. */
static const char *NESTED =
    "syntax = \"proto3\"; package bench; import \"google/protobuf/timestamp.proto\";\n"
    "message Order { string id = 1; Money total = 2; repeated Line lines = 3;\n"
    "  Channel channel = 4; google.protobuf.Timestamp at = 5; map<string, string> attrs = 6;\n"
    "  repeated int64 codes = 7; }\n"
    "message Money { string currency = 1; int64 units = 2; int32 nanos = 3; }\n"
    "message Line { string sku = 1; int32 qty = 2; Money price = 3; }\n"
    "enum Channel { WEB = 0; STORE = 1; APP = 2; }\n";

static void put_varint(floe_buf_t *b, uint64_t v)
{
    while (v >= 0x80) {
        floe_buf_append_u8(b, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    floe_buf_append_u8(b, (uint8_t)v);
}

static void put_str(floe_buf_t *b, int field, const char *s)
{
    put_varint(b, (uint64_t)field << 3 | 2);
    put_varint(b, strlen(s));
    floe_buf_append_str(b, s);
}

/* Records of both forms, each as (offset, length) into one buffer. */
typedef struct recs {
    floe_buf_t data;
    size_t *off, *len, n;
} recs_t;

static void add(recs_t *r, const floe_buf_t *one)
{
    r->off[r->n] = r->data.len;
    r->len[r->n++] = one->len;
    floe_buf_append(&r->data, one->data, one->len);
}

static void generate(size_t rows, recs_t *pb, recs_t *js, const char *jsonl)
{
    static const char *events[] = {"view", "click", "purchase", "signup", "logout", "search"};
    static const char *countries[] = {"US", "DE", "FR", "JP", "BR", "IN", "GB", "CA", "MX", "KR"};
    static const char *devices[] = {"mobile", "desktop", "tablet"};
    FILE *f = fopen(jsonl, "w");
    floe_buf_t p = FLOE_BUF_INIT, j = FLOE_BUF_INIT;
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
        floe_buf_reset(&p);
        uint8_t hdr[6] = {0, 0, 0, 0, 1, 0}; /* magic, id 1, indexes [0] */
        floe_buf_append(&p, hdr, 6);
        put_varint(&p, 1 << 3);
        put_varint(&p, user);
        put_varint(&p, 2 << 3);
        put_varint(&p, (uint64_t)ts);
        put_str(&p, 3, ev);
        put_str(&p, 4, url);
        put_varint(&p, 5 << 3 | 1);
        uint64_t bits;
        memcpy(&bits, &amount, 8);
        floe_buf_append_le64(&p, bits);
        put_str(&p, 6, sid);
        put_str(&p, 7, country);
        put_str(&p, 8, dev);
        put_varint(&p, 9 << 3);
        put_varint(&p, i);
        add(pb, &p);
        floe_buf_reset(&j);
        floe_buf_printf(&j,
                        "{\"user_id\":%llu,\"ts\":%lld,\"event\":\"%s\",\"url\":\"%s\","
                        "\"amount\":%.17g,\"session_id\":\"%s\",\"country\":\"%s\","
                        "\"device\":\"%s\",\"seq\":%zu}",
                        (unsigned long long)user, (long long)ts, ev, url, amount, sid, country, dev,
                        i);
        add(js, &j);
        fwrite(j.data, 1, j.len, f);
        fputc('\n', f);
    }
    fclose(f);
    floe_buf_free(&p);
    floe_buf_free(&j);
}

static int by_id(void *arg, int32_t id, floe_proto_schema_t **out, floe_err_t *err)
{
    (void)arg;
    const char *text = id == 2 ? NESTED : SCHEMA;
    floe_proto_file_t *f = NULL;
    if (floe_proto_parse(text, strlen(text), "bench.proto", &f, err)) return -1;
    return floe_proto_schema_new(f, NULL, 0, out, err);
}

static void put_sub(floe_buf_t *b, int field, const floe_buf_t *sub)
{
    put_varint(b, (uint64_t)field << 3 | 2);
    put_varint(b, sub->len);
    floe_buf_append(b, sub->data, sub->len);
}

static void put_money(floe_buf_t *b, int field, const char *cur, uint64_t units, uint64_t nanos)
{
    floe_buf_t m = FLOE_BUF_INIT;
    put_str(&m, 1, cur);
    put_varint(&m, 2 << 3);
    put_varint(&m, units);
    if (nanos) {
        put_varint(&m, 3 << 3);
        put_varint(&m, nanos);
    }
    put_sub(b, field, &m);
    floe_buf_free(&m);
}

/* Orders of the nested shape: the wire form, and as JSON the text the
 * protobuf converter's JSON rendering gives (proto_conv.h), so both paths
 * make the same rows. */
static void generate_nested(size_t rows, recs_t *pb, recs_t *js)
{
    static const char *skus[] = {"sku-100", "sku-2001", "sku-37", "sku-4242", "sku-5"};
    floe_proto_schema_t *s = NULL;
    floe_err_t err = {0};
    if (by_id(NULL, 2, &s, &err)) abort();
    const floe_proto_msg_t *order = floe_proto_schema_message(s, NULL, 0);
    floe_buf_t p = FLOE_BUF_INIT, j = FLOE_BUF_INIT, sub = FLOE_BUF_INIT;
    int64_t ts = 1764633600;
    for (size_t i = 0; i < rows; i++) {
        char id[32];
        snprintf(id, sizeof id, "ord-%zu", i);
        floe_buf_reset(&p);
        uint8_t hdr[6] = {0, 0, 0, 0, 2, 0}; /* magic, id 2, indexes [0] */
        floe_buf_append(&p, hdr, 6);
        put_str(&p, 1, id);
        put_money(&p, 2, "EUR", bench_next() % 100000, bench_next() % 4 ? 0 : 500000000);
        for (uint64_t k = 0, n = 1 + bench_next() % 3; k < n; k++) {
            floe_buf_reset(&sub);
            put_str(&sub, 1, skus[bench_next() % 5]);
            put_varint(&sub, 2 << 3);
            put_varint(&sub, 1 + bench_next() % 9);
            put_money(&sub, 3, "EUR", bench_next() % 5000, 0);
            put_sub(&p, 3, &sub);
        }
        put_varint(&p, 4 << 3);
        put_varint(&p, bench_next() % 3);
        floe_buf_reset(&sub);
        put_varint(&sub, 1 << 3);
        put_varint(&sub, (uint64_t)(ts += (int64_t)(bench_next() % 20)));
        put_varint(&sub, 2 << 3);
        put_varint(&sub, bench_next() % 1000000000);
        put_sub(&p, 5, &sub);
        if (bench_next() % 2) {
            floe_buf_reset(&sub);
            put_str(&sub, 1, "gift");
            put_str(&sub, 2, bench_next() % 2 ? "yes" : "no");
            put_sub(&p, 6, &sub);
        }
        floe_buf_reset(&sub);
        for (int k = 0; k < 3; k++) put_varint(&sub, bench_next() % 100000);
        put_sub(&p, 7, &sub);
        add(pb, &p);
        floe_buf_reset(&j);
        if (floe_proto_conv_json(order, p.data + 6, p.len - 6, &j, NULL, &err)) abort();
        add(js, &j);
    }
    floe_buf_free(&p);
    floe_buf_free(&j);
    floe_buf_free(&sub);
    floe_proto_schema_free(s);
}

static double cpu_secs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One pass of converter kind over recs: CPU seconds, or -1. */
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
    floe_conv_schemas_t src = {.proto = by_id};
    floe_conv_set_schemas(c, &src);
    double t0 = cpu_secs();
    for (size_t i = 0; i < r->n; i++) {
        floe_tmsg_t m = {.kind = FLOE_TMSG_RECORD,
                         .offset = (int64_t)i,
                         .timestamp = 1,
                         .key_null = true,
                         .value = floe_slice(r->data.data + r->off[i], r->len[i])};
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
    recs_t pb = {FLOE_BUF_INIT, calloc(rows, sizeof(size_t)), calloc(rows, sizeof(size_t)), 0};
    recs_t js = {FLOE_BUF_INIT, calloc(rows, sizeof(size_t)), calloc(rows, sizeof(size_t)), 0};
    char jsonl[] = "/tmp/floe-proto-ingest-XXXXXX";
    int fd = mkstemp(jsonl);
    if (fd < 0 || !pb.off || !js.off) return 1;
    close(fd);
    generate(rows, &pb, &js, jsonl);
    recs_t npb = {FLOE_BUF_INIT, calloc(rows, sizeof(size_t)), calloc(rows, sizeof(size_t)), 0};
    recs_t njs = {FLOE_BUF_INIT, calloc(rows, sizeof(size_t)), calloc(rows, sizeof(size_t)), 0};
    if (!npb.off || !njs.off) return 1;
    generate_nested(rows, &npb, &njs);
    double best_p = 1e99, best_j = 1e99, best_np = 1e99, best_nj = 1e99;
    for (int round = 0; round < 3; round++) {
        double p = convert(FLOE_CONV_PROTOBUF, &pb), j = convert(FLOE_CONV_JSON, &js);
        double np = convert(FLOE_CONV_PROTOBUF, &npb), nj = convert(FLOE_CONV_JSON, &njs);
        if (p < 0 || j < 0 || np < 0 || nj < 0) return 1;
        if (p < best_p) best_p = p;
        if (j < best_j) best_j = j;
        if (np < best_np) best_np = np;
        if (nj < best_nj) best_nj = nj;
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
    double pmb = (double)pb.data.len / 1e6, jmb = (double)js.data.len / 1e6 + (double)rows / 1e6;
    double p_rows = (double)rows / best_p, j_rows = (double)rows / best_j, d_rows = drows / dcpu;
    printf("protobuf: %.1f MB in, %.3f s CPU: %.1f MB/s, %.0f rows/s\n", pmb, best_p, pmb / best_p,
           p_rows);
    printf("json:     %.1f MB in, %.3f s CPU: %.1f MB/s, %.0f rows/s\n", jmb, best_j, jmb / best_j,
           j_rows);
    printf("duckdb:   %.1f MB in, %.3f s CPU: %.1f MB/s, %.0f rows/s\n", jmb, dcpu, jmb / dcpu,
           d_rows);
    double npmb = (double)npb.data.len / 1e6, njmb = (double)njs.data.len / 1e6;
    printf("nested protobuf: %.1f MB in, %.3f s CPU: %.1f MB/s, %.0f rows/s\n", npmb, best_np,
           npmb / best_np, (double)rows / best_np);
    printf("nested json:     %.1f MB in, %.3f s CPU: %.1f MB/s, %.0f rows/s\n", njmb, best_nj,
           njmb / best_nj, (double)rows / best_nj);
    printf("proto_ingest rows=%zu proto_mb=%.1f json_mb=%.1f proto_mb_s=%.1f proto_rows_s=%.0f "
           "json_mb_s=%.1f json_rows_s=%.0f duckdb_mb_s=%.1f duckdb_rows_s=%.0f "
           "proto_vs_json_rows=%.2f proto_vs_duckdb_rows=%.2f nested_proto_rows_s=%.0f "
           "nested_json_rows_s=%.0f nested_proto_vs_json_rows=%.2f\n",
           rows, pmb, jmb, pmb / best_p, p_rows, jmb / best_j, j_rows, jmb / dcpu, d_rows,
           p_rows / j_rows, p_rows / d_rows, (double)rows / best_np, (double)rows / best_nj,
           best_nj / best_np);
    floe_buf_free(&npb.data);
    floe_buf_free(&njs.data);
    free(npb.off);
    free(npb.len);
    free(njs.off);
    free(njs.len);
    floe_buf_free(&pb.data);
    floe_buf_free(&js.data);
    free(pb.off);
    free(pb.len);
    free(js.off);
    free(js.len);
    return 0;
}
