#include "table/config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "table/transform.h"
#include "util/parse.h"

/* Iceberg names: letters, digits, '_' and '-'; no dots (they separate
 * levels), no slashes (they become paths). */
static int check_ident(const char *v, floe_err_t *err)
{
    if (!*v) return floe_err_set(err, FLOE_EINVAL, "empty name");
    for (const char *p = v; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-'))
            return floe_err_set(err, FLOE_EINVAL,
                                "'%.64s' may hold only letters, digits, '_' and '-'", v);
    return 0;
}

static int check_transforms(const char *v, floe_err_t *err)
{
    floe_xform_t x;
    return floe_xform_parse(v, &x, err);
}

static int check_delim(const char *v, floe_err_t *err)
{
    if (!*v) return floe_err_set(err, FLOE_EINVAL, "empty delimiter");
    return 0;
}

/* "latest" or a version number 1..2^31-1. */
static int check_version(const char *v, floe_err_t *err)
{
    if (!strcmp(v, "latest")) return 0;
    long long n = 0;
    for (const char *p = v; *p; p++) {
        if (*p < '0' || *p > '9' || n > INT32_MAX) n = -1;
        if (n < 0) break;
        n = n * 10 + (*p - '0');
    }
    if (!*v || n < 1 || n > INT32_MAX)
        return floe_err_set(err, FLOE_EINVAL, "'%.32s' is neither `latest` nor a version number",
                            v);
    return 0;
}

static const floe_conf_enum_t converters[] = {{"json", FLOE_CONV_JSON},
                                              {"string", FLOE_CONV_STRING},
                                              {"raw", FLOE_CONV_RAW},
                                              {"avro", FLOE_CONV_AVRO},
                                              {"protobuf", FLOE_CONV_PROTOBUF},
                                              {"json_schema", FLOE_CONV_JSON_SCHEMA},
                                              {NULL, 0}};
static const floe_conf_enum_t actions[] = {{"dlq", FLOE_INVALID_DLQ},
                                           {"drop", FLOE_INVALID_DROP},
                                           {"pause", FLOE_INVALID_PAUSE},
                                           {NULL, 0}};

static const floe_conf_enum_t write_modes[] = {
    {"append", FLOE_WRITE_APPEND}, {"upsert", FLOE_WRITE_UPSERT}, {NULL, 0}};
static const floe_conf_enum_t delete_modes[] = {
    {"position", FLOE_DELETE_POSITION}, {"equality", FLOE_DELETE_EQUALITY}, {NULL, 0}};

/* A comma list of dot paths of names (blanks around them allowed). */
static int check_paths(const char *v, floe_err_t *err)
{
    bool name = false;
    for (const char *p = v; *p; p++) {
        if (*p == ',' || *p == '.') {
            if (!name) return floe_err_set(err, FLOE_EINVAL, "empty name in '%.64s'", v);
            name = false;
        } else if (*p != ' ')
            name = true;
    }
    if (*v && !name) return floe_err_set(err, FLOE_EINVAL, "empty name in '%.64s'", v);
    return 0;
}

#define F(f) FLOE_CONF_FIELD(floe_table_config_t, f)

static const floe_conf_key_t KEYS[] = {
    {.name = "table.enable",
     .type = FLOE_CONF_BOOL,
     .def = "false",
     F(enable),
     .doc = "Write the topic into an Iceberg table: a table topic."},
    {.name = "table.namespace",
     .type = FLOE_CONF_STRING,
     .def = "default",
     F(namespace_),
     .check = check_ident,
     .doc = "Iceberg namespace of the table: letters, digits, `_` and `-`."},
    {.name = "table.name",
     .type = FLOE_CONF_STRING,
     .def_doc = "the topic, dots as `_`",
     F(name),
     .check = check_ident,
     .doc = "Iceberg table name: letters, digits, `_` and `-`. Dead letters go to `<name>_dlq`."},
    {.name = "table.commit.interval.ms",
     .type = FLOE_CONF_DURATION,
     .min = 100,
     .max = 86400000,
     .def = "10s",
     .live = true,
     F(commit_interval_ms),
     .yaml = "commit_interval",
     .doc = "How often the table commits one snapshot: how fresh it is."},
    {.name = "table.commit.max.bytes",
     .type = FLOE_CONF_SIZE,
     .min = 1 << 20,
     .max = 1ll << 40,
     .def = "256MiB",
     .live = true,
     F(commit_max_bytes),
     .doc = "The table also commits, before its interval is up, once its data files written "
            "since the last commit (closed ones and what the open ones hold) reach this size."},
    {.name = "table.value.converter",
     .type = FLOE_CONF_ENUM,
     .def = "json",
     .values = converters,
     F(value_conv),
     .doc = "Record value to columns: `json` (schema inferred and evolved), `avro` (Confluent "
            "wire format, schema from the registry, each Avro type its Iceberg type), `protobuf` "
            "(the same with message indexes, decoded straight into the columns its JSON form "
            "would infer, evolved as json), "
            "`json_schema` (the same with JSON text, each JSON Schema type its Iceberg type, "
            "schema from floe's registry), `string` or `raw` (binary) in a `value` column."},
    {.name = "table.key.converter",
     .type = FLOE_CONF_ENUM,
     .def = "string",
     .values = converters,
     F(key_conv),
     .doc = "Record key into `_kafka.key`: `string` or `raw` (binary); a `json` key is kept as "
            "its text, an `avro`, `protobuf` or `json_schema` key as its JSON text."},
    {.name = "table.value.schema.subject",
     .type = FLOE_CONF_STRING,
     .def = "",
     .def_doc = "empty: the schema id is in each record",
     F(value_subject),
     .doc = "With `table.value.converter=avro`: values are plain Avro binary (no magic byte, no "
            "schema id), decoded with this registry subject's schema at "
            "`table.value.schema.version`; with `latest`, a newer version registered later "
            "decodes the records after it and evolves the table."},
    {.name = "table.value.schema.version",
     .type = FLOE_CONF_STRING,
     .def = "latest",
     F(value_version),
     .check = check_version,
     .doc = "Version of `table.value.schema.subject`: `latest` (re-read while the table runs) or "
            "a version number."},
    {.name = "table.key.schema.subject",
     .type = FLOE_CONF_STRING,
     .def = "",
     .def_doc = "empty: the schema id is in each key",
     F(key_subject),
     .doc = "With `table.key.converter=avro`: keys are plain Avro binary, decoded with the "
            "latest schema of this registry subject."},
    {.name = "table.flush.bytes",
     .type = FLOE_CONF_SIZE,
     .min = 1024,
     .max = 1ll << 32,
     .def = "32MiB",
     .live = true,
     F(flush_bytes),
     .doc = "Bytes a partition buffers before writing them as one Parquet row group. Set with "
            "`table.target.file.size`, it may not exceed it; else it is capped at it."},
    {.name = "table.target.file.size",
     .type = FLOE_CONF_SIZE,
     .min = 1024,
     .max = 1ll << 40,
     .def = "64MiB",
     .live = true,
     F(target_file_bytes),
     .doc = "Size at which a data file is closed and the next one started."},
    {.name = "table.invalid.record.action",
     .type = FLOE_CONF_ENUM,
     .def = "dlq",
     .values = actions,
     .live = true,
     F(invalid_action),
     .doc = "A record that does not convert or fit the schema goes to the dead-letter table "
            "`<table>_dlq`, is counted and dropped, or pauses the table."},
    {.name = "table.partition.by",
     .type = FLOE_CONF_STRING,
     .def = "",
     .def_doc = "empty: unpartitioned",
     .live = true,
     F(partition_by),
     .doc = "Iceberg partition spec, e.g. `region, day(_kafka.timestamp)`, `bucket(user_id, 16)`, "
            "`truncate(name, 5)`; a change evolves the spec for new files."},
    {.name = "table.json.infer.timestamps",
     .type = FLOE_CONF_BOOL,
     .def = "true",
     F(json_infer_timestamps),
     .doc = "JSON strings holding RFC 3339 date-times with a zone become `timestamptz` columns."},
    {.name = "table.json.coerce",
     .type = FLOE_CONF_BOOL,
     .def = "false",
     F(json_coerce),
     .doc = "A JSON value that does not fit its column is converted when nothing is lost "
            "(`\"42\"` into a long) instead of going to the dead-letter table."},
    {.name = "table.retention.max.lag.bytes",
     .type = FLOE_CONF_SIZE,
     .min = 0,
     .max = INT64_MAX,
     .def = "9223372036854775807",
     .def_doc = "unlimited",
     .live = true,
     F(retention_max_lag_bytes),
     .doc = "Log retention (`retention.ms`, `retention.bytes`) and DeleteRecords never delete "
            "records the table has not committed; while it waits, this many bytes at most are "
            "kept past retention. Beyond it retention deletes the oldest anyway and the skipped "
            "offsets go to the dead-letter table as one `retention` row per range. "
            "DeleteRecords always stops at the table."},
    {.name = "table.compaction.enable",
     .type = FLOE_CONF_BOOL,
     .def = "true",
     .live = true,
     F(compaction_enable),
     .doc = "Compact the table in the background: small data files of a partition are rewritten "
            "into files near `table.target.file.size` (a `replace` snapshot; rows, `_kafka` "
            "columns and partition values kept), on a low-priority thread."},
    {.name = "table.compaction.min.input.files",
     .type = FLOE_CONF_INT,
     .min = 2,
     .max = 100000,
     .def = "5",
     .live = true,
     F(compaction_min_input_files),
     .doc = "Small files of one partition that make a compaction worth it."},
    {.name = "table.compaction.interval.ms",
     .type = FLOE_CONF_DURATION,
     .min = 100,
     .max = 7 * 86400000LL,
     .def = "1min",
     .live = true,
     F(compaction_interval_ms),
     .doc = "How often a table's small files are looked at for compaction."},
    {.name = "table.compaction.max.bytes.per.run",
     .type = FLOE_CONF_SIZE,
     .min = 1024,
     .max = 1ll << 44,
     .def = "1GiB",
     .live = true,
     F(compaction_max_bytes),
     .doc = "Input bytes one compaction run rewrites at most (the first group whatever its "
            "size); the rest waits for the next run."},
    {.name = "table.compaction.delete.percent",
     .type = FLOE_CONF_INT,
     .min = 0,
     .max = 100,
     .def = "10",
     .live = true,
     F(compaction_delete_percent),
     .doc = "A data file whose delete files remove at least this percent of its rows is "
            "rewritten with them applied whatever its size (0: only small files are). Rows "
            "named by position deletes are counted; an equality delete file's rows are spread "
            "over the files it applies to."},
    {.name = "table.compaction.delete.files",
     .type = FLOE_CONF_INT,
     .min = 0,
     .max = 1000000,
     .def = "20",
     .live = true,
     F(compaction_delete_files),
     .doc = "A partition with this many delete files has every data file they apply to "
            "rewritten with the deletes applied, and the delete files removed (0: never for "
            "this reason)."},
    {.name = "table.expire.interval.ms",
     .type = FLOE_CONF_DURATION,
     .min = 100,
     .max = 7 * 86400000LL,
     .def = "1min",
     .live = true,
     F(expire_interval_ms),
     .doc = "How often snapshots older than the table property "
            "`history.expire.max-snapshot-age-ms` (floe's tables: 1 hour) beyond the newest "
            "`history.expire.min-snapshots-to-keep` (10) are expired, with the files only they "
            "reached."},
    {.name = "table.orphan.min.age",
     .type = FLOE_CONF_DURATION,
     .min = 1000,
     .max = 30 * 86400000LL,
     .def = "1h",
     .live = true,
     F(orphan_min_age_ms),
     .doc = "Files under the table that no snapshot references are deleted once this old "
            "(looked for as often); at start, those of an earlier run at once. Files of a commit "
            "whose outcome is unknown are never deleted while floe runs."},
    {.name = "table.json.widen.max.bytes",
     .type = FLOE_CONF_SIZE,
     .min = 0,
     .max = 1ll << 50,
     .def = "1GiB",
     .live = true,
     F(json_widen_max_bytes),
     .doc = "A fraction arriving for a committed `long` column widens it to `double`, which "
            "rewrites every data file holding the column, only while the table's live data "
            "files total at most this size; beyond it the record goes to the dead-letter "
            "table with the reason. 0: never, once the table holds data."},
    {.name = "table.transforms",
     .type = FLOE_CONF_STRING,
     .def = "",
     .def_doc = "empty: none",
     F(transforms),
     .check = check_transforms,
     .doc = "Comma list of steps applied to each JSON (or Avro) value before it is written, in "
            "order: `debezium_unwrap` turns a Debezium change event (with or without the "
            "`schema`/`payload` envelope) into its row (`after` for op c, r, u; `before` for "
            "d; a tombstone writes no row); `flatten` turns nested objects into top-level "
            "columns named by their path (`a_b_c`)."},
    {.name = "table.transforms.flatten.delimiter",
     .type = FLOE_CONF_STRING,
     .def = "_",
     F(flatten_delim),
     .check = check_delim,
     .doc = "What `flatten` puts between the names of a nested field's path (1 to 8 bytes)."},
    {.name = "table.cdc.metadata",
     .type = FLOE_CONF_BOOL,
     .def = "false",
     F(cdc_metadata),
     .doc = "`debezium_unwrap` adds a `_cdc` struct column: `op` (c, r, u, d), `ts` (the "
            "event's `ts_ms` as a timestamp) and `source` (Debezium's source block)."},
    {.name = "table.write.mode",
     .type = FLOE_CONF_ENUM,
     .def = "append",
     F(write_mode),
     .values = write_modes,
     .doc = "`append`: every record is a new row. `upsert`: the table holds one row per key "
            "(`table.id.columns`); a later record of a key replaces its row, a delete "
            "(`table.cdc.field`, Debezium op `d`, a tombstone) removes it (docs/upsert.md)."},
    {.name = "table.id.columns",
     .type = FLOE_CONF_STRING,
     .def = "",
     .def_doc = "empty: the record key's fields",
     F(id_columns),
     .check = check_paths,
     .doc = "Comma list of the key columns of an upsert table, nested ones by dot path "
            "(`a.b`); long, int, string or boolean values. They become the schema's "
            "identifier fields; a record without them goes to the dead-letter table. Empty: "
            "the fields of the first record key (a JSON object key's top-level field names; "
            "`_kafka.key` for any other key)."},
    {.name = "table.cdc.field",
     .type = FLOE_CONF_STRING,
     .def = "",
     .def_doc = "empty: none",
     F(cdc_field),
     .check = check_paths,
     .doc = "Column (dot path) holding each record's change kind in an upsert table: `d`, `D` "
            "or `delete` deletes the key's row, anything else (I, U, c, r, u) writes it "
            "(`_cdc.op` with `table.cdc.metadata`). Debezium deletes and tombstones delete "
            "without it."},
    {.name = "table.upsert.delete.mode",
     .type = FLOE_CONF_ENUM,
     .def = "position",
     F(delete_mode),
     .values = delete_modes,
     .doc = "How an upsert table removes replaced rows: `position` writes position delete "
            "files from a key index kept under the data dir (`floe sink`: its `state_dir`; "
            "reads as fast as an append "
            "table's; every reader supports them); `equality` writes equality delete files on "
            "the id columns (no index; every later read joins them until compaction)."},
    {.name = "table.upsert.index.memory.bytes",
     .type = FLOE_CONF_SIZE,
     .min = 64 << 10,
     .max = 1ll << 40,
     .def = "64MiB",
     F(index_mem_bytes),
     .doc = "Memory the key index of a position-mode upsert table holds at most: beyond it "
            "the keys live in a page file under the data dir (`floe sink`: its `state_dir`), "
            "read through a page cache of this size (docs/upsert.md)."},
};
#define NKEYS (sizeof KEYS / sizeof KEYS[0])

#undef F

const floe_conf_key_t *floe_table_config_keys(size_t *n)
{
    *n = NKEYS;
    return KEYS;
}

void floe_table_config_xform(const floe_table_config_t *c, floe_xform_t *out)
{
    memset(out, 0, sizeof *out);
    floe_err_t e;
    if (floe_xform_parse(c->transforms, out, &e) < 0) out->nsteps = 0;
    out->cdc_metadata = c->cdc_metadata;
    snprintf(out->delim, sizeof out->delim, "%s", c->flatten_delim);
}

const char *floe_invalid_action_name(floe_invalid_action_t a)
{
    for (const floe_conf_enum_t *e = actions; e->name; e++)
        if (e->value == (int)a) return e->name;
    return "?";
}

/* Defaults, server defaults, then the topic's keys; every valid one is
 * applied.  The first error is kept in *err, prefixed "server default"
 * when it is one.  explicit_[0]/[1]: the topic's get set table.flush.bytes
 * / table.target.file.size. */
static int fill(floe_table_config_t *c, const char *topic, floe_config_get_fn get, void *ctx,
                floe_config_get_fn get_default, void *default_ctx, bool explicit_[2],
                floe_err_t *err)
{
    memset(c, 0, sizeof *c);
    if (floe_conf_defaults(KEYS, NKEYS, c, err) < 0) return -1;
    size_t n = strlen(topic);
    if (n >= sizeof c->name) return floe_err_set(err, FLOE_EINVAL, "topic name too long");
    for (size_t i = 0; i <= n; i++) c->name[i] = topic[i] == '.' ? '_' : topic[i];
    int rc = 0;
    floe_err_t e;
    for (int level = 0; level < 2; level++) {
        floe_config_get_fn g = level ? get : get_default;
        void *gctx = level ? ctx : default_ctx;
        for (size_t i = 0; g && i < NKEYS; i++) {
            const char *v = g(gctx, KEYS[i].name);
            if (!v) continue;
            if (level && KEYS[i].off == offsetof(floe_table_config_t, flush_bytes))
                explicit_[0] = true;
            if (level && KEYS[i].off == offsetof(floe_table_config_t, target_file_bytes))
                explicit_[1] = true;
            if (floe_conf_set(&KEYS[i], c, v, &e) == 0 || rc < 0) continue;
            rc = -1;
            if (!level) floe_err_wrap(&e, "server default");
            if (err) *err = e;
        }
    }
    return rc;
}

int floe_table_config_load(floe_table_config_t *c, const char *topic, floe_config_get_fn get,
                           void *ctx, floe_config_get_fn get_default, void *default_ctx,
                           floe_err_t *err)
{
    bool explicit_[2] = {false, false};
    int rc = fill(c, topic, get, ctx, get_default, default_ctx, explicit_, err);
    if (c->flush_bytes > c->target_file_bytes) c->flush_bytes = c->target_file_bytes;
    if (rc < 0 && err && strncmp(err->msg, "server default", 14))
        floe_err_wrap(err, "topic '%s'", topic);
    return rc;
}

typedef struct kvs {
    const char *const *keys, *const *values;
    size_t n;
} kvs_t;

static const char *kvs_get(void *ctx, const char *key)
{
    const kvs_t *s = ctx;
    const char *v = NULL; /* the last one, as a JSON object keeps it */
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->keys[i], key)) v = s->values[i];
    return v;
}

