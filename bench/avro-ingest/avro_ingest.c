/* bench/avro-ingest: Avro (Confluent wire format) -> Parquet (zstd) on one
 * core, against floe's JSON path and DuckDB on the same rows.
 *
 * Generates FLOE_AVRO_INGEST_ROWS event rows (default 500000) twice: as
 * Avro records (magic byte, schema id, datum) and as JSON lines with the
 * same values (the timestamp as RFC 3339 text, so both make a timestamptz
 * column).  floe converts each set through the table engine's converter
 * (table/convert.h: avro typed straight into columns; json through the
 * single-pass shredder) into a sink's L1 buffer drained to the data-file
 * writer as the engine does (table/sink.h); DuckDB converts the JSON lines
 * (`SET threads=1`, COPY ... read_json_auto ... TO parquet zstd:
 * bench/ingest/duckdb_json.mjs).  Rounds alternate the three
 * (FLOE_AVRO_INGEST_ROUNDS, default 2); each side's best counts.  MB/s are
 * of each side's own input (Avro records for floe avro, JSON for the
 * others); rows/s compare like with like.
 * Also the converters alone (into the buffer, no Parquet), in CPU seconds.
 * Last line: avro_ingest rows=... avro_mb=... json_mb=... floe_avro_mb_s=...
 * floe_avro_rows_s=... floe_json_mb_s=... floe_json_rows_s=...
 * duckdb_mb_s=... duckdb_rows_s=... avro_vs_json=... avro_vs_duckdb=...
 * cpu_avro_vs_json=... cpu_avro_vs_duckdb=... convert_avro_rows_s=...
 * convert_json_rows_s=... convert_avro_vs_json=... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iceberg/catalog.h"
#include "table/convert.h"
#include "table/sink.h"
#include "util/clock.h"
#include "util/diag.h"
#include "util/varint.h"

#include "../duckdb_run.h"
#include "../xorshift.h"

static const char *SCHEMA =
    "{\"type\":\"record\",\"name\":\"Event\",\"fields\":["
    "{\"name\":\"user_id\",\"type\":\"long\"},"
    "{\"name\":\"ts\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}},"
    "{\"name\":\"event\",\"type\":\"string\"},{\"name\":\"url\",\"type\":\"string\"},"
    "{\"name\":\"amount\",\"type\":\"double\"},{\"name\":\"session_id\",\"type\":\"string\"},"
    "{\"name\":\"country\",\"type\":\"string\"},{\"name\":\"device\",\"type\":\"string\"},"
    "{\"name\":\"seq\",\"type\":\"long\"}]}";

typedef struct set {
    floe_buf_t bytes;
    size_t *end; /* record i is bytes[end[i-1] .. end[i]) */
    size_t n;
} set_t;

static void put_long(floe_buf_t *b, int64_t v)
{
    uint8_t t[10];
    floe_buf_append(b, t, floe_varlong_encode(t, v));
}

static void put_str(floe_buf_t *b, const char *s)
{
    put_long(b, (int64_t)strlen(s));
    floe_buf_append_str(b, s);
}

