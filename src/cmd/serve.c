/* `floe serve`: the broker.  Opens the data dir, listens for Kafka clients
 * and HTTP, prints the ready line, runs until SIGTERM/SIGINT, then drains
 * and shuts down cleanly.
 *
 * Config file (--config): `key = value` lines, `#` comments.  The keys are
 * declared once: the server's below (KEYS), the group coordinator's in
 * kafka/h_group.c, the table topics' defaults (`table.*`) in
 * table/config.c; `log.<topic config>` sets the server-wide default of a
 * Kafka topic config.  `floe config --markdown` prints them all.  Flags
 * override the file and are checked the same way.  A bad line stops the
 * start with one error naming the file, line and key. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "cmd/registry_remote.h"
#include "cmd/serve_registry.h"
#include "cmd/serve_tables.h"
#include "cmd/store.h"
#include "http/http.h"
#include "http/rest.h"
#include "kafka/broker.h"
#include "kafka/groups_module.h"
#include "kafka/server.h"
#include "net/loop.h"
#include "storage/s3.h"
#include "table/config.h"
#include "table/engine_http.h"
#include "util/conf.h"
#include "util/diag.h"
#include "util/parse.h"

#define MAX_KV 256

typedef struct serve_cfg {
    char listen[300], http[300], data_dir[4096], adv_host[256], cluster_id[256];
    char registry_url[2048], registry_user_info[512];
    int64_t node_id, adv_port, max_request, max_conns, partitions, flush_check_ms,
        retention_check_ms, max_open_files, cleaner_backoff_ms;
    bool auto_create, acks_all_fsync, cleaner_enable;
    floe_store_cfg_t store;     /* warehouse, s3.* */
    floe_rest_cfg_t rest;       /* rest.* */
    floe_kv_t defaults[MAX_KV]; /* log.* (as topic config names) and table.* */
    int ndefaults;
    char *owned[2 * MAX_KV];
    int nowned;
} serve_cfg_t;

static int check_hostport(const char *v, floe_err_t *err)
{
    char host[300];
    int port;
    return floe_cli_split_hostport(v, host, sizeof host, &port, err);
}

#define F(f) FLOE_CONF_FIELD(serve_cfg_t, f)

