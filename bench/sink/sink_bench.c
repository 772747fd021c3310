/* bench/sink: `floe sink` against `floe serve`'s embedded engine on the
 * same data.
 *
 * Starts floe serve on free ports in a temp dir and produces FLOE_SINK_MB
 * (default 100) MB of ~1 KiB JSON events with librdkafka into two plain
 * topics of 4 partitions, the same events into each.  Then:
 *   - embedded: `floe topic alter` makes one a table topic; the broker's
 *     engine takes the whole backlog into its table;
 *   - sink: `floe sink` (one worker) reads the other topic from the same
 *     broker as a consumer group into a table of the same configuration.
 * Each is timed from its start until the table's floe.offsets reach the
 * topic's ends; CPU is the process's user + system time over that span
 * (for the embedded run, floe serve's, which does nothing else then; for
 * the sink, floe sink's, the broker's serving its fetches shown apart).
 * MB/s per core = MB / CPU seconds.  ratio = sink's MB/s per core over the
 * embedded engine's.
 * Last line: sink mb=... sink_mb_s=... sink_mb_per_cpu_s=...
 * sink_cpu_s_per_mb=... broker_cpu_s_per_mb=... serve_mb_s=...
 * serve_mb_per_cpu_s=... serve_cpu_s_per_mb=... ratio=... */
#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iceberg/catalog.h"
#include "iceberg/metadata.h"
#include "table/offsets.h"
#include "unit/floe_proc.h"
#include "util/clock.h"

#define PARTS 4

static char tmp[PATH_MAX];
static pid_t sink_pid;

static void kill_sink(void)
{
    if (sink_pid > 0) {
        kill(sink_pid, SIGKILL);
        waitpid(sink_pid, NULL, 0);
    }
}

/* Produce n ~1 KiB JSON events into topics a and b alike; *bytes gets the
 * value bytes per topic, ends[] the records per partition. */
