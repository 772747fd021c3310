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
#include <sys/resource.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "cmd/serve_tables.h"
#include "http/http.h"
#include "kafka/broker.h"
#include "kafka/groups_module.h"
#include "kafka/server.h"
#include "net/loop.h"
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

static int h_health(const floe_http_req_t *rq, floe_http_resp_t *rs, void *arg)
{
    (void)rq;
    (void)arg;
    return floe_buf_append_str(&rs->body, "ok\n");
}

static floe_kafka_srv_t *g_srv;
static serve_tables_t *g_tables;

/* Memory policy.  glibc hands freed memory back to the kernel eagerly (a
 * freed large block is unmapped, a free heap top above 128 KiB trimmed),
 * so every produce frame, fetch response and output buffer of a busy
 * broker lands on fresh pages: a page fault per 4 KiB, which costs more
 * than copying the bytes (measured: a 2 MB fetch response spent ~15 ms in
 * faults).  So the heap keeps its pages while traffic flows, and they are
 * given back, with the pool of frame buffers, once the broker has been
 * quiet for a tick. */
#define MEM_TICK_MS 2000
static struct {
    floe_loop_t *loop;
    uint64_t traffic;
    bool trimmed;
} g_mem;

static void mem_tick(void *arg)
{
    (void)arg;
    if (!g_srv) return;
    uint64_t t = floe_kafka_srv_traffic(g_srv);
    if (t != g_mem.traffic) {
        g_mem.traffic = t;
        g_mem.trimmed = false;
    } else if (!g_mem.trimmed) {
        floe_kafka_srv_release_memory(g_srv);
        malloc_trim(0);
        g_mem.trimmed = true;
    }
    floe_loop_timer(g_mem.loop, MEM_TICK_MS, mem_tick, NULL);
}

static void mem_policy(floe_loop_t *loop, floe_kafka_srv_t *srv)
{
    mallopt(M_MMAP_THRESHOLD, 64 << 20); /* also stops the threshold's own growth */
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    g_mem.loop = loop;
    g_mem.traffic = floe_kafka_srv_traffic(srv);
    floe_loop_timer(loop, MEM_TICK_MS, mem_tick, NULL);
}

#ifdef __SANITIZE_ADDRESS__
/* Under AddressSanitizer malloc is the sanitizer's, and mallinfo2 reports
 * nothing: ask its allocator (libasan exports these; gcc ships no header). */
size_t __sanitizer_get_current_allocated_bytes(void);
size_t __sanitizer_get_free_bytes(void);
#endif

/* The process's memory: resident set and CPU (Prometheus's standard
 * process_* names), and the malloc heap split into bytes in use and bytes
 * held free, which tells live data from what the memory policy keeps. */
static int process_metrics(floe_buf_t *out)
{
    long rss_kb = 0;
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) rss_kb = atol(line + 6);
    if (f) fclose(f);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
                 ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
#ifdef __SANITIZE_ADDRESS__
    size_t in_use = __sanitizer_get_current_allocated_bytes(), held = __sanitizer_get_free_bytes();
#else
    struct mallinfo2 mi = mallinfo2();
    size_t in_use = mi.uordblks + mi.hblkhd, held = mi.fordblks;
#endif
    return floe_buf_printf(
        out,
        "# HELP process_resident_memory_bytes Resident set size.\n"
        "# TYPE process_resident_memory_bytes gauge\n"
        "process_resident_memory_bytes %ld\n"
        "# HELP process_cpu_seconds_total User and system CPU time.\n"
        "# TYPE process_cpu_seconds_total counter\n"
        "process_cpu_seconds_total %.3f\n"
        "# HELP floe_heap_bytes malloc heap: bytes in live allocations, bytes held free.\n"
        "# TYPE floe_heap_bytes gauge\n"
        "floe_heap_bytes{state=\"in_use\"} %zu\n"
        "floe_heap_bytes{state=\"free\"} %zu\n",
        rss_kb * 1024, cpu, in_use, held);
}

static int h_metrics(const floe_http_req_t *rq, floe_http_resp_t *rs, void *arg)
{
    (void)rq;
    (void)arg;
    rs->content_type = "text/plain; version=0.0.4";
    if (floe_kafka_srv_metrics(g_srv, &rs->body) < 0 || process_metrics(&rs->body) < 0) return -1;
    return g_tables ? serve_tables_metrics(g_tables, &rs->body) : 0;
}

/* POST /admin/tables/NAME/redrive: re-drive the table's dead letters. */
static int h_redrive(const floe_http_req_t *rq, floe_http_resp_t *rs)
{
    const char *name = rq->path + strlen("/admin/tables/");
    const char *end = strstr(name, "/redrive");
    char buf[512];
    if (!end || strcmp(end, "/redrive") || end == name || (size_t)(end - name) >= sizeof buf) {
        rs->status = 404;
        return floe_buf_append_str(&rs->body,
                                   "{\"error\":\"not found: POST /admin/tables/NAME/redrive\"}");
    }
    if (strcmp(rq->method, "POST")) {
        rs->status = 405;
        return floe_buf_append_str(&rs->body, "{\"error\":\"use POST\"}");
    }
    memcpy(buf, name, (size_t)(end - name));
    buf[end - name] = '\0';
    floe_err_t err;
    if (!g_tables) floe_err_set(&err, FLOE_ENOENT, "no table engine");
    else if (serve_tables_redrive(g_tables, buf, &rs->body, &err) == 0)
        return 0;
    floe_buf_reset(&rs->body);
    rs->status = err.code == FLOE_ENOENT ? 404 : err.code == FLOE_EINVAL ? 409 : 500;
    json_t *o = json_pack("{s:s}", "error", err.msg);
    char *txt = o ? json_dumps(o, JSON_COMPACT) : NULL;
    int rc = floe_buf_append_str(&rs->body, txt ? txt : "{\"error\":\"out of memory\"}");
    free(txt);
    json_decref(o);
    return rc;
}

/* The table engine's state as JSON (floe table describe reads it); the
 * re-drive below it. */
static int h_tables(const floe_http_req_t *rq, floe_http_resp_t *rs, void *arg)
{
    (void)arg;
    rs->content_type = "application/json";
    if (!strncmp(rq->path, "/admin/tables/", 14)) return h_redrive(rq, rs);
    return g_tables ? serve_tables_status(g_tables, &rs->body)
                    : floe_buf_append_str(&rs->body, "{\"tables\":[]}");
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
    g_srv = srv;
    if (serve_tables_start(broker, c.data_dir, c.defaults, c.ndefaults, &tables, &err)) goto out;
    g_tables = tables;
    if (floe_http_new(&http, &err) || floe_http_route(http, "/health", h_health, NULL) ||
        floe_http_route(http, "/metrics", h_metrics, NULL) ||
        floe_http_route(http, "/admin/tables", h_tables, NULL)) {
        if (!err.code) floe_err_oom(&err);
        goto out;
    }
    if (floe_http_start(http, hhost, hport, &err)) goto out;

    mem_policy(loop, srv);
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
    g_tables = NULL;
    serve_tables_stop(tables);
    if (srv) floe_kafka_srv_free(srv);
    g_srv = NULL;
    floe_broker_close(broker);
    g_loop = NULL;
    floe_loop_free(loop);
    for (int i = 0; i < c.nowned; i++) free(c.owned[i]);
    if (!rc) FLOE_INFO("serve: stopped cleanly");
    return rc;
}