static const floe_conf_key_t KEYS[] = {
    {.name = "listen",
     .type = FLOE_CONF_STRING,
     .def = "127.0.0.1:9092",
     F(listen),
     .check = check_hostport,
     .doc = "Kafka listener, HOST:PORT (port 0 picks a free one); `--listen`."},
    {.name = "http",
     .type = FLOE_CONF_STRING,
     .def = "127.0.0.1:8181",
     F(http),
     .check = check_hostport,
     .doc = "HTTP listener (`/health`, `/metrics`, `/admin/tables`), HOST:PORT; `--http`."},
    {.name = "data.dir",
     .type = FLOE_CONF_STRING,
     .def = "./floe-data",
     F(data_dir),
     .doc = "Data directory: partition logs, topic metadata, the warehouse; `--data-dir`."},
    {.name = "advertised.host",
     .type = FLOE_CONF_STRING,
     .def_doc = "the listen host (127.0.0.1 for 0.0.0.0 or ::)",
     F(adv_host),
     .doc = "Host that Metadata and FindCoordinator tell clients to connect to."},
    {.name = "advertised.port",
     .type = FLOE_CONF_INT,
     .min = 1,
     .max = 65535,
     .def_doc = "the bound port",
     F(adv_port),
     .doc = "Port told to clients with the advertised host."},
    {.name = "node.id",
     .type = FLOE_CONF_INT,
     .min = 1,
     .max = 1 << 30,
     .def = "1",
     F(node_id),
     .doc = "Broker id in Metadata."},
    {.name = "cluster.id",
     .type = FLOE_CONF_STRING,
     .def = "floe",
     F(cluster_id),
     .doc = "Cluster id in Metadata and DescribeCluster."},
    {.name = "max.request.bytes",
     .type = FLOE_CONF_SIZE,
     .min = 1024,
     .max = 1 << 30,
     .def = "100MiB",
     F(max_request),
     .doc = "Largest request frame accepted; a larger one closes the connection."},
    {.name = "max.connections",
     .type = FLOE_CONF_INT,
     .min = 1,
     .max = 1000000,
     .def = "10000",
     F(max_conns),
     .doc = "Open client connections at most; more are refused."},
    {.name = "auto.create.topics.enable",
     .type = FLOE_CONF_BOOL,
     .def = "true",
     F(auto_create),
     .doc = "Metadata or Produce for an unknown topic creates it."},
    {.name = "num.partitions",
     .type = FLOE_CONF_INT,
     .min = 1,
     .max = 10000,
     .def = "1",
     F(partitions),
     .doc = "Partitions of a topic created without a count."},
    {.name = "acks.all.fsync",
     .type = FLOE_CONF_BOOL,
     .def = "true",
     F(acks_all_fsync),
     .doc = "acks=all is answered after fsync; acks=1 after the write."},
    {.name = "flush.check.interval.ms",
     .type = FLOE_CONF_DURATION,
     .min = 1,
     .max = 3600000,
     .def = "1000",
     F(flush_check_ms),
     .doc = "How often logs whose `flush.ms` or `flush.messages` came due are fsynced."},
    {.name = "log.retention.check.interval.ms",
     .type = FLOE_CONF_DURATION,
     .min = 1,
     .max = 86400000,
     .def = "300000",
     F(retention_check_ms),
     .doc = "How often retention (`retention.ms`, `retention.bytes`) runs, as in Kafka."},
    {.name = "log.cleaner.enable",
     .type = FLOE_CONF_BOOL,
     .def = "true",
     F(cleaner_enable),
     .doc = "Run the log cleaner, which compacts topics with `cleanup.policy` `compact`."},
    {.name = "log.cleaner.backoff.ms",
     .type = FLOE_CONF_DURATION,
     .min = 1,
     .max = 86400000,
     .def = "15000",
     F(cleaner_backoff_ms),
     .doc = "How often the log cleaner looks for compacted partitions whose dirty ratio "
            "reached `min.cleanable.dirty.ratio`, as in Kafka."},
    {.name = "log.max.open.files",
     .type = FLOE_CONF_INT,
     .min = 16,
     .max = 1 << 24,
     .def_doc = "half the open-file limit",
     F(max_open_files),
     .doc = "Partition log segments open at once, all partitions together; the least recently "
            "used beyond it are closed and opened again when read. The open-file limit "
            "(RLIMIT_NOFILE) is raised to its hard limit at start."},
    {.name = "schema.registry.url",
     .type = FLOE_CONF_STRING,
     .def_doc = "none: floe's own registry",
     F(registry_url),
     .doc = "An external schema registry speaking the Confluent API (http:// or https://, "
            "Confluent, Karapace, Apicurio's compatibility API): the avro, protobuf and "
            "json_schema converters fetch schemas by id from it (each id once, with the "
            "schemas its references name, by subject and version: Avro named types, Protobuf "
            "imports, JSON Schema documents a `$ref` names; Protobuf schemas asked for with "
            "`?format=serialized`, a base64 descriptor or .proto text taken) and floe serves no "
            "registry of its own (`/subjects`, `/schemas` answer 404)."},
    {.name = "schema.registry.basic.auth.user.info",
     .type = FLOE_CONF_STRING,
     .def_doc = "none",
     F(registry_user_info),
     .doc = "`user:password` for HTTP basic auth to `schema.registry.url`, as Confluent's "
            "clients name it."},
};
#define NKEYS (sizeof KEYS / sizeof KEYS[0])

#undef F

const floe_conf_key_t *floe_serve_config_keys(size_t *n)
{
    *n = NKEYS;
    return KEYS;
}

static floe_loop_t *g_loop;
static volatile sig_atomic_t g_stopping;

static void on_signal(int sig)
{
    (void)sig;
    g_stopping = 1;
    if (g_loop) floe_loop_stop(g_loop);
}

/* The ready line, printed from inside the running loop: floe_loop_run
 * begins by clearing its stop flag, so a SIGTERM sent on seeing a line
 * printed before the loop ran could be lost, and the server run on. */
static void announce(void *line)
{
    fputs(line, stdout);
    fflush(stdout);
    if (g_stopping) floe_loop_stop(g_loop);
}