int floe_table_config_check(const char *topic, const char *const *keys, const char *const *values,
                            size_t n, floe_config_get_fn get_default, void *default_ctx,
                            floe_err_t *err)
{
    for (size_t i = 0; i < n; i++)
        if (!strncmp(keys[i], "table.", 6) && !floe_conf_find(KEYS, NKEYS, keys[i]))
            return floe_conf_unknown(KEYS, NKEYS, keys[i], "table", err);
    kvs_t s = {keys, values, n};
    floe_table_config_t c;
    bool explicit_[2] = {false, false};
    if (fill(&c, topic ? topic : "", kvs_get, &s, get_default, default_ctx, explicit_, err) < 0)
        return -1;
    if (explicit_[0] && explicit_[1] && c.flush_bytes > c.target_file_bytes)
        return floe_err_set(err, FLOE_EINVAL,
                            "table.flush.bytes: %s is above table.target.file.size %s (a row "
                            "group cannot outgrow its file)",
                            kvs_get(&s, "table.flush.bytes"),
                            kvs_get(&s, "table.target.file.size"));
    return 0;
}

bool floe_table_config_wanted(floe_config_get_fn get, void *ctx, floe_config_get_fn get_default,
                              void *default_ctx)
{
    const char *v = get ? get(ctx, "table.enable") : NULL;
    if (!v && get_default) v = get_default(default_ctx, "table.enable");
    bool on = false;
    return v && (floe_parse_bool(v, &on, NULL) < 0 || on);
}