static void generate(size_t rows, set_t *avro, set_t *json)
{
    static const char *events[] = {"view", "click", "purchase", "signup", "logout", "search"};
    static const char *countries[] = {"US", "DE", "FR", "JP", "BR", "IN", "GB", "CA", "MX", "KR"};
    static const char *devices[] = {"mobile", "desktop", "tablet"};
    avro->end = malloc(rows * sizeof *avro->end);
    json->end = malloc(rows * sizeof *json->end);
    int64_t ts = 1764633600000LL; /* 2025-12-02 */
    for (size_t i = 0; i < rows; i++) {
        char sid[33], url[128], line[512], when[40];
        for (int k = 0; k < 32; k++) sid[k] = "0123456789abcdef"[bench_next() & 15];
        sid[32] = 0;
        ts += (int64_t)(bench_next() % 20);
        int64_t user = (int64_t)(bench_next() % 100000);
        const char *ev = events[bench_next() % 6], *c1 = countries[bench_next() % 10];
        snprintf(url, sizeof url, "https://shop.example/p/%llu?ref=%s",
                 (unsigned long long)(bench_next() % 5000), c1);
        double amount = (double)(bench_next() % 100000) / 100;
        const char *country = countries[bench_next() % 10], *dev = devices[bench_next() % 3];
        time_t secs = (time_t)(ts / 1000);
        struct tm tmv;
        gmtime_r(&secs, &tmv);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tmv);
        int n = snprintf(line, sizeof line,
                         "{\"user_id\":%lld,\"ts\":\"%s.%03dZ\",\"event\":\"%s\",\"url\":\"%s\","
                         "\"amount\":%.2f,\"session_id\":\"%s\",\"country\":\"%s\","
                         "\"device\":\"%s\",\"seq\":%zu}\n",
                         (long long)user, when, (int)(ts % 1000), ev, url, amount, sid, country,
                         dev, i);
        floe_buf_append(&json->bytes, line, (size_t)n);
        json->end[i] = json->bytes.len;
        static const uint8_t hdr[5] = {0, 0, 0, 0, 1};
        floe_buf_append(&avro->bytes, hdr, 5);
        put_long(&avro->bytes, user);
        put_long(&avro->bytes, ts);
        put_str(&avro->bytes, ev);
        put_str(&avro->bytes, url);
        floe_buf_append(&avro->bytes, &amount, 8); /* little-endian host */
        put_str(&avro->bytes, sid);
        put_str(&avro->bytes, country);
        put_str(&avro->bytes, dev);
        put_long(&avro->bytes, (int64_t)i);
        avro->end[i] = avro->bytes.len;
    }
    avro->n = json->n = rows;
}

static int by_id(void *arg, int32_t id, floe_avro_schema_t **out, floe_err_t *err)
{
    (void)arg;
    if (id != 1) return floe_err_set(err, FLOE_ENOENT, "no schema %d", (int)id);
    return floe_avro_schema_parse(SCHEMA, strlen(SCHEMA), out, err);
}

/* Convert set s with converter kind into a rows buffer only (cleared every
 * 8192 rows, no Parquet): the decoders' own cost.  CPU seconds. */
static int convert_only(const set_t *s, floe_conv_kind_t kind, double *cpu);

static double cpu_secs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Convert set s (JSON lines without their newline) with converter kind
 * into table default.NAME of warehouse, written as the engine writes;
 * wall and CPU seconds, bytes of Parquet out. */