static char *keep(serve_cfg_t *c, const char *s)
{
    char *d = strdup(s);
    if (d && c->nowned < 2 * MAX_KV) c->owned[c->nowned++] = d;
    return d;
}

static const char *default_get(void *ctx, const char *key)
{
    const serve_cfg_t *c = ctx;
    for (int i = c->ndefaults; i-- > 0;)
        if (!strcmp(c->defaults[i].key, key)) return c->defaults[i].value;
    return NULL;
}

/* The table.* defaults as one set, as a topic's are checked at create. */
static int check_table_defaults(const serve_cfg_t *c, floe_err_t *err)
{
    const char *keys[MAX_KV], *values[MAX_KV];
    size_t n = 0;
    for (int i = 0; i < c->ndefaults; i++)
        if (!strncmp(c->defaults[i].key, "table.", 6)) {
            keys[n] = c->defaults[i].key;
            values[n++] = c->defaults[i].value;
        }
    return floe_table_config_check(NULL, keys, values, n, NULL, NULL, err);
}

/* The broker's check of a topic's configs: the table.* ones, over the
 * server's table.* defaults. */
static int check_topic_configs(void *arg, const char *topic, const char *const *keys,
                               const char *const *values, size_t n, floe_err_t *err)
{
    return floe_table_config_check(topic, keys, values, n, default_get, arg, err);
}

/* The broker's retention floor of a partition: its table's committed
 * offset, once the tables run (arg: the serve_tables_t pointer, NULL
 * before; table topics then keep everything). */
static int retention_floor(void *arg, floe_topic_t *t, int32_t partition,
                           floe_retention_floor_t *out)
{
    serve_tables_t *const *tables = arg;
    return serve_tables_retention_floor(*tables, t, partition, out);
}

/* A broker keeps a descriptor per open segment, socket and data file:
 * the soft open-file limit goes up to the hard one (Kafka asks for the
 * same of its operators), and the logs' descriptor cache takes its share
 * of it (log.max.open.files). */
static void raise_open_files(int64_t max_open_files)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != rl.rlim_max) {
        struct rlimit want = rl;
        want.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &want) != 0 && rl.rlim_max == RLIM_INFINITY) {
            FILE *f = fopen("/proc/sys/fs/nr_open", "r"); /* the kernel's ceiling */
            unsigned long long nr = 0;
            if (f && fscanf(f, "%llu", &nr) == 1 && nr > rl.rlim_cur) {
                want.rlim_cur = (rlim_t)nr;
                setrlimit(RLIMIT_NOFILE, &want);
            }
            if (f) fclose(f);
        }
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    floe_log_set_max_open_files((size_t)max_open_files);
    FLOE_INFO(
        "serve: open-file limit %llu (hard %llu); partition logs keep up to %zu segments open",
        (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max,
        floe_log_max_open_files());
}

static int set_key(serve_cfg_t *c, const char *k, const char *v, floe_err_t *err)
{
    const floe_conf_key_t *key = floe_conf_find(KEYS, NKEYS, k);
    if (key) return floe_conf_set(key, c, v, err);
    int st = floe_store_config_set(&c->store, k, v, err);
    if (st <= 0) return st;
    size_t ns;
    const floe_conf_key_t *rk = floe_rest_config_keys(&ns);
    if ((key = floe_conf_find(rk, ns, k))) return floe_conf_set(key, &c->rest, v, err);
    if (!strncmp(k, "log.", 4) || !strncmp(k, "table.", 6)) {
        if (c->ndefaults == MAX_KV)
            return floe_err_set(err, FLOE_EINVAL, "too many topic defaults");
        c->defaults[c->ndefaults].key = keep(c, !strncmp(k, "log.", 4) ? k + 4 : k);
        c->defaults[c->ndefaults].value = keep(c, v);
        if (!c->defaults[c->ndefaults].key || !c->defaults[c->ndefaults].value)
            return floe_err_oom(err);
        c->ndefaults++;
        /* the table.* defaults so far, together: the line that breaks
         * them is the one named */
        return strncmp(k, "table.", 6) ? 0 : check_table_defaults(c, err);
    }
    int g = floe_groups_config_set(k, v, err);
    if (g <= 0) return g;
    size_t ng;
    const floe_conf_key_t *gk = floe_groups_config_keys(&ng);
    floe_conf_unknown(KEYS, NKEYS, k, "server", err);
    return err && strstr(err->msg, "did you mean") ? -1
                                                   : floe_conf_unknown(gk, ng, k, "server", err);
}

