/* Avro container write and read throughput, floe against avsc (node), on
 * the same rows of the events shape, in one run.
 *   build/bench/avro/bench_avro [ROWS]     (default 300000)
 * floe writes a container (codec null), reads it back; avsc (run through
 * bench/avro/avsc_bench.mjs) reads floe's file and writes its own.
 * Last line: AVRO rows=N bytes=B floe_write_rows_s=... floe_read_rows_s=...
 *            avsc_write_rows_s=... avsc_read_rows_s=... write_ratio=... read_ratio=... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/avro.h"
#include "util/clock.h"

static const char *SCHEMA = "{\"type\":\"record\",\"name\":\"event\",\"fields\":["
                            "{\"name\":\"user_id\",\"type\":\"long\",\"field-id\":1},"
                            "{\"name\":\"ts\",\"type\":{\"type\":\"long\",\"logicalType\":"
                            "\"timestamp-micros\"},\"field-id\":2},"
                            "{\"name\":\"event\",\"type\":\"string\",\"field-id\":3},"
                            "{\"name\":\"url\",\"type\":\"string\",\"field-id\":4},"
                            "{\"name\":\"amount\",\"type\":[\"null\",\"double\"],\"field-id\":5},"
                            "{\"name\":\"session_id\",\"type\":\"string\",\"field-id\":6},"
                            "{\"name\":\"country\",\"type\":\"string\",\"field-id\":7},"
                            "{\"name\":\"device\",\"type\":\"string\",\"field-id\":8},"
                            "{\"name\":\"seq\",\"type\":\"long\",\"field-id\":9}]}";

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(int argc, char **argv)
{
    long rows = argc > 1 ? atol(argv[1]) : 300000;
    floe_err_t err = {0};
    floe_avro_schema_t *s;
    if (floe_avro_schema_parse(SCHEMA, strlen(SCHEMA), &s, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    static const char *events[] = {"click", "view", "purchase", "scroll", "login"};
    static const char *countries[] = {"US", "DE", "FR", "JP", "BR", "IN"};
    static const char *devices[] = {"ios", "android", "web"};
    floe_arena_t a;
    floe_arena_init(&a, 1 << 16, 0);
    floe_avro_writer_opts_t o = FLOE_AVRO_WRITER_OPTS_INIT;
    floe_avro_writer_t *w;
    floe_avro_writer_new(&w, s, &o, &err);
    int64_t t0 = floe_mono_ns();
    char url[96], sess[40];
    for (long i = 0; i < rows; i++) {
        uint64_t r = next();
        floe_avro_value_t *v = floe_avro_value_new(&a, s);
        floe_avro_set_long(floe_avro_field_at(v, 0), (int64_t)(r % 100000), &err);
        floe_avro_set_long(floe_avro_field_at(v, 1), 1700000000000000LL + i * 1000, &err);
        floe_avro_set_string(floe_avro_field_at(v, 2), events[r % 5], &err);
        snprintf(url, sizeof url, "https://shop.example.com/p/%u?ref=%u",
                 (unsigned)(r >> 20) % 50000, (unsigned)(r >> 40) % 100);
        floe_avro_set_string(floe_avro_field_at(v, 3), url, &err);
        if (r % 7)
            floe_avro_set_double(floe_avro_field_at(v, 4), (double)(r % 100000) / 100.0, &err);
        else
            floe_avro_set_null(floe_avro_field_at(v, 4), &err);
        snprintf(sess, sizeof sess, "%016llx%016llx", (unsigned long long)next(),
                 (unsigned long long)next());
        floe_avro_set_string(floe_avro_field_at(v, 5), sess, &err);
        floe_avro_set_string(floe_avro_field_at(v, 6), countries[(r >> 8) % 6], &err);
        floe_avro_set_string(floe_avro_field_at(v, 7), devices[(r >> 12) % 3], &err);
        floe_avro_set_long(floe_avro_field_at(v, 8), i, &err);
        if (floe_avro_writer_append(w, v, &err) != 0) {
            fprintf(stderr, "append: %s\n", err.msg);
            return 1;
        }
        floe_arena_reset(&a);
    }
    floe_avro_writer_finish(w, &err);
    int64_t t1 = floe_mono_ns();
    floe_slice_t file = floe_avro_writer_bytes(w);

    floe_avro_reader_t *rd;
    if (floe_avro_reader_open(&rd, file.ptr, file.len, NULL, &err) != 0) {
        fprintf(stderr, "open: %s\n", err.msg);
        return 1;
    }
    floe_avro_value_t *v;
    long n = 0;
    int64_t sum = 0;
    while (floe_avro_reader_next(rd, &a, &v, &err) == 1) {
        int64_t x;
        floe_avro_get_long(floe_avro_get_at(v, 8), &x, &err);
        sum += x;
        n++;
        floe_arena_reset(&a);
    }
    int64_t t2 = floe_mono_ns();
    floe_avro_reader_free(rd);
    if (n != rows || sum != (int64_t)rows * (rows - 1) / 2) {
        fprintf(stderr, "read back %ld rows, want %ld\n", n, rows);
        return 1;
    }
    double wr = rows / ((t1 - t0) / 1e9), rr = rows / ((t2 - t1) / 1e9);
    printf("floe: wrote %ld rows (%zu bytes) at %.0f rows/s, read at %.0f rows/s\n", rows, file.len,
           wr, rr);

    /* avsc on the same file */
    char path[256];
    snprintf(path, sizeof path, "/tmp/floe_bench_avro_%d.avro", (int)getpid());
    FILE *f = fopen(path, "wb");
    fwrite(file.ptr, 1, file.len, f);
    fclose(f);
    const char *root = getenv("FLOE_ROOT");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "node '%s/bench/avro/avsc_bench.mjs' '%s' %ld", root ? root : ".",
             path, rows);
    FILE *p = popen(cmd, "r");
    double aw = 0, ar = 0;
    char line[512];
    while (p && fgets(line, sizeof line, p)) {
        fputs(line, stdout);
        sscanf(line, "AVSC write_rows_s=%lf read_rows_s=%lf", &aw, &ar);
    }
    int st = p ? pclose(p) : -1;
    if (!getenv("FLOE_BENCH_KEEP")) unlink(path);
    if (st != 0 || aw <= 0 || ar <= 0) {
        fprintf(stderr, "avsc run failed\n");
        return 1;
    }
    printf("AVRO rows=%ld bytes=%zu floe_write_rows_s=%.0f floe_read_rows_s=%.0f "
           "avsc_write_rows_s=%.0f "
           "avsc_read_rows_s=%.0f write_ratio=%.2f read_ratio=%.2f\n",
           rows, file.len, wr, rr, aw, ar, wr / aw, rr / ar);
    floe_avro_writer_free(w);
    floe_arena_free(&a);
    floe_avro_schema_free(s);
    return 0;
}
