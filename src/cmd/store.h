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

#include "iceberg/catalog.h"
#include "storage/fileio.h"
#include "util/conf.h"

typedef enum floe_store_catalog { FLOE_STORE_FS = 0, FLOE_STORE_REST } floe_store_catalog_t;

typedef struct floe_store_cfg {
    char warehouse[4096];
    char endpoint[1024], region[64], akid[256], secret[256], token[4096], ca_file[4096];
    bool path_style;
    int payload_signing; /* floe_s3_payload_signing_t */
    int64_t part_size, in_flight;
    /* catalog.*: where tables are found and committed */
    int catalog; /* floe_store_catalog_t */
    char cat_uri[1024], cat_warehouse[1024], cat_credential[1024], cat_token[4096],
        cat_oauth_uri[1024], cat_scope[256], cat_signing_region[64], cat_signing_name[64];
    bool cat_sigv4;
} floe_store_cfg_t;

/* The keys (static; *n gets the count), for a floe_store_cfg_t: the
 * warehouse and s3.* ones, and the catalog.* ones. */
const floe_conf_key_t *floe_store_config_keys(size_t *n);
const floe_conf_key_t *floe_store_catalog_keys(size_t *n);
/* Set key k (either table) of c to v (both borrowed): 0, -1 with *err for
 * a bad value, 1 when k is not one of these keys. */
int floe_store_config_set(floe_store_cfg_t *c, const char *k, const char *v, floe_err_t *err);
/* Every key of c to its default. */
int floe_store_config_defaults(floe_store_cfg_t *c, floe_err_t *err);

/* The FileIO and the warehouse location of c (borrowed) over data_dir
 * (NULL: no default location, wh "" unless c names one):
 * *io the caller's (floe_fileio_free), wh gets the location ("s3://B/P"
 * or a local path).  For S3, a first request (a one-key listing of the
 * warehouse) checks endpoint, credentials and bucket: a failure is logged
 * as one error line and left to the tables, which pause with it, so the
 * broker still serves Kafka.  -1 with *err for a bad config. */
int floe_store_open(const floe_store_cfg_t *c, const char *data_dir, floe_fileio_t **io, char *wh,
                    size_t whn, floe_err_t *err);

/* The tables' FileIO and catalog that c (borrowed) describes, over
 * data_dir: the filesystem catalog at the warehouse (floe_store_open), or
 * with catalog.type = rest the REST catalog client at catalog.uri
 * (iceberg/catalog.h), its files through the same FileIO (S3 when
 * warehouse is s3://).  need is FLOE_ICE_REST_NEED_* (what the caller does
 * with the tables; a REST server lacking an endpoint for it is refused
 * here).  where gets the warehouse or the catalog's URI, for logs.  The
 * caller frees *cat (floe_ice_catalog_free), then *io (floe_fileio_free);
 * on failure both are NULL. */
int floe_store_open_catalog(const floe_store_cfg_t *c, const char *data_dir, unsigned need,
                            floe_fileio_t **io, floe_ice_catalog_t **cat, char *where, size_t wn,
                            floe_err_t *err);

#endif
