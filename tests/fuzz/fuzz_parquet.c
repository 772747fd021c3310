/* libFuzzer target: the Parquet reader on arbitrary bytes never crashes,
 * leaks or reads out of bounds; it opens the footer and decodes every
 * column chunk of every row group, or fails with an error.  Also feeds the
 * page-header and thrift decoders directly, and copies every chunk into a
 * writer of the same schema (floe_pq_write_chunk: page copies, dictionary
 * merges), as compaction does. */
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
    /* chunk by chunk into a writer, as compaction copies them */
    floe_buf_t out = FLOE_BUF_INIT;
    floe_pq_writer_t *w = floe_pq_writer_new(s, NULL, floe_pq_sink_buf, &out, &err);
    for (int g = 0; w && g < floe_pq_reader_num_row_groups(r); g++) {
        int ok = 1;
        for (int c = 0; ok && c < floe_pq_schema_num_columns(s); c++) {
            floe_pq_chunk_counts_t k;
            int done = floe_pq_write_chunk(w, c, r, g, c, &k, &err);
            if (done < 0) ok = 0;
            if (done > 0 && (k.nulls > k.levels || k.rows > k.levels)) abort();
            if (done != 0) continue;
            floe_pq_column_t col;
            if (floe_pq_read_column(r, g, c, &col, &err) < 0) {
                ok = 0;
                break;
            }
            if (floe_pq_write_column(w, c, col.n_levels, col.def, col.rep, col.values, col.n_values,
                                     &err) < 0)
                ok = 0;
            floe_pq_column_free(&col);
        }
        if (!ok || floe_pq_writer_rows(w, (size_t)floe_pq_reader_row_group_rows(r, g), &err) < 0)
            break;
    }
    if (w && floe_pq_writer_close(w, &err) == 0) {
        /* what was written reads back */
        floe_pq_reader_t *r2 = floe_pq_reader_open(out.data, out.len, &err);
        if (!r2) abort();
        floe_pq_reader_free(r2);
    }
    floe_pq_writer_free(w);
    floe_buf_free(&out);
    floe_pq_reader_free(r);
    return 0;
}
