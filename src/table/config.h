/* Table-topic configuration: the `table.*` topic configs (design.md),
 * parsed and checked once so the pipeline never meets a bad value.
 * Server-wide defaults apply where a topic does not set a key. */
#ifndef FLOE_TABLE_CONFIG_H
#define FLOE_TABLE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "table/convert.h"
#include "util/err.h"

typedef enum floe_invalid_action {
    FLOE_INVALID_DLQ = 1, /* dead-letter table <table>_dlq (default) */
    FLOE_INVALID_DROP,    /* count and skip */
    FLOE_INVALID_PAUSE,   /* stop this table, reason visible */
} floe_invalid_action_t;

typedef struct floe_table_config {
    bool enable;
    char namespace_[128];
    char name[256];
    int64_t commit_interval_ms;  /* 100 ms .. 1 day; default 10 s */
    floe_conv_kind_t value_conv; /* default json */
    floe_conv_kind_t key_conv;   /* default string */
    uint64_t flush_bytes;        /* L2 row group, default 32 MiB */
    uint64_t target_file_bytes;  /* L3 file roll, default 64 MiB */
    floe_invalid_action_t invalid_action;
    char partition_by[512];     /* Iceberg spec syntax, "" = unpartitioned */
    bool json_infer_timestamps; /* RFC 3339 strings -> timestamptz; default true */
    bool json_coerce;           /* lossless scalar conversions; default false */
} floe_table_config_t;

/* Look up one config value of the topic; NULL when unset. */
typedef const char *(*floe_config_get_fn)(void *ctx, const char *key);

/* Defaults, then server defaults (get_default may be NULL), then the
 * topic's values.  The table identity defaults to namespace "default" and
 * the topic name with dots turned into underscores.  Returns 0, or -1 with
 * *err naming the key and the bad value. */
int floe_table_config_load(floe_table_config_t *c, const char *topic, floe_config_get_fn get,
                           void *ctx, floe_config_get_fn get_default, void *default_ctx,
                           floe_err_t *err);

/* Whether key is one the table engine reads.  Meant for validating
 * table.* keys at CreateTopics/AlterConfigs; nothing calls it there yet
 * (the broker accepts any table.* key). */
bool floe_table_config_known(const char *key);

const char *floe_invalid_action_name(floe_invalid_action_t a);

#endif
