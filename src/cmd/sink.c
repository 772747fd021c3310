/* `floe sink --config floe.yaml [--http HOST:PORT]`: the table engine
 * against any Kafka cluster, fed by a consumer group (table/source_kafka.h).
 * Several workers with the same group.id share the partitions and write
 * the same tables.  Serves /health, /metrics and /admin/tables, prints a
 * status line per interval on stderr, and on SIGTERM or SIGINT stops
 * reading, commits, leaves the group and exits 0. */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "cmd/registry_remote.h"
#include "cmd/sink_config.h"
#include "cmd/store.h"
#include "http/http.h"
#include "iceberg/catalog.h"
#include "table/engine.h"
#include "table/engine_http.h"
#include "table/source_kafka.h"
#include "util/clock.h"
#include "util/diag.h"
#include "storage/s3.h"
#include "util/fs.h"

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

static int resync(void *arg, floe_err_t *err)
{
    return floe_engine_resync(arg, err);
}

/* floe_sink_* metrics: the consumer's side. */
static int sink_metrics(void *arg, floe_buf_t *out)
{
    floe_ksource_stats_t st;
    floe_ksource_stats(arg, &st);
    return floe_buf_printf(out,
                           "# HELP floe_sink_records_total Records the consumer delivered.\n"
                           "# TYPE floe_sink_records_total counter\n"
                           "floe_sink_records_total %llu\n"
                           "# HELP floe_sink_bytes_total Key and value bytes the consumer "
                           "delivered.\n"
                           "# TYPE floe_sink_bytes_total counter\n"
                           "floe_sink_bytes_total %llu\n"
                           "# HELP floe_sink_assigned_partitions Partitions this worker holds.\n"
                           "# TYPE floe_sink_assigned_partitions gauge\n"
                           "floe_sink_assigned_partitions %d\n"
                           "# HELP floe_sink_lag_records Records of those partitions above "
                           "their tables' offsets.\n"
                           "# TYPE floe_sink_lag_records gauge\n"
                           "floe_sink_lag_records %lld\n"
                           "# HELP floe_sink_rebalances_total Assignments taken.\n"
                           "# TYPE floe_sink_rebalances_total counter\n"
                           "floe_sink_rebalances_total %llu\n",
                           (unsigned long long)st.records, (unsigned long long)st.bytes,
                           (int)st.assigned, (long long)st.lag,
                           (unsigned long long)st.rebalances) < 0
               ? -1
               : 0;
}

#define MIB (1024.0 * 1024.0)

/* One line on stderr: records/s since the last line, lag, partitions, and
 * the age of each table's last commit (and the size of its key index). */
static void status_line(floe_engine_t *e, floe_ksource_t *src, uint64_t *last_records,
                        int64_t *last_ms)
{
    floe_ksource_stats_t st;
    floe_ksource_stats(src, &st);
    int64_t now = floe_mono_ms();
    double secs = (double)(now - *last_ms) / 1000.0;
    double rate = secs > 0 ? (double)(st.records - *last_records) / secs : 0;
    *last_records = st.records;
    *last_ms = now;
    floe_buf_t line = FLOE_BUF_INIT, js = FLOE_BUF_INIT;
    floe_buf_printf(&line, "floe sink: %.0f records/s, lag %lld, %d partitions", rate,
                    (long long)st.lag, (int)st.assigned);
    floe_engine_status_json(e, &js);
    json_t *j = js.len ? json_loadb((const char *)js.data, js.len, 0, NULL) : NULL;
    json_t *tables = json_object_get(j, "tables");
    int64_t wall = floe_wall_ms();
    for (size_t i = 0; i < json_array_size(tables); i++) {
        json_t *t = json_array_get(tables, i);
        const char *name = json_string_value(json_object_get(t, "table"));
        json_int_t last = json_integer_value(json_object_get(t, "last_commit_ms"));
        if (!name) continue;
        if (last > 0)
            floe_buf_printf(&line, "; %s committed %.0fs ago", name,
                            (double)(wall - (int64_t)last) / 1000.0);
        else
            floe_buf_printf(&line, "; %s not committed yet", name);
        json_t *x = json_object_get(t, "key_index");
        if (x)
            floe_buf_printf(&line, ", key index %lld keys, %.1f MiB in memory, %.1f MiB on disk",
                            (long long)json_integer_value(json_object_get(x, "keys")),
                            (double)json_integer_value(json_object_get(x, "memory_bytes")) / MIB,
                            (double)json_integer_value(json_object_get(x, "disk_bytes")) / MIB);
    }
    json_decref(j);
    if (floe_buf_append_u8(&line, '\n') == 0) fwrite(line.data, 1, line.len, stderr);
    floe_buf_free(&line);
    floe_buf_free(&js);
}