static int produce(const char *bootstrap, long n, uint64_t *bytes, int64_t *ends)
{
    char es[256];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    if (rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, es, sizeof es) ||
        rd_kafka_conf_set(c, "linger.ms", "20", es, sizeof es) ||
        rd_kafka_conf_set(c, "compression.codec", "lz4", es, sizeof es) ||
        rd_kafka_conf_set(c, "queue.buffering.max.kbytes", "262144", es, sizeof es)) {
        fprintf(stderr, "sink bench: %s\n", es);
        return -1;
    }
    rd_kafka_t *p = rd_kafka_new(RD_KAFKA_PRODUCER, c, es, sizeof es);
    if (!p) return -1;
    static const char *svc[] = {"checkout", "search", "auth", "billing", "catalog"};
    static const char *lvl[] = {"info", "warn", "error", "debug"};
    char v[1400];
    *bytes = 0;
    for (long i = 0; i < n; i++) {
        int len = snprintf(
            v, sizeof v,
            "{\"id\":%ld,\"ts\":%lld,\"service\":\"%s\",\"level\":\"%s\",\"latency_ms\":%.3f,"
            "\"user\":\"u%06ld\",\"region\":\"r%ld\",\"ok\":%s,\"message\":\"request %ld handled "
            "after %ld retries with status %ld; %.*s\"}",
            i, 1700000000000LL + i, svc[i % 5], lvl[i % 4], (double)(i % 997) / 7.0, i % 100000,
            i % 12, i % 7 ? "true" : "false", i, i % 3, 200 + i % 5, 760,
            "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
            "incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud "
            "exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat duis aute "
            "irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla "
            "pariatur excepteur sint occaecat cupidatat non proident sunt in culpa qui officia "
            "deserunt mollit anim id est laborum lorem ipsum dolor sit amet consectetur "
            "adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua "
            "ut enim ad minim veniam quis nostrud exercitation ullamco laboris nisi ut aliquip "
            "ex ea commodo consequat duis aute irure dolor in reprehenderit in voluptate velit "
            "esse cillum dolore eu fugiat nulla pariatur");
        for (int t = 0; t < 2; t++) {
            rd_kafka_resp_err_t e;
            while ((e = rd_kafka_producev(p, RD_KAFKA_V_TOPIC((t ? "emb" : "src")),
                                          RD_KAFKA_V_PARTITION((int32_t)(i % PARTS)),
                                          RD_KAFKA_V_VALUE(v, (size_t)len),
                                          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                          RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                rd_kafka_poll(p, 10);
            if (e) {
                fprintf(stderr, "sink bench: produce: %s\n", rd_kafka_err2str(e));
                rd_kafka_destroy(p);
                return -1;
            }
        }
        *bytes += (uint64_t)len;
        ends[i % PARTS]++;
        rd_kafka_poll(p, 0);
    }
    int rc = rd_kafka_flush(p, 120000) ? -1 : 0;
    rd_kafka_destroy(p);
    return rc;
}

/* Whether default.NAME's floe.offsets reached ends[]. */
static bool caught_up(floe_ice_catalog_t *cat, const char *name, const int64_t *ends)
{
    floe_ice_table_t *t;
    floe_err_t e;
    if (floe_ice_catalog_load_table(cat, "default", name, &t, &e) < 0) return false;
    int64_t off[PARTS];
    bool ok = floe_offsets_read(floe_ice_table_metadata(t), off, PARTS, &e) == 0;
    for (int i = 0; ok && i < PARTS; i++) ok = off[i] == ends[i];
    floe_ice_table_free(t);
    return ok;
}

static int wait_caught_up(floe_ice_catalog_t *cat, const char *name, const int64_t *ends)
{
    int64_t until = floe_mono_ms() + 1800 * 1000;
    while (!caught_up(cat, name, ends)) {
        if (floe_mono_ms() > until) return -1;
        usleep(50 * 1000);
    }
    return 0;
}

static int sh(const char *cmd)
{
    int rc = system(cmd);
    if (rc != 0) fprintf(stderr, "sink bench: failed: %s\n", cmd);
    return rc == 0 ? 0 : -1;
}

/* Spawn `bin sink --config yaml`, output to log; wait for its ready line. */
static int start_sink(const char *bin, const char *yaml, const char *log)
{
    sink_pid = fork();
    if (sink_pid < 0) return -1;
    if (sink_pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        execl(bin, bin, "sink", "--config", yaml, "--http", "127.0.0.1:0", (char *)NULL);
        _exit(127);
    }
    int64_t until = floe_mono_ms() + 60000;
    while (floe_mono_ms() < until) {
        char line[512];
        FILE *f = fopen(log, "r");
        bool ready = false;
        while (f && fgets(line, sizeof line, f)) ready |= !strncmp(line, "floe sink ready", 15);
        if (f) fclose(f);
        if (ready) return 0;
        if (waitpid(sink_pid, NULL, WNOHANG) == sink_pid) {
            sink_pid = 0;
            break;
        }
        usleep(20 * 1000);
    }
    fprintf(stderr, "sink bench: floe sink did not get ready (see %s)\n", log);
    return -1;
}

int main(void)
{
    char bin[PATH_MAX], why[1024], path[PATH_MAX + 64], cmd[3 * PATH_MAX];
    if (floe_proc_bin(bin, sizeof bin, "../../floe")) return 1;
    double mb = getenv("FLOE_SINK_MB") ? atof(getenv("FLOE_SINK_MB")) : 100;
    snprintf(tmp, sizeof tmp, "/tmp/floe-sink-bench.XXXXXX");
    if (!mkdtemp(tmp)) return 1;
    atexit(kill_sink);
    floe_proc_t serve;
    snprintf(path, sizeof path, "%s/data", tmp);
    if (floe_proc_start(&serve, bin, path, NULL, why, sizeof why) < 0) {
        fprintf(stderr, "sink bench: %s\n", why);
        return 1;
    }
    int rc = 1;
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_local_new(&e);
    floe_ice_catalog_t *emb = NULL, *snk = NULL;
    snprintf(cmd, sizeof cmd,
             "%s topic create src --partitions %d --bootstrap %s >/dev/null && %s topic create "
             "emb --partitions %d --bootstrap %s >/dev/null",
             bin, PARTS, serve.kafka, bin, PARTS, serve.kafka);
    if (sh(cmd) < 0) goto out;
    int64_t ends[PARTS] = {0};
    uint64_t bytes;
    long n = (long)(mb * 1e6 / 1024);
    int64_t t0 = floe_mono_ms();
    if (produce(serve.kafka, n, &bytes, ends) < 0) goto out;
    double mbs = (double)bytes / 1e6;
    printf("produced %ld events, %.1f MB into each of two topics (%d partitions) in %.1f s\n", n,
           mbs, PARTS, (double)(floe_mono_ms() - t0) / 1000.0);

    /* the embedded engine takes the backlog of "emb" */
    snprintf(path, sizeof path, "%s/data/warehouse", tmp);
    emb = floe_ice_catalog_fs_new(io, path, &e);
    double c0 = floe_proc_cpu_s(serve.pid);
    t0 = floe_mono_ms();
    snprintf(cmd, sizeof cmd,
             "%s topic alter emb --config table.enable=true --config table.commit.interval.ms=1000 "
             "--bootstrap %s >/dev/null",
             bin, serve.kafka);
    if (sh(cmd) < 0 || wait_caught_up(emb, "emb", ends) < 0) goto out;
    double serve_s = (double)(floe_mono_ms() - t0) / 1000.0;
    double serve_cpu = floe_proc_cpu_s(serve.pid) - c0;
    printf("embedded: %.1f s, %.1f MB/s; floe serve CPU %.2f s: %.1f MB per CPU second\n", serve_s,
           mbs / serve_s, serve_cpu, mbs / serve_cpu);

    /* floe sink takes the backlog of "src" from the same broker */
    char yaml[PATH_MAX + 32], log[PATH_MAX + 32];
    snprintf(yaml, sizeof yaml, "%s/floe.yaml", tmp);
    snprintf(log, sizeof log, "%s/sink.log", tmp);
    FILE *y = fopen(yaml, "w");
    if (!y) goto out;
    fprintf(y,
            "kafka:\n  bootstrap.servers: %s\n  group.id: bench\ncatalog:\n  type: filesystem\n"
            "  warehouse: %s/sinkwh\nstatus_interval: 0\ntables:\n  - topic: src\n"
            "    commit_interval: 1s\n",
            serve.kafka, tmp);
    fclose(y);
    snprintf(path, sizeof path, "%s/sinkwh", tmp);
    double b0 = floe_proc_cpu_s(serve.pid);
    t0 = floe_mono_ms();
    if (start_sink(bin, yaml, log) < 0) goto out;
    snk = floe_ice_catalog_fs_new(io, path, &e);
    if (!snk || wait_caught_up(snk, "src", ends) < 0) goto out;
    double sink_s = (double)(floe_mono_ms() - t0) / 1000.0;
    double sink_cpu = floe_proc_cpu_s(sink_pid);
    double broker_cpu = floe_proc_cpu_s(serve.pid) - b0;
    kill(sink_pid, SIGTERM);
    int st = 0;
    waitpid(sink_pid, &st, 0);
    sink_pid = 0;
    printf("sink: %.1f s, %.1f MB/s; floe sink CPU %.2f s: %.1f MB per CPU second (the broker "
           "serving its fetches: %.2f s); exit %d\n",
           sink_s, mbs / sink_s, sink_cpu, mbs / sink_cpu, broker_cpu,
           WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    printf("sink mb=%.0f sink_mb_s=%.1f sink_mb_per_cpu_s=%.1f sink_cpu_s_per_mb=%.4f "
           "broker_cpu_s_per_mb=%.4f serve_mb_s=%.1f serve_mb_per_cpu_s=%.1f "
           "serve_cpu_s_per_mb=%.4f ratio=%.2f\n",
           mbs, mbs / sink_s, mbs / sink_cpu, sink_cpu / mbs, broker_cpu / mbs, mbs / serve_s,
           mbs / serve_cpu, serve_cpu / mbs, (mbs / sink_cpu) / (mbs / serve_cpu));
    rc = 0;
out:
    floe_ice_catalog_free(emb);
    floe_ice_catalog_free(snk);
    floe_fileio_free(io);
    floe_proc_stop(&serve, SIGTERM);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (rc == 0 && system(cmd) != 0) rc = 1;
    return rc;
}
