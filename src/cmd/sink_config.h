/* `floe sink`'s YAML configuration (libyaml): kafka:, catalog:, http:,
 * status_interval: and tables:, checked as it is read so that a bad key
 * or value is one error naming the file, line and key. */
#ifndef FLOE_CMD_SINK_CONFIG_H
#define FLOE_CMD_SINK_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "cmd/store.h"
#include "util/err.h"

/* One tables: entry: topic or regex, and its table.* configs. */
typedef struct sink_table {
    char *topic, *regex;
    size_t n;
    char **keys, **values;
} sink_table_t;

typedef struct sink_config {
    size_t nprops; /* kafka: */
    char **prop_keys, **prop_values;
    /* catalog: its keys as the server's catalog.* ones (type, uri,
     * credential, token, ...) and s3.* ones; warehouse: the folder of a
     * filesystem catalog (store.warehouse), the name a REST catalog is
     * sent (store.cat_warehouse) */
    floe_store_cfg_t store;
    char http[300];               /* default 127.0.0.1:8182 */
    int64_t status_ms;            /* default 10 s; 0: no status lines */
    char registry_url[2048];      /* schema.registry.url: "" for none */
    char registry_user_info[512]; /* schema.registry.basic.auth.user.info */
    /* state_dir: the key indexes of position-mode upsert tables ("" for
     * none; required when such a table is configured) */
    char state_dir[4096];
    size_t ntables;
    sink_table_t *tables;
} sink_config_t;

/* Read path into c (caller frees with sink_config_clear, also after a
 * failure).  0, or -1 with *err: "PATH:LINE: KEY: why". */
int sink_config_load(sink_config_t *c, const char *path, floe_err_t *err);
void sink_config_clear(sink_config_t *c);

#endif
