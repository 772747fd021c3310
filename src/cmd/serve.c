/* `floe serve`: the broker.  Opens the data dir, listens for Kafka clients
 * and HTTP, prints the ready line, runs until SIGTERM/SIGINT, then drains
 * and shuts down cleanly.
 *
 * Config file (--config): `key = value` lines, `#` comments.  Keys:
 *   listen, http, data.dir, advertised.host, advertised.port, node.id, cluster.id,
 *   max.request.bytes, max.connections, auto.create.topics.enable,
 *   num.partitions, acks.all.fsync, flush.check.interval.ms,
 *   log.retention.check.interval.ms (default 300000, as Kafka),
 *   log.<topic config> (server-wide default of a topic config, e.g.
 *   log.retention.ms or log.segment.bytes), and table.* (defaults of table
 *   topic configs), and the group coordinator's group.initial.rebalance.delay.ms,
 *   group.min.session.timeout.ms, group.max.session.timeout.ms,
 *   group.max.size, offset.metadata.max.bytes, offsets.retention.minutes,
 *   offsets.retention.check.interval.ms.  Flags override the file. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/serve_tables.h"
#include "http/http.h"
#include "kafka/broker.h"
#include "kafka/groups_module.h"
#include "kafka/server.h"
#include "net/loop.h"
#include "table/engine_http.h"
#include "util/diag.h"
#include "util/parse.h"

#define MAX_KV 256

typedef struct serve_cfg {
    char *listen, *http, *data_dir, *adv_host, *cluster_id;
    int64_t node_id, adv_port, max_request, max_conns, partitions, flush_check_ms,
        retention_check_ms;
    bool auto_create, acks_all_fsync;
    floe_kv_t defaults[MAX_KV];
    int ndefaults;
    char *owned[2 * MAX_KV];
    int nowned;
} serve_cfg_t;

static floe_loop_t *g_loop;

static void on_signal(int sig)
{
    (void)sig;
    if (g_loop) floe_loop_stop(g_loop);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) *--e = 0;
    return s;
}

static char *keep(serve_cfg_t *c, const char *s)
{
    char *d = strdup(s);
    if (d && c->nowned < 2 * MAX_KV) c->owned[c->nowned++] = d;
    return d;
}

static int set_key(serve_cfg_t *c, const char *k, const char *v, floe_err_t *err)
{
    uint64_t sz;
    if (!strcmp(k, "listen")) c->listen = keep(c, v);
    else if (!strcmp(k, "http"))
        c->http = keep(c, v);
    else if (!strcmp(k, "data.dir"))
        c->data_dir = keep(c, v);
    else if (!strcmp(k, "advertised.host"))
        c->adv_host = keep(c, v);
    else if (!strcmp(k, "cluster.id"))
        c->cluster_id = keep(c, v);
    else if (!strcmp(k, "advertised.port"))
        return floe_parse_int64(v, 1, 65535, &c->adv_port, err);
    else if (!strcmp(k, "node.id"))
        return floe_parse_int64(v, 1, 1 << 30, &c->node_id, err);
    else if (!strcmp(k, "max.request.bytes")) {
        if (floe_parse_size(v, &sz, err)) return -1;
        if (sz < 1024 || sz > (1u << 30))
            return floe_err_set(err, FLOE_ERANGE, "max.request.bytes must be in 1KiB..1GiB");
        c->max_request = (int64_t)sz;
    } else if (!strcmp(k, "max.connections"))
        return floe_parse_int64(v, 1, 1000000, &c->max_conns, err);
    else if (!strcmp(k, "num.partitions"))
        return floe_parse_int64(v, 1, 10000, &c->partitions, err);
    else if (!strcmp(k, "flush.check.interval.ms"))
        return floe_parse_duration_ms(v, &c->flush_check_ms, err);
    else if (!strcmp(k, "log.retention.check.interval.ms"))
        return floe_parse_duration_ms(v, &c->retention_check_ms, err);
    else if (!strcmp(k, "auto.create.topics.enable"))
        return floe_parse_bool(v, &c->auto_create, err);
    else if (!strcmp(k, "acks.all.fsync"))
        return floe_parse_bool(v, &c->acks_all_fsync, err);
    else if (!strncmp(k, "log.", 4) || !strncmp(k, "table.", 6)) {
        if (c->ndefaults == MAX_KV)
            return floe_err_set(err, FLOE_EINVAL, "too many topic defaults");
        c->defaults[c->ndefaults].key = keep(c, !strncmp(k, "log.", 4) ? k + 4 : k);
        c->defaults[c->ndefaults].value = keep(c, v);
        c->ndefaults++;
    } else {
        int g = floe_groups_config_set(k, v, err); /* group.*, offset.metadata.max.bytes */
        if (g <= 0) return g;
        return floe_err_set(err, FLOE_EINVAL, "unknown setting '%s'", k);
    }
    return 0;
}

