/* `floe config --markdown`: the configuration reference, made from the
 * key tables of the server (cmd/serve.c), the consumer-group coordinator
 * (kafka/h_group.c) and table topics (table/config.c).  README.md
 * holds its output between `<!-- config:begin -->` and
 * `<!-- config:end -->`; `make config-check` fails when that copy is stale
 * and `make gen` rewrites it. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/store.h"
#include "http/rest.h"
#include "kafka/groups_module.h"
#include "table/config.h"
#include "util/buf.h"

/* One section per scope: its heading and prose, its keys, more prose. */
static const struct scope {
    const char *intro;
    const floe_conf_key_t *(*keys)(size_t *n);
    bool live; /* a live column: only running tables take changes */
    const char *outro;
} SCOPES[] = {
    {"### Server\n\n"
     "`floe serve --config FILE` reads `key = value` lines (`#` starts a comment); "
     "`--listen`, `--http` and `--data-dir` override the file. A key the server does not "
     "know, or a bad value, stops the start with the file, line and key. Sizes take `B`, "
     "`KB`, `MB`, `GB`, `TB`, `KiB`, `MiB`, `GiB`, `TiB`; durations `us`, `ms`, `s`, `m` or "
     "`min`, `h`, `d` (no unit: milliseconds).\n\n",
     floe_serve_config_keys, false,
     "\nThe file also sets server-wide defaults of topic configs: `log.KEY = VALUE` for a "
     "Kafka topic config (`log.retention.ms`, `log.segment.bytes`, ...) and `table.KEY = "
     "VALUE` for the table topic keys below, checked as a topic's would be.\n\n"},
    {"### Object storage\n\n"
     "Server config keys (and `floe table --config FILE` keys) saying where tables live. "
     "The names are Iceberg's own FileIO properties, so an engine's catalog config takes the "
     "same lines. Tables on an object store use the filesystem (Hadoop-layout) catalog "
     "through conditional PUTs (`If-None-Match: *`); a REST catalog is the recommended way "
     "on object stores. A store that cannot be reached, refuses the credentials or has no "
     "such bucket pauses the tables with its error.\n\n",
     floe_store_config_keys, false, "\n"},
    {"### Catalog\n\n"
     "Server config keys (and `floe table --config FILE` keys; in `floe sink`'s YAML the same "
     "under `catalog:` without the `catalog.` prefix) saying where tables are found and "
     "committed. The names are Iceberg's catalog properties.\n\n",
     floe_store_catalog_keys, false, "\n"},
    {"### REST catalog\n\n"
     "Server config keys of the Iceberg REST catalog served under `/v1/` on the HTTP "
     "listener.\n\n",
     floe_rest_config_keys, false, "\n"},
    {"### Consumer groups\n\n"
     "Server config keys of the group coordinator, in the same file.\n\n",
     floe_groups_config_keys, false, "\n"},
    {"### Table topics\n\n"
     "Topic configs, set at CreateTopics or AlterConfigs (`floe topic create NAME --config "
     "table.enable=true`) or as server defaults. CreateTopics, AlterConfigs and "
     "IncrementalAlterConfigs refuse an unknown `table.*` key or a bad value with "
     "`INVALID_CONFIG` and a message naming the key. A live key takes effect in a running "
     "table within a second; changing any other rebuilds the table's pipeline. A table whose "
     "configs are bad anyway (set before they were checked) stays paused with the reason in "
     "`GET /admin/tables`.\n\n",
     floe_table_config_keys, true, ""},
};

/* `floe sink`'s YAML: its sections, and the name of every table key in a
 * tables: entry (from the same key table). */
static int sink_yaml(floe_buf_t *out)
{
    int rc = floe_buf_append_str(
        out,
        "### floe sink\n\n"
        "`floe sink --config floe.yaml [--http HOST:PORT]` reads YAML: `kafka:` (librdkafka "
        "consumer properties, passed through; `group.id` required; `enable.auto.commit` is "
        "always off, `isolation.level` defaults to `read_committed`, `auto.offset.reset` to "
        "`earliest`), `catalog:` (`type: filesystem` with `warehouse: DIR`, or `type: rest` "
        "with `uri:` an Iceberg REST catalog's base URL, `warehouse:` a name sent to its "
        "`/v1/config` (optional), and the other catalog keys above without their `catalog.` "
        "prefix: `credential:`, `token:`, `oauth2-server-uri:`, `rest.sigv4-enabled:`, ...; "
        "`s3.*` keys there configure the FileIO), `http:` (HOST:PORT, "
        "default `127.0.0.1:8182`), `status_interval:` (a duration, default `10s`; `0` for "
        "none), `schema.registry.url:` and `schema.registry.basic.auth.user.info:` (an "
        "external schema registry for `value_converter: avro`, `protobuf` or `json_schema`, as "
        "in the server "
        "config) and "
        "`tables:`, a list of entries with `topic:` or `topics_regex:` (a POSIX "
        "extended regex over whole topic names), `table:` (`NS.NAME` or `NAME`; with a regex "
        "each topic's table is named after it), `write_mode: append`, `transforms: []`, "
        "`table_format: iceberg-v2` and the table topic keys by these names. An unknown key or "
        "a bad value stops the start with the file, line and key.\n\n"
        "| YAML name | table topic key |\n| --- | --- |\n");
    size_t n;
    const floe_conf_key_t *k = floe_table_config_keys(&n);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char y[128];
        if (floe_table_config_yaml_name(&k[i], y, sizeof y))
            rc = floe_buf_printf(out, "| `%s` | `%s` |\n", y, k[i].name);
    }
    return rc;
}

static int reference(floe_buf_t *out)
{
    int rc = 0;
    for (size_t i = 0; i < sizeof SCOPES / sizeof SCOPES[0]; i++) {
        size_t n;
        const floe_conf_key_t *k = SCOPES[i].keys(&n);
        rc |= floe_buf_append_str(out, SCOPES[i].intro);
        rc |= floe_conf_markdown(k, n, SCOPES[i].live, out);
        rc |= floe_buf_append_str(out, SCOPES[i].outro);
    }
    rc |= floe_buf_append_str(out, "\n");
    rc |= sink_yaml(out);
    return rc ? -1 : 0;
}

int floe_cmd_config(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[2], "--markdown")) {
        fprintf(stderr, "usage: floe config --markdown  (the configuration reference)\n");
        return argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")) ? 0 : 1;
    }
    floe_buf_t out = FLOE_BUF_INIT;
    if (reference(&out) < 0) {
        fprintf(stderr, "floe config: out of memory\n");
        floe_buf_free(&out);
        return 1;
    }
    fwrite(out.data, 1, out.len, stdout);
    floe_buf_free(&out);
    return fflush(stdout) ? 1 : 0;
}