int floe_cmd_sink(int argc, char **argv)
{
    const char *config = NULL, *flag_http = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: floe sink --config floe.yaml [--http HOST:PORT]\n"
                   "reads the topics of floe.yaml's tables: from its kafka: cluster as a "
                   "consumer group into Iceberg tables; prints 'floe sink ready http=...'\n");
            return 0;
        }
        const char **dst = !strcmp(argv[i], "--config") ? &config
                           : !strcmp(argv[i], "--http") ? &flag_http
                                                        : NULL;
        if (!dst) {
            fprintf(stderr,
                    "floe sink: unknown option '%s' (usage: floe sink --config floe.yaml "
                    "[--http HOST:PORT])\n",
                    argv[i]);
            return 1;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "floe sink: %s needs a value\n", argv[i]);
            return 1;
        }
        *dst = argv[++i];
    }
    if (!config) {
        fprintf(stderr, "floe sink: --config floe.yaml is required\n");
        return 1;
    }
    int rc = 1;
    floe_err_t err = {0};
    sink_config_t c;
    floe_fileio_t *io = NULL;
    floe_ice_catalog_t *cat = NULL;
    floe_ksource_t *src = NULL;
    floe_engine_t *eng = NULL;
    registry_remote_t *remote = NULL;
    floe_http_t *http = NULL;
    floe_ksource_table_t *kt = NULL;
    char hhost[256];
    int hport = 0, lock_fd = -1;
    if (sink_config_load(&c, config, &err) < 0) goto out;
    if (flag_http) snprintf(c.http, sizeof c.http, "%s", flag_http);
    if (floe_cli_split_hostport(c.http, hhost, sizeof hhost, &hport, &err) < 0) goto out;
    /* the key indexes' folder: this process's alone (the lock lives as
     * long as the process, SIGKILL included); taken before anything joins
     * the group, so that a refused sink disturbs no one */
    if (c.state_dir[0]) {
        char lock[4200], who[64];
        snprintf(who, sizeof who, "floe sink pid %ld\n", (long)getpid());
        if (floe_fs_mkdirs(c.state_dir, &err) < 0 ||
            floe_path_join(lock, sizeof lock, c.state_dir, "floe-sink.lock", &err) < 0)
            goto out;
        char holder[128];
        if (floe_fs_lock(lock, who, &lock_fd, holder, sizeof holder, &err) < 0) {
            if (err.code == FLOE_EEXIST)
                floe_err_set(&err, FLOE_EEXIST,
                             "state_dir %s is in use by %s (give each sink its own state_dir)",
                             c.state_dir, holder);
            goto out;
        }
    }
    bool rest = c.store.catalog == FLOE_STORE_REST;
    if (!rest && !floe_fileio_is_s3(c.store.warehouse) &&
        floe_fs_mkdirs(floe_fileio_local_path(c.store.warehouse), &err) < 0)
        goto out;
    char where[4200];
    if (floe_store_open_catalog(&c.store, NULL, FLOE_ICE_REST_NEED_COMMIT, &io, &cat, where,
                                sizeof where, &err) < 0)
        goto out;
    if (!(kt = calloc(c.ntables, sizeof *kt))) {
        floe_err_oom(&err);
        goto out;
    }
    for (size_t i = 0; i < c.ntables; i++)
        kt[i] = (floe_ksource_table_t){.topic = c.tables[i].topic,
                                       .regex = c.tables[i].regex,
                                       .nconfigs = c.tables[i].n,
                                       .keys = (const char *const *)c.tables[i].keys,
                                       .values = (const char *const *)c.tables[i].values};
    floe_ksource_config_t kc = {.nprops = c.nprops,
                                .prop_keys = (const char *const *)c.prop_keys,
                                .prop_values = (const char *const *)c.prop_values,
                                .ntables = c.ntables,
                                .tables = kt};
    if (!(src = floe_ksource_new(&kc, &err))) goto out;
    floe_engine_config_t ec = {
        .catalog = cat, .shared = true, .state_dir = c.state_dir[0] ? c.state_dir : NULL};
    if (c.registry_url[0]) { /* avro and protobuf values: writer schemas from that registry */
        if (registry_remote_new(c.registry_url, c.registry_user_info, &remote, &err)) goto out;
        ec.schemas = registry_remote_schemas(remote);
    }
    if (!(eng = floe_engine_new(&ec, floe_ksource_source(src), &err))) goto out;
    floe_ksource_set_resync(src, resync, eng);
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    if (floe_http_new(&http, &err) ||
        floe_http_metrics_add(http, floe_http_process_metrics, NULL) ||
        floe_http_metrics_add(http, sink_metrics, src) || floe_engine_http(eng, http, &err)) {
        if (!err.code) floe_err_oom(&err);
        goto out;
    }
    if (floe_http_start(http, hhost, hport, &err)) goto out;
    if (floe_engine_start(eng, &err) < 0) goto out;
    if (floe_ksource_start(src, &err) < 0) goto out;
    const char *group = "";
    for (size_t i = 0; i < c.nprops; i++)
        if (!strcmp(c.prop_keys[i], "group.id")) group = c.prop_values[i];
    printf("floe sink ready http=%s:%d group=%s warehouse=%s\n", hhost, floe_http_port(http), group,
           where);
    fflush(stdout);
    FLOE_INFO("sink: group %s, http on %s:%d, %s %s", group, hhost, floe_http_port(http),
              rest ? "REST catalog" : "warehouse", where);
    uint64_t last_records = 0;
    int64_t last_ms = floe_mono_ms(), next_status = last_ms + c.status_ms;
    while (!g_stop) {
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
        if (c.status_ms > 0 && floe_mono_ms() >= next_status) {
            status_line(eng, src, &last_records, &last_ms);
            next_status = floe_mono_ms() + c.status_ms;
        }
    }
    FLOE_INFO("sink: shutting down: leaving the group after a last commit");
    rc = 0;
out:
    /* the consumer first: its revocation has the engine commit what it
     * read, then the engine stops (a last commit of anything left) */
    floe_ksource_close(src);
    floe_engine_stop(eng);
    if (http) floe_http_free(http);
    floe_engine_free(eng);
    registry_remote_free(remote);
    floe_ksource_free(src);
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
    free(kt);
    sink_config_clear(&c);
    if (lock_fd >= 0) close(lock_fd); /* after the engine's last save */
    if (!rc) FLOE_INFO("sink: stopped cleanly");
    if (rc && err.code) fprintf(stderr, "floe sink: %s\n", err.msg); /* the last line */
    return rc;
}