static int load_file(serve_cfg_t *c, const char *path, floe_err_t *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return floe_err_errno(err, errno, path);
    char line[4096];
    int ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        char *s = trim(line);
        if (!*s || *s == '#') continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            fclose(f);
            return floe_err_set(err, FLOE_EINVAL, "%s:%d: expected key = value", path, ln);
        }
        *eq = 0;
        if (set_key(c, trim(s), trim(eq + 1), err)) {
            fclose(f);
            floe_err_wrap(err, "%s:%d", path, ln);
            return -1;
        }
    }
    fclose(f);
    return 0;
}

/* "host:port" -> parts; "[v6]:port" too. */
static int split_hostport(const char *s, char *host, size_t hn, int *port, floe_err_t *err)
{
    const char *colon = strrchr(s, ':');
    if (!colon) return floe_err_set(err, FLOE_EINVAL, "'%s' is not HOST:PORT", s);
    size_t n = (size_t)(colon - s);
    const char *h = s;
    if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
        h++;
        n -= 2;
    }
    if (n >= hn) return floe_err_set(err, FLOE_EINVAL, "host too long in '%s'", s);
    memcpy(host, h, n);
    host[n] = 0;
    int64_t p;
    if (floe_parse_int64(colon + 1, 0, 65535, &p, err)) {
        floe_err_wrap(err, "port in '%s'", s);
        return -1;
    }
    *port = (int)p;
    return 0;
}

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

int floe_cmd_serve(int argc, char **argv)
{
    serve_cfg_t c = {0};
    c.listen = "127.0.0.1:9092";
    c.http = "127.0.0.1:8181";
    c.data_dir = "./floe-data";
    c.node_id = 1;
    c.max_request = 100 << 20;
    c.max_conns = 10000;
    c.partitions = 1;
    c.flush_check_ms = 1000;
    c.auto_create = true;
    c.acks_all_fsync = true;
    floe_err_t err;
    floe_err_clear(&err);
    int rc = 1;
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
    serve_tables_t *tables = NULL;
    mem_policy_t mem;
    char khost[256], hhost[256];
    int kport, hport;
    if (config && load_file(&c, config, &err)) goto out;
    if (flag_listen) c.listen = (char *)flag_listen;
    if (flag_http) c.http = (char *)flag_http;
    if (flag_data) c.data_dir = (char *)flag_data;
    if (split_hostport(c.listen, khost, sizeof khost, &kport, &err) ||
        split_hostport(c.http, hhost, sizeof hhost, &hport, &err))
        goto out;

    signal(SIGPIPE, SIG_IGN);
    if (floe_loop_new(&loop, &err)) goto out;
    floe_broker_config_t bc = {
        .data_dir = c.data_dir,
        .auto_create_topics = c.auto_create,
        .default_partitions = (int32_t)c.partitions,
        .acks_all_fsync = c.acks_all_fsync,
        .flush_interval_ms = c.flush_check_ms,
        .retention_check_ms = c.retention_check_ms,
        .topic_defaults = c.defaults,
        .ntopic_defaults = c.ndefaults,
    };
    if (floe_broker_open(&bc, &broker, &err)) goto out;
    floe_broker_attach_loop(broker, loop);
    floe_kafka_srv_config_t kc = {
        .host = khost,
        .port = kport,
        .advertised_host = c.adv_host,
        .advertised_port = (int)c.adv_port,
        .node_id = (int32_t)c.node_id,
        .cluster_id = c.cluster_id,
        .max_request_bytes = (size_t)c.max_request,
        .max_connections = (int)c.max_conns,
    };
    if (floe_kafka_srv_new(loop, &kc, broker, &srv, &err)) goto out;
    if (floe_kafka_srv_add_modules(srv, floe_kafka_modules, &err)) goto out;
    if (serve_tables_start(broker, c.data_dir, c.defaults, c.ndefaults, &tables, &err)) goto out;
    if (floe_http_new(&http, &err) || floe_kafka_srv_http(srv, http, &err) ||
        floe_http_metrics_add(http, floe_http_process_metrics, NULL) ||
        floe_engine_http(serve_tables_engine(tables), http, &err)) {
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

    printf("floe ready kafka=%s:%d http=%s:%d data=%s\n", floe_kafka_srv_host(srv),
           floe_kafka_srv_bound_port(srv), hhost, floe_http_port(http), c.data_dir);
    fflush(stdout);
    FLOE_INFO("serve: kafka on %s:%d, http on %s:%d, data in %s", khost,
              floe_kafka_srv_bound_port(srv), hhost, floe_http_port(http), c.data_dir);
    if (floe_loop_run(loop, &err)) goto out;
    FLOE_INFO("serve: shutting down");
    rc = 0;
out:
    if (rc && err.code) fprintf(stderr, "floe serve: %s\n", err.msg);
    if (http) floe_http_free(http);
    if (srv) floe_kafka_srv_shutdown(srv, 2000);
    /* the engine's last commit reads the logs: before the broker closes them */
    serve_tables_stop(tables);
    if (srv) floe_kafka_srv_free(srv);
    floe_broker_close(broker);
    g_loop = NULL;
    floe_loop_free(loop);
    for (int i = 0; i < c.nowned; i++) free(c.owned[i]);
    if (!rc) FLOE_INFO("serve: stopped cleanly");
    return rc;
}