bool floe_table_config_identity_changed(const floe_table_config_t *running,
                                        const floe_table_config_t *next)
{
    return floe_conf_changed(KEYS, NKEYS, running, next);
}

bool floe_table_config_live_changed(const floe_table_config_t *running,
                                    const floe_table_config_t *next)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (KEYS[i].live && memcmp((const char *)running + KEYS[i].off,
                                   (const char *)next + KEYS[i].off, KEYS[i].size))
            return true;
    return false;
}

void floe_table_config_apply_live(floe_table_config_t *running, const floe_table_config_t *next)
{
    floe_conf_copy_live(KEYS, NKEYS, running, next);
}

int floe_table_config_yaml_name(const floe_conf_key_t *k, char *buf, size_t size)
{
    if (!strcmp(k->name, "table.enable")) return 0; /* a tables: entry is a table */
    const char *from = k->yaml ? k->yaml : k->name + strlen("table.");
    size_t n = strlen(from);
    if (n >= size) return 0;
    for (size_t i = 0; i <= n; i++) buf[i] = !k->yaml && from[i] == '.' ? '_' : from[i];
    return 1;
}

const floe_conf_key_t *floe_table_config_find_yaml(const char *name)
{
    size_t n;
    const floe_conf_key_t *keys = floe_table_config_keys(&n);
    char y[128];
    for (size_t i = 0; i < n; i++)
        if (floe_table_config_yaml_name(&keys[i], y, sizeof y) && !strcmp(y, name)) return &keys[i];
    return NULL;
}
