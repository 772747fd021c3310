/* Reading a table's data files (read.h). */
#include "iceberg/read.h"

floe_pq_reader_t *floe_ice_parquet_open(floe_fileio_t *io, const char *path, floe_buf_t *data,
                                        floe_err_t *err)
{
    floe_buf_reset(data);
    if (floe_fileio_read(io, path, FLOE_ICE_DATA_FILE_MAX, data, err) < 0) return NULL;
    floe_pq_reader_t *r = floe_pq_reader_open(data->data, data->len, err);
    if (!r) floe_err_wrap(err, "%s", path);
    return r;
}
