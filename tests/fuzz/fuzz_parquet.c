/* libFuzzer target: the Parquet reader on arbitrary bytes never crashes,
 * leaks or reads out of bounds; it opens the footer and decodes every
 * column chunk of every row group, or fails with an error.  Also feeds the
 * page-header and thrift decoders directly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/parquet.h"
#include "format/parquet_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    floe_err_t err;
    pq_page_header_t h;
    size_t used;
    if (pq_page_header_decode(data, size, &h, &used, &err) == 0 && used > size) abort();
    pq_file_meta_t m;
    if (pq_footer_decode(data, size, &m, &err) == 0) pq_file_meta_free(&m);
    else
        pq_file_meta_free(&m);
    floe_pq_reader_t *r = floe_pq_reader_open(data, size, &err);
    if (!r) return 0;
    const floe_pq_schema_t *s = floe_pq_reader_schema(r);
    for (int g = 0; g < floe_pq_reader_num_row_groups(r); g++) {
        for (int c = 0; c < floe_pq_schema_num_columns(s); c++) {
            floe_pq_column_t col;
            if (floe_pq_read_column(r, g, c, &col, &err) == 0) {
                if (col.def && col.n_levels == 0 && col.n_values) abort();
                floe_pq_column_free(&col);
            }
        }
    }
    floe_pq_reader_free(r);
    return 0;
}
