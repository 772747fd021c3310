/* Table-topic configuration: the `table.*` topic configs (design.md),
 * declared once in config.c's key table (type, range, default, doc, live)
 * and parsed and checked from it, so the pipeline never meets a bad value.
 * Server-wide defaults apply where a topic does not set a key. */
#ifndef FLOE_TABLE_CONFIG_H
#define FLOE_TABLE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "table/convert.h"
#include "table/transform.h"
#include "util/conf.h"
#include "util/err.h"

typedef enum floe_invalid_action {
    FLOE_INVALID_DLQ = 1, /* dead-letter table <table>_dlq (default) */
    FLOE_INVALID_DROP,    /* count and skip */
    FLOE_INVALID_PAUSE,   /* stop this table, reason visible */
} floe_invalid_action_t;

typedef enum floe_write_mode {
    FLOE_WRITE_APPEND = 1, /* every record a new row (default) */
    FLOE_WRITE_UPSERT,     /* one row per key: updates and deletes replace it */
} floe_write_mode_t;

typedef enum floe_delete_mode {
    FLOE_DELETE_POSITION = 1, /* position delete files from the key index (default) */
    FLOE_DELETE_EQUALITY,     /* equality delete files on the id columns */
} floe_delete_mode_t;

typedef struct floe_table_config {
    bool enable;
    char namespace_[128];
    char name[256];
    int64_t commit_interval_ms;  /* 100 ms .. 1 day; default 10 s */
    uint64_t commit_max_bytes;   /* or once this much is written uncommitted; 256 MiB */
    floe_conv_kind_t value_conv; /* default json */
    floe_conv_kind_t key_conv;   /* default string */
    /* avro without the wire format's id: the subject whose schema decodes
     * plain Avro binary ("" = the id is in the record), its version */
    char value_subject[256];
    char key_subject[256];
    char value_version[16];     /* "latest" (default) or a version number */
    uint64_t flush_bytes;       /* L2 row group, default 32 MiB */
    uint64_t target_file_bytes; /* L3 file roll, default 64 MiB */
    floe_invalid_action_t invalid_action;
    char partition_by[512];        /* Iceberg spec syntax, "" = unpartitioned */
    bool json_infer_timestamps;    /* RFC 3339 strings -> timestamptz; default true */
    bool json_coerce;              /* lossless scalar conversions; default false */
    uint64_t json_widen_max_bytes; /* a committed long widens only in a table of
                                      at most this much live data; 1 GiB */
    /* bytes the topic's log retention holds back for the table (design.md
     * invariant 8) before it deletes anyway; FLOE_TABLE_UNLIMITED
     * (default): no limit.  Read by the broker's retention, not the
     * engine. */
    int64_t retention_max_lag_bytes;
    /* maintenance (table/maint.h) */
    bool compaction_enable;             /* default true */
    int32_t compaction_min_input_files; /* files a compaction group rewrites at least; 5 */
    int64_t compaction_interval_ms;     /* between compaction runs of a table; 1 min */
    uint64_t compaction_max_bytes;      /* input bytes one run rewrites at most; 1 GiB */
    int32_t compaction_delete_percent;  /* a file this much deleted is rewritten; 10 */
    int32_t compaction_delete_files;    /* a partition with this many delete files too; 20 */
    int64_t expire_interval_ms;         /* between snapshot expiries of a table; 1 min */
    int64_t orphan_min_age_ms;          /* unreferenced files younger than this stay; 1 h */
    /* value transforms (table/transform.h) */
    char transforms[128];  /* comma list, "" = none */
    char flatten_delim[9]; /* flatten's delimiter; "_" */
    bool cdc_metadata;     /* debezium_unwrap adds `_cdc`; default false */
    /* upsert tables (table/upsert.h) */
    floe_write_mode_t write_mode;
    char id_columns[256]; /* comma list of dot paths; "" with upsert: from the key */
    char cdc_field[128];  /* dot path of the op column ("" none) */
    floe_delete_mode_t delete_mode;
    uint64_t index_mem_bytes; /* key index memory bound; 64 MiB */
} floe_table_config_t;

#define FLOE_TABLE_UNLIMITED INT64_MAX

/* Look up one config value of the topic; NULL when unset. */
typedef const char *(*floe_config_get_fn)(void *ctx, const char *key);

/* The table.* keys, in the order of the configuration reference.  Static;
 * *n gets the count.  A key is live when a running table takes a change
 * of it as it comes; a change of any other key rebuilds the table's
 * pipeline (converters, identity). */
const floe_conf_key_t *floe_table_config_keys(size_t *n);

/* Defaults, then server defaults (get_default may be NULL), then the
 * topic's values.  The table identity defaults to namespace "default" and
 * the topic name with dots turned into underscores.  A table.flush.bytes
 * above table.target.file.size is capped at it.  Every valid key is
 * applied even when another is not; returns 0, or -1 with *err naming the
 * first bad key and its value ("topic 'T': table.enable: ..."). */
int floe_table_config_load(floe_table_config_t *c, const char *topic, floe_config_get_fn get,
                           void *ctx, floe_config_get_fn get_default, void *default_ctx,
                           floe_err_t *err);

/* The check where configs enter (CreateTopics, AlterConfigs, the server
 * config file): keys[i]/values[i] (borrowed, n of them) are the topic's
 * whole set as it would be after the request; keys outside table.* are
 * not looked at.  Refuses a table.* key that is unknown ("table.enabel:
 * unknown table config (did you mean table.enable?)"), a bad value, and a
 * table.flush.bytes above a table.target.file.size set with it.  Server
 * defaults (get_default, may be NULL) fill in the rest.  0, or -1 with
 * *err starting with the key. */
int floe_table_config_check(const char *topic, const char *const *keys, const char *const *values,
                            size_t n, floe_config_get_fn get_default, void *default_ctx,
                            floe_err_t *err);

/* Whether a topic asks to be a table: table.enable (its own, else the
 * server default) is anything but a valid false.  A value that does not
 * parse counts as asking, so that its error shows on the table. */
bool floe_table_config_wanted(floe_config_get_fn get, void *ctx, floe_config_get_fn get_default,
                              void *default_ctx);

/* Whether next differs from running in a key that is not live (the table
 * must be rebuilt to take it). */
bool floe_table_config_identity_changed(const floe_table_config_t *running,
                                        const floe_table_config_t *next);

/* Whether next differs from running in a live key. */
bool floe_table_config_live_changed(const floe_table_config_t *running,
                                    const floe_table_config_t *next);

/* Take next's live keys into running. */
void floe_table_config_apply_live(floe_table_config_t *running, const floe_table_config_t *next);

/* c's value transforms (table.transforms, table.transforms.flatten.delimiter,
 * table.cdc.metadata) as the converter takes them.  c was loaded, so the
 * list parses. */
void floe_table_config_xform(const floe_table_config_t *c, floe_xform_t *out);

const char *floe_invalid_action_name(floe_invalid_action_t a);

/* Key k's name in `floe sink`'s YAML (a tables: entry): its own yaml
 * name, else the key after "table." with dots as '_' (table.flush.bytes:
 * flush_bytes).  1 with the name in buf, 0 when the key has none
 * (table.enable: every entry is a table) or buf is too small. */
int floe_table_config_yaml_name(const floe_conf_key_t *k, char *buf, size_t size);
/* The table.* key whose YAML name is name (borrowed), or NULL. */
const floe_conf_key_t *floe_table_config_find_yaml(const char *name);

#endif