static int floe_run(const set_t *s, floe_conv_kind_t kind, const char *warehouse, const char *name,
                    double *secs, double *cpu, double *bytes_out)
{
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_local_new(&e);
    floe_ice_catalog_t *cat = io ? floe_ice_catalog_fs_new(io, warehouse, &e) : NULL;
    floe_table_config_t cfg;
    floe_ice_table_t *ice = NULL;
    if (!cat || floe_table_config_load(&cfg, name, NULL, NULL, NULL, NULL, &e) < 0) goto fail;
    if (floe_ice_catalog_load_table(cat, "default", name, &ice, &e) < 0) {
        floe_ice_schema_t *empty = floe_ice_schema_new(0, floe_ice_type_struct());
        int rc =
            floe_ice_catalog_create_table(cat, "default", name, empty, NULL, NULL, NULL, &ice, &e);
        floe_ice_schema_free(empty);
        if (rc < 0) goto fail;
    }
    floe_tout_t out = {0};
    floe_tout_init(&out, "default", name);
    floe_tsink_env_t env = {
        .io = io, .pq_scratch = floe_pq_scratch_new(), .cfg = &cfg, .writer_id = "bench"};
    floe_tsink_t sink;
    if (floe_tout_adopt(&out, ice, 1, &e) < 0 || floe_tsink_init(&sink, &env, &out, 0, 0, &e) < 0)
        goto fail;
    floe_conv_t *c = floe_conv_new(sink.rows, kind, FLOE_CONV_RAW, &e);
    if (!c) goto fail;
    floe_conv_schemas_t src = {.fn = by_id};
    floe_conv_set_schemas(c, &src);
    int64_t t0 = floe_mono_ns();
    double c0 = cpu_secs();
    for (size_t i = 0; i < s->n; i++) {
        size_t start = i ? s->end[i - 1] : 0, len = s->end[i] - start;
        if (kind == FLOE_CONV_JSON) len--; /* the newline */
        floe_tmsg_t m = {.kind = FLOE_TMSG_RECORD, .offset = (int64_t)i, .key_null = true};
        m.value = floe_slice(s->bytes.data + start, len);
        floe_conv_stage_t st;
        if (floe_conv_record(c, 0, &m, &st, &e) < 0 || floe_tsink_consumed(&sink, len, &e) < 0) {
            fprintf(stderr, "row %zu: %s\n", i, e.msg);
            return -1;
        }
    }
    if (floe_tsink_seal(&sink, &e) < 0) goto fail;
    *secs = (double)(floe_mono_ns() - t0) / 1e9;
    *cpu = cpu_secs() - c0;
    *bytes_out = 0;
    for (size_t i = 0; i < out.npending; i++) *bytes_out += (double)out.pending[i].file_size;
    floe_conv_free(c);
    floe_tout_drop_pending(&out, FLOE_TFILES_DELETE, io);
    floe_tsink_clear(&sink);
    floe_tout_clear(&out);
    floe_pq_scratch_free(env.pq_scratch);
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
    return 0;
fail:
    fprintf(stderr, "floe %s: %s\n", name, e.msg);
    return -1;
}

static int convert_only(const set_t *s, floe_conv_kind_t kind, double *cpu)
{
    floe_err_t e;
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_conv_t *c = rows ? floe_conv_new(rows, kind, FLOE_CONV_RAW, &e) : NULL;
    if (!c) return -1;
    floe_conv_schemas_t src = {.fn = by_id};
    floe_conv_set_schemas(c, &src);
    double c0 = cpu_secs();
    for (size_t i = 0; i < s->n; i++) {
        size_t start = i ? s->end[i - 1] : 0, len = s->end[i] - start;
        if (kind == FLOE_CONV_JSON) len--;
        floe_tmsg_t m = {.kind = FLOE_TMSG_RECORD, .offset = (int64_t)i, .key_null = true};
        m.value = floe_slice(s->bytes.data + start, len);
        floe_conv_stage_t st;
        if (floe_conv_record(c, 0, &m, &st, &e) < 0) {
            fprintf(stderr, "row %zu: %s\n", i, e.msg);
            return -1;
        }
        if ((i & 8191) == 8191) floe_rows_clear(rows);
    }
    *cpu = cpu_secs() - c0;
    floe_conv_free(c);
    floe_rows_free(rows);
    return 0;
}

