/* libFuzzer target: `floe table scan`'s record assembly (src/cmd/
 * table_scan.c, compiled in here since src/cmd is not in libfloe.a) on
 * arbitrary Parquet bytes: rows or an error, never a crash, a leak or an
 * endless loop.  Runs once by the file's own columns and, when the file
 * carries an `iceberg.schema` entry, once more mapped through it. */
#include "cmd/table_scan.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink) sink = fopen("/dev/null", "w");
    if (!sink) return 0;
    floe_err_t err;
    int64_t left = 10000;
    int64_t dels[] = {1, 3};
    floe_cli_scan_parquet(data, size, "fuzz", NULL, dels, 2, &left, sink, &err);
    floe_pq_reader_t *r = floe_pq_reader_open(data, size, &err);
    if (!r) return 0;
    const char *js = floe_pq_reader_kv(r, "iceberg.schema");
    floe_ice_schema_t *sc = js ? floe_ice_schema_from_json(js, strlen(js), &err) : NULL;
    floe_pq_reader_free(r);
    if (sc) {
        left = 10000;
        floe_cli_scan_parquet(data, size, "fuzz", sc, NULL, 0, &left, sink, &err);
        floe_ice_schema_free(sc);
    }
    return 0;
}