static int set_key_cb(void *c, const char *k, const char *v, floe_err_t *err)
{
    return set_key(c, k, v, err);
}

static int load_file(serve_cfg_t *c, const char *path, floe_err_t *err)
{
    if (floe_conf_read_file(path, set_key_cb, c, err) < 0) return -1;
    if (floe_groups_config_check(err) < 0) {
        floe_err_wrap(err, "%s", path);
        return -1;
    }
    return 0;
}

/* "host:port" -> parts; "[v6]:port" too. */

/* Memory policy.  glibc hands freed memory back to the kernel eagerly (a
 * freed large block is unmapped, a free heap top above 128 KiB trimmed),
 * so every produce frame, fetch response and output buffer of a busy
 * broker lands on fresh pages: a page fault per 4 KiB, which costs more
 * than copying the bytes (measured: a 2 MB fetch response spent ~15 ms in
 * faults).  So the heap keeps its pages while traffic flows, and they are
 * given back, with the pool of frame buffers, once the broker has been
 * quiet for a tick. */
#define MEM_TICK_MS 2000
typedef struct mem_policy {
    floe_loop_t *loop;
    floe_kafka_srv_t *srv;
    uint64_t traffic;
    bool trimmed;
} mem_policy_t;

static void mem_tick(void *arg)
{
    mem_policy_t *m = arg;
    uint64_t t = floe_kafka_srv_traffic(m->srv);
    if (t != m->traffic) {
        m->traffic = t;
        m->trimmed = false;
    } else if (!m->trimmed) {
        floe_kafka_srv_release_memory(m->srv);
        malloc_trim(0);
        m->trimmed = true;
    }
    floe_loop_timer(m->loop, MEM_TICK_MS, mem_tick, m);
}

/* m must live until the loop stops. */
static void mem_policy(mem_policy_t *m, floe_loop_t *loop, floe_kafka_srv_t *srv)
{
    mallopt(M_MMAP_THRESHOLD, 64 << 20); /* also stops the threshold's own growth */
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    *m = (mem_policy_t){loop, srv, floe_kafka_srv_traffic(srv), false};
    floe_loop_timer(loop, MEM_TICK_MS, mem_tick, m);
}

/* The REST catalog's rest.* keys, and what an engine reading the tables
 * on S3 needs: endpoint, region, path style (AWS_* as the FileIO falls
 * back to them) and, vended only with rest.vend.credentials, the keys. */
static int rest_configure(floe_rest_t *rest, const serve_cfg_t *c, floe_err_t *err)
{
    const floe_store_cfg_t *s = &c->store;
    floe_ice_props_t io = {0}, sec = {0};
    int rc = 0;
    if (floe_fileio_is_s3(s->warehouse)) {
        const char *region = s->region[0] ? s->region : getenv("AWS_REGION");
        const char *akid = s->akid[0] ? s->akid : getenv("AWS_ACCESS_KEY_ID");
        const char *secret = s->secret[0] ? s->secret : getenv("AWS_SECRET_ACCESS_KEY");
        const char *token = s->token[0] ? s->token : getenv("AWS_SESSION_TOKEN");
        if (s->endpoint[0]) rc |= floe_ice_props_set(&io, "s3.endpoint", s->endpoint);
        if (region && *region) rc |= floe_ice_props_set(&io, "s3.region", region);
        rc |= floe_ice_props_set(&io, "s3.path-style-access", s->path_style ? "true" : "false");
        if (akid && *akid && secret && *secret) {
            rc |= floe_ice_props_set(&sec, "s3.access-key-id", akid);
            rc |= floe_ice_props_set(&sec, "s3.secret-access-key", secret);
            if (token && *token) rc |= floe_ice_props_set(&sec, "s3.session-token", token);
        }
    }
    rc = rc ? floe_err_oom(err) : floe_rest_configure(rest, &c->rest, &io, &sec, err);
    floe_ice_props_clear(&io);
    floe_ice_props_clear(&sec);
    return rc;
}