int main(void)
{
    floe_diag_set_level(FLOE_DIAG_WARN);
    const char *root = getenv("FLOE_ROOT") ? getenv("FLOE_ROOT") : ".";
    size_t rows = getenv("FLOE_AVRO_INGEST_ROWS")
                      ? strtoul(getenv("FLOE_AVRO_INGEST_ROWS"), NULL, 10)
                      : 500000;
    int rounds = getenv("FLOE_AVRO_INGEST_ROUNDS") ? atoi(getenv("FLOE_AVRO_INGEST_ROUNDS")) : 2;
    if (rounds < 1) rounds = 1;
    char dir[] = "/tmp/floe-bench-avro-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char src[256], wh[256], dout[256], cmd[1024];
    snprintf(src, sizeof src, "%s/events.jsonl", dir);
    snprintf(wh, sizeof wh, "%s/warehouse", dir);
    snprintf(dout, sizeof dout, "%s/duck.parquet", dir);
    set_t avro = {FLOE_BUF_INIT, NULL, 0}, json = {FLOE_BUF_INIT, NULL, 0};
    fprintf(stderr, "avro_ingest: generating %zu rows\n", rows);
    generate(rows, &avro, &json);
    FILE *f = fopen(src, "w");
    if (!f || fwrite(json.bytes.data, 1, json.bytes.len, f) != json.bytes.len || fclose(f))
        return 1;
    double amb = (double)avro.bytes.len / 1e6, jmb = (double)json.bytes.len / 1e6;
    snprintf(cmd, sizeof cmd,
             "cd '%s/tests/interop' && node '%s/bench/ingest/duckdb_json.mjs' '%s' '%s'", root,
             root, src, dout);
    double as = 1e9, ac = 1e9, js = 1e9, jc = 1e9, ds = 1e9, dc = 1e9, ab = 0, jb = 0, db = 0,
           drows = 0, ao = 1e9, jo = 1e9;
    for (int r = 0; r < rounds; r++) {
        double s, c, b;
        fprintf(stderr, "avro_ingest: round %d of %d\n", r + 1, rounds);
        if (convert_only(&avro, FLOE_CONV_AVRO, &c) < 0) return 1;
        if (c < ao) ao = c;
        if (convert_only(&json, FLOE_CONV_JSON, &c) < 0) return 1;
        if (c < jo) jo = c;
        if (floe_run(&avro, FLOE_CONV_AVRO, wh, "avro", &s, &c, &ab) < 0) return 1;
        if (s < as) as = s;
        if (c < ac) ac = c;
        if (floe_run(&json, FLOE_CONV_JSON, wh, "json", &s, &c, &jb) < 0) return 1;
        if (s < js) js = s;
        if (c < jc) jc = c;
        if (bench_duckdb_run(cmd, &s, &b, &drows, &c) < 0) return 1;
        if (s < ds) ds = s;
        if (c < dc) dc = c;
        db = b;
    }
    printf("rows:        %zu; %.1f MB of Avro records, %.1f MB of JSON lines\n", rows, amb, jmb);
    printf("floe avro:   %.3f s, %.1f MB/s, %.0f rows/s, %.0f bytes out; %.3f s CPU\n", as,
           amb / as, rows / as, ab, ac);
    printf("floe json:   %.3f s, %.1f MB/s, %.0f rows/s, %.0f bytes out; %.3f s CPU\n", js,
           jmb / js, rows / js, jb, jc);
    printf("convert only (no Parquet), CPU: avro %.3f s (%.1f MB/s, %.0f rows/s), json %.3f s "
           "(%.1f MB/s, %.0f rows/s)\n",
           ao, amb / ao, rows / ao, jo, jmb / jo, rows / jo);
    printf("duckdb json: %.3f s, %.1f MB/s, %.0f rows/s, %.0f bytes out (%.0f rows); %.3f s CPU\n",
           ds, jmb / ds, rows / ds, db, drows, dc);
    /* avro_vs_*: rows/s ratios (wall clock); cpu_*: the same in CPU seconds */
    printf("avro_ingest rows=%zu avro_mb=%.1f json_mb=%.1f floe_avro_mb_s=%.1f "
           "floe_avro_rows_s=%.0f floe_json_mb_s=%.1f floe_json_rows_s=%.0f duckdb_mb_s=%.1f "
           "duckdb_rows_s=%.0f avro_vs_json=%.2f avro_vs_duckdb=%.2f cpu_avro_vs_json=%.2f "
           "cpu_avro_vs_duckdb=%.2f convert_avro_rows_s=%.0f convert_json_rows_s=%.0f "
           "convert_avro_vs_json=%.2f\n",
           rows, amb, jmb, amb / as, rows / as, jmb / js, rows / js, jmb / ds, rows / ds, js / as,
           ds / as, jc / ac, dc / ac, rows / ao, rows / jo, jo / ao);
    floe_buf_free(&avro.bytes);
    floe_buf_free(&json.bytes);
    free(avro.end);
    free(json.end);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
