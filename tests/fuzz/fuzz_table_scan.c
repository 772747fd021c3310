/* libFuzzer target: floe's table reader (iceberg/read.h, behind `floe
 * table scan`) on arbitrary Parquet bytes: rows or an error, never a
 * crash, a leak or an endless loop.  Runs once by the file's own columns
 * (with position deletes, and the file's fields 1 and 2 as equality
 * deletes; the rows those delete found as compaction finds them) and, when
 * the file carries an `iceberg.schema` entry, once more mapped through
 * it; and as a position delete file, the data files it names. */
#include <stdlib.h>
#include <string.h>

#include "iceberg/read.h"

static int drop(void *arg, const char *json, size_t len, floe_err_t *err)
{
    (void)arg;
    (void)json;
    (void)len;
    (void)err;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    floe_err_t err;
    int64_t left = 10000;
    int64_t pos[] = {1, 3};
    floe_ice_deletes_t *dels = floe_ice_deletes_new(&err);
    if (!dels) return 0;
    int32_t ids[] = {1, 2};
    /* the same bytes as an equality delete file too: its rows then delete
     * themselves */
    if (floe_ice_deletes_add_positions(dels, pos, 2, &err) == 0) {
        floe_ice_deletes_add_equality(dels, ids, 2, data, size, "fuzz", NULL, &err);
        floe_ice_read_file(data, size, "fuzz", NULL, dels, &left, drop, NULL, &err);
        floe_pq_reader_t *r = floe_pq_reader_open(data, size, &err);
        int64_t *rows = NULL;
        size_t nrows = 0;
        if (r && floe_ice_deletes_rows(dels, r, NULL, "fuzz", &rows, &nrows, &err) == 0) free(rows);
        floe_pq_reader_free(r);
    }
    floe_ice_deletes_free(dels);
    floe_ice_pos_targets_t tg;
    if (floe_ice_position_delete_targets_parse(data, size, "fuzz", &tg, &err) == 0)
        floe_ice_pos_targets_clear(&tg);
    floe_pq_reader_t *r = floe_pq_reader_open(data, size, &err);
    if (!r) return 0;
    const char *js = floe_pq_reader_kv(r, "iceberg.schema");
    floe_ice_schema_t *sc = js ? floe_ice_schema_from_json(js, strlen(js), &err) : NULL;
    floe_pq_reader_free(r);
    if (sc) {
        left = 10000;
        floe_ice_read_file(data, size, "fuzz", sc, NULL, &left, drop, NULL, &err);
        floe_ice_schema_free(sc);
    }
    return 0;
}
