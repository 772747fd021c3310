/* bench/shred: JSON records -> typed columns, floe's single-pass shredder
 * against jansson's DOM parse of the same records (parse only, no columns:
 * the peer does strictly less work).  Events shape of issue 4/6.
 * Last line: shred rows=N mb=... floe_mb_s=... jansson_mb_s=... ratio=... */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/rows.h"
#include "util/buf.h"
#include "util/clock.h"

#include "../xorshift.h"
#define next bench_next

int main(int argc, char **argv)
{
    size_t rows = argc > 1 ? strtoul(argv[1], NULL, 10) : 500000;
    static const char *events[] = {"view", "click", "purchase", "signup", "logout"};
    static const char *countries[] = {"US", "DE", "FR", "JP", "BR", "IN", "GB", "CA"};
    static const char *devices[] = {"mobile", "desktop", "tablet"};
    floe_buf_t all = FLOE_BUF_INIT;
    size_t *offs = malloc((rows + 1) * sizeof *offs);
    for (size_t i = 0; i < rows; i++) {
        offs[i] = all.len;
        char sid[33];
        for (int k = 0; k < 32; k++) sid[k] = "0123456789abcdef"[next() & 15];
        sid[32] = 0;
        floe_buf_printf(
            &all,
            "{\"user_id\":%llu,\"ts\":\"2026-12-02T%02d:%02d:%02d.%06dZ\",\"event\":\"%s\","
            "\"url\":\"https://shop.example/p/%llu?ref=%llu\",\"amount\":%llu.%02llu,"
            "\"session_id\":\"%s\",\"country\":\"%s\",\"device\":\"%s\",\"seq\":%zu}",
            (unsigned long long)(next() % 100000), (int)(i / 3600 % 24), (int)(i / 60 % 60),
            (int)(i % 60), (int)(next() % 1000000), events[next() % 5],
            (unsigned long long)(next() % 5000), (unsigned long long)(next() % 100),
            (unsigned long long)(next() % 1000), (unsigned long long)(next() % 100), sid,
            countries[next() % 8], devices[next() % 3], i);
    }
    offs[rows] = all.len;
    double mb = (double)all.len / 1e6;

    floe_rows_t *r = floe_rows_new(NULL);
    floe_err_t e;
    int64_t t0 = floe_mono_ns();
    for (size_t i = 0; i < rows; i++) {
        if (i % 50000 == 0) floe_rows_clear(r); /* bounded, like L1 flushes */
        floe_rows_begin(r);
        if (floe_rows_json(r, floe_rows_root(r), all.data + offs[i], offs[i + 1] - offs[i], &e) <
                0 ||
            floe_rows_end(r, &e) < 0) {
            fprintf(stderr, "shred failed at %zu: %s\n", i, e.msg);
            return 1;
        }
    }
    double floe_s = (double)(floe_mono_ns() - t0) / 1e9;
    floe_rows_free(r);

    t0 = floe_mono_ns();
    for (size_t i = 0; i < rows; i++) {
        json_error_t je;
        json_t *j = json_loadb((const char *)all.data + offs[i], offs[i + 1] - offs[i], 0, &je);
        if (!j) return 1;
        json_decref(j);
    }
    double jan_s = (double)(floe_mono_ns() - t0) / 1e9;
    printf("records: %zu (%.1f MB of JSON)\n", rows, mb);
    printf("floe shredder: %.1f MB/s, %.0f rows/s\n", mb / floe_s, rows / floe_s);
    printf("jansson parse: %.1f MB/s, %.0f rows/s\n", mb / jan_s, rows / jan_s);
    printf("shred rows=%zu mb=%.1f floe_mb_s=%.1f jansson_mb_s=%.1f ratio=%.2f\n", rows, mb,
           mb / floe_s, mb / jan_s, jan_s / floe_s);
    free(offs);
    floe_buf_free(&all);
    return 0;
}
