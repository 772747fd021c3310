/* Where tables live: the `warehouse` and `s3.*` config keys (Iceberg's own
 * FileIO property names, so an engine's catalog config can use the same
 * lines), shared by `floe serve` and `floe table --config FILE`, and the
 * FileIO they make: local files under DATA/warehouse by default, the S3
 * FileIO (storage/s3.h) for warehouse = s3://BUCKET/PREFIX.  The broker's
 * own log stays on local disk either way. */
#ifndef FLOE_CMD_STORE_H
#define FLOE_CMD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/fileio.h"
#include "util/conf.h"

typedef struct floe_store_cfg {
    char warehouse[4096];
    char endpoint[1024], region[64], akid[256], secret[256], token[4096], ca_file[4096];
    bool path_style;
    int payload_signing; /* floe_s3_payload_signing_t */
    int64_t part_size, in_flight;
} floe_store_cfg_t;

/* The keys (static; *n gets the count), for a floe_store_cfg_t. */
const floe_conf_key_t *floe_store_config_keys(size_t *n);

/* The FileIO and the warehouse location of c (borrowed) over data_dir:
 * *io the caller's (floe_fileio_free), wh gets the location ("s3://B/P"
 * or a local path).  For S3, a first request (a one-key listing of the
 * warehouse) checks endpoint, credentials and bucket: a failure is logged
 * as one error line and left to the tables, which pause with it, so the
 * broker still serves Kafka.  -1 with *err for a bad config. */
int floe_store_open(const floe_store_cfg_t *c, const char *data_dir, floe_fileio_t **io, char *wh,
                    size_t whn, floe_err_t *err);

#endif
