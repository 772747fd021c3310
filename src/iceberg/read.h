/* Reading a table's data files. */
#ifndef FLOE_ICEBERG_READ_H
#define FLOE_ICEBERG_READ_H

#include "format/parquet.h"
#include "storage/fileio.h"
#include "util/buf.h"

/* The largest data file read whole into memory (16 GiB). */
#define FLOE_ICE_DATA_FILE_MAX ((size_t)1 << 34)

/* Read the Parquet data file at path through io into *data (reset first)
 * and open a reader on it.  The reader borrows data->data: keep *data
 * unchanged until floe_pq_reader_free.  NULL with *err: FLOE_ENOENT when
 * the file is absent, FLOE_ECORRUPT when it is not Parquet. */
floe_pq_reader_t *floe_ice_parquet_open(floe_fileio_t *io, const char *path, floe_buf_t *data,
                                        floe_err_t *err);

#endif