/* The S3 FileIO's requests, bytes, retries and latencies on /metrics. */
static int s3_metrics(void *io, floe_buf_t *out)
{
    return floe_fileio_s3_metrics(io, out);
}

int floe_cmd_serve(int argc, char **argv)
{
    serve_cfg_t c = {0};
    floe_err_t err;
    floe_err_clear(&err);
    int rc = 1;
    size_t nrk;
    const floe_conf_key_t *rk = floe_rest_config_keys(&nrk);
    if (floe_conf_defaults(KEYS, NKEYS, &c, &err) < 0 ||
        floe_store_config_defaults(&c.store, &err) < 0 ||
        floe_conf_defaults(rk, nrk, &c.rest, &err) < 0) {
        fprintf(stderr, "floe serve: %s\n", err.msg);
        return 1;
    }
    const char *flag_listen = NULL, *flag_http = NULL, *flag_data = NULL, *config = NULL;
    for (int i = 2; i < argc; i++) {
        const char **dst = NULL;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf(
                "usage: floe serve [--config FILE] [--data-dir DIR] [--listen HOST:PORT] "
                "[--http HOST:PORT]\n"
                "defaults: --data-dir ./floe-data --listen 127.0.0.1:9092 --http 127.0.0.1:8181\n"
                "port 0 picks a free port; prints 'floe ready kafka=... http=... data=...'\n");
            return 0;
        }
        if (!strcmp(argv[i], "--config")) dst = &config;
        else if (!strcmp(argv[i], "--listen"))
            dst = &flag_listen;
        else if (!strcmp(argv[i], "--http"))
            dst = &flag_http;
        else if (!strcmp(argv[i], "--data-dir"))
            dst = &flag_data;
        else {
            fprintf(stderr,
                    "floe serve: unknown option '%s' (usage: floe serve [--config FILE] "
                    "[--data-dir DIR] [--listen HOST:PORT] [--http HOST:PORT])\n",
                    argv[i]);
            return 1;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "floe serve: %s needs a value\n", argv[i]);
            return 1;
        }
        *dst = argv[++i];
    }
    floe_loop_t *loop = NULL;
    floe_broker_t *broker = NULL;
    floe_kafka_srv_t *srv = NULL;
    floe_http_t *http = NULL;
    floe_rest_t *rest = NULL;
    serve_tables_t *tables = NULL;
    serve_registry_t *registry = NULL;
    registry_remote_t *remote = NULL;
    mem_policy_t mem;
    char khost[256], hhost[256];
    int kport, hport;
    if (config && load_file(&c, config, &err)) goto out;
    if ((flag_listen && set_key(&c, "listen", flag_listen, &err)) ||
        (flag_http && set_key(&c, "http", flag_http, &err)) ||
        (flag_data && set_key(&c, "data.dir", flag_data, &err)))
        goto out;
    if (floe_cli_split_hostport(c.listen, khost, sizeof khost, &kport, &err) ||
        floe_cli_split_hostport(c.http, hhost, sizeof hhost, &hport, &err))
        goto out;

    signal(SIGPIPE, SIG_IGN);
    raise_open_files(c.max_open_files);
    if (floe_loop_new(&loop, &err)) goto out;
    floe_broker_config_t bc = {
        .data_dir = c.data_dir,
        .auto_create_topics = c.auto_create,
        .default_partitions = (int32_t)c.partitions,
        .acks_all_fsync = c.acks_all_fsync,
        .flush_interval_ms = c.flush_check_ms,
        .retention_check_ms = c.retention_check_ms,
        .cleaner_disable = !c.cleaner_enable,
        .cleaner_backoff_ms = c.cleaner_backoff_ms,
        .topic_defaults = c.defaults,
        .ntopic_defaults = c.ndefaults,
        .check_configs = check_topic_configs,
        .check_arg = &c,
        .retention_floor = retention_floor,
        .floor_arg = &tables,
    };
    if (floe_broker_open(&bc, &broker, &err)) goto out;
    floe_broker_attach_loop(broker, loop);
    floe_kafka_srv_config_t kc = {
        .host = khost,
        .port = kport,
        .advertised_host = c.adv_host[0] ? c.adv_host : NULL,
        .advertised_port = (int)c.adv_port,
        .node_id = (int32_t)c.node_id,
        .cluster_id = c.cluster_id[0] ? c.cluster_id : NULL,
        .max_request_bytes = (size_t)c.max_request,
        .max_connections = (int)c.max_conns,
    };
    if (floe_kafka_srv_new(loop, &kc, broker, &srv, &err)) goto out;
    if (floe_kafka_srv_add_modules(srv, floe_kafka_modules, &err)) goto out;
    floe_conv_schemas_t schemas;
    if (c.registry_url[0]) { /* an external registry: none of our own */
        if (registry_remote_new(c.registry_url, c.registry_user_info, &remote, &err)) goto out;
        schemas = registry_remote_schemas(remote);
    } else {
        if (serve_registry_start(broker, &registry, &err)) goto out;
        schemas = serve_registry_schemas(registry);
    }
    if (serve_tables_start(broker, c.data_dir, &c.store, c.defaults, c.ndefaults, &schemas, &tables,
                           &err))
        goto out;
    if (floe_http_new(&http, &err) || floe_kafka_srv_http(srv, http, &err) ||
        floe_http_metrics_add(http, floe_http_process_metrics, NULL) ||
        floe_engine_http(serve_tables_engine(tables), http, &err) ||
        (c.store.catalog != FLOE_STORE_REST &&
         (floe_rest_http(http, serve_tables_catalog(tables), &rest, &err) ||
          rest_configure(rest, &c, &err))) ||
        (registry && floe_registry_http(serve_registry(registry), http, &err)) ||
        (floe_fileio_is_s3(c.store.warehouse) &&
         floe_http_metrics_add(http, s3_metrics, serve_tables_io(tables)))) {
        if (!err.code) floe_err_oom(&err);
        goto out;
    }
    if (floe_http_start(http, hhost, hport, &err)) goto out;

    mem_policy(&mem, loop, srv);
    g_loop = loop;
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    char ready[4800];
    snprintf(ready, sizeof ready, "floe ready kafka=%s:%d http=%s:%d data=%s\n",
             floe_kafka_srv_host(srv), floe_kafka_srv_bound_port(srv), hhost, floe_http_port(http),
             c.data_dir);
    if (floe_loop_post(loop, announce, ready) < 0) {
        floe_err_oom(&err);
        goto out;
    }
    /* floe serves its own tables' REST catalog, or commits them to
     * another one and serves none */
    if (rest)
        FLOE_INFO("serve: kafka on %s:%d, http on %s:%d (Iceberg REST catalog at "
                  "http://%s:%d/v1/), data in %s",
                  khost, floe_kafka_srv_bound_port(srv), hhost, floe_http_port(http), hhost,
                  floe_http_port(http), c.data_dir);
    else
        FLOE_INFO("serve: kafka on %s:%d, http on %s:%d, data in %s; tables committed to the "
                  "REST catalog at %s",
                  khost, floe_kafka_srv_bound_port(srv), hhost, floe_http_port(http), c.data_dir,
                  c.store.cat_uri);
    if (floe_loop_run(loop, &err)) goto out;
    FLOE_INFO("serve: shutting down");
    rc = 0;
out:
    if (rc && err.code) fprintf(stderr, "floe serve: %s\n", err.msg);
    if (http) floe_http_free(http);
    floe_rest_free(rest);
    if (srv) floe_kafka_srv_shutdown(srv, 2000);
    /* the engine's last commit reads the logs: before the broker closes them */
    serve_tables_stop(tables);
    tables = NULL;
    /* after the engine (its converters read schemas) and the HTTP server */
    serve_registry_stop(registry);
    registry_remote_free(remote);
    if (srv) floe_kafka_srv_free(srv);
    floe_broker_close(broker);
    g_loop = NULL;
    floe_loop_free(loop);
    for (int i = 0; i < c.nowned; i++) free(c.owned[i]);
    if (!rc) FLOE_INFO("serve: stopped cleanly");
    return rc;
}
