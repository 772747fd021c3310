/* bench/many-tables: a broker with many idle table partitions (issue 13).
 *
 *   build/bench/many-tables/many_tables [IDLE_SECONDS]     (default 20)
 *
 * 1. `floe serve` with 250 table topics of 4 partitions (1,000 table
 *    partitions), two records in each, every table committed; then no
 *    traffic: floe's CPU over IDLE_SECONDS (utime + stime from
 *    /proc/PID/stat, in % of one core; the goal is <= 1%), its RSS and
 *    its open descriptors.
 * 2. 750 more such topics (4,000 partitions), committed; floe stopped
 *    (SIGTERM) and started again: seconds to its ready line (HTTP and Kafka
 *    serve), and seconds until /admin/tables lists every table with its
 *    committed offsets; descriptors after the restart; idle CPU again.
 *    Reference: the same machine opening, reading and closing every
 *    partition's segment files (page-cached) once, the least a restart of
 *    those logs must do.
 *
 * Finds floe at $FLOE_BIN or next to this binary (../../floe).  The last
 * line is
 *   many_tables key=value ...
 */
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "http/client.h"
#include "unit/floe_proc.h"
#include "util/fs.h"

#define PARTS 4
#define IDLE_TOPICS 250
#define ALL_TOPICS 1000

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *why)
{
    fprintf(stderr, "bench/many-tables: %s: %s\n", what, why);
    exit(1);
}

static int count_fds(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) n += de->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

static rd_kafka_t *client(const floe_proc_t *p, rd_kafka_type_t type)
{
    char errstr[512];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    rd_kafka_conf_set(c, "bootstrap.servers", p->kafka, NULL, 0);
    rd_kafka_conf_set(c, "log_level", "0", NULL, 0);
    rd_kafka_conf_set(c, "linger.ms", "20", NULL, 0);
    rd_kafka_t *rk = rd_kafka_new(type, c, errstr, sizeof errstr);
    if (!rk) die("client", errstr);
    return rk;
}

/* Table topics t<from>..t<to-1> of PARTS partitions, two records each. */
static void make_tables(const floe_proc_t *p, int from, int to)
{
    rd_kafka_t *rk = client(p, RD_KAFKA_PRODUCER);
    int n = to - from;
    rd_kafka_NewTopic_t **nt = calloc((size_t)n, sizeof *nt);
    char name[32], errstr[512];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "t%04d", from + i);
        nt[i] = rd_kafka_NewTopic_new(name, PARTS, 1, errstr, sizeof errstr);
        rd_kafka_NewTopic_set_config(nt[i], "table.enable", "true");
        rd_kafka_NewTopic_set_config(nt[i], "table.commit.interval.ms", "1000");
    }
    rd_kafka_AdminOptions_t *o = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_request_timeout(o, 120000, errstr, sizeof errstr);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_CreateTopics(rk, nt, (size_t)n, o, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 180000);
    if (!ev || rd_kafka_event_error(ev))
        die("create topics", ev ? rd_kafka_event_error_string(ev) : "timed out");
    size_t nres;
    const rd_kafka_topic_result_t **res =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &nres);
    for (size_t i = 0; i < nres; i++)
        if (rd_kafka_topic_result_error(res[i]))
            die("create topic", rd_kafka_topic_result_error_string(res[i]));
    rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_AdminOptions_destroy(o);
    for (int i = 0; i < n; i++) rd_kafka_NewTopic_destroy(nt[i]);
    free(nt);
    for (int i = from; i < to; i++)
        for (int q2 = 0; q2 < PARTS; q2++)
            for (int k = 0; k < 2; k++) {
                char v[96];
                snprintf(name, sizeof name, "t%04d", i);
                int len = snprintf(v, sizeof v, "{\"t\":%d,\"p\":%d,\"k\":%d}", i, q2, k);
                while (rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(name), RD_KAFKA_V_PARTITION(q2),
                                         RD_KAFKA_V_VALUE(v, (size_t)len),
                                         RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                         RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                    rd_kafka_poll(rk, 10);
            }
    if (rd_kafka_flush(rk, 120000)) die("produce", "records not delivered within 120 s");
    rd_kafka_destroy(rk);
}

/* Whether /admin/tables lists ntopics tables, every partition committed
 * at 2. */
static bool all_committed(const floe_proc_t *p, int ntopics)
{
    char url[256];
    snprintf(url, sizeof url, "http://%s/admin/tables", p->http);
    floe_http_call_t c = {.url = url, .timeout_ms = 60000};
    floe_buf_t body = FLOE_BUF_INIT;
    floe_err_t err;
    long status = 0;
    bool ok = false;
    if (floe_http_call(&c, &status, &body, &err) == 0 && status == 200) {
        json_t *js = json_loadb((const char *)body.data, body.len, 0, NULL);
        json_t *ts = json_object_get(js, "tables");
        int n = 0;
        ok = json_array_size(ts) == (size_t)ntopics;
        for (size_t i = 0; ok && i < json_array_size(ts); i++) {
            json_t *parts = json_object_get(json_array_get(ts, i), "partitions");
            ok = json_array_size(parts) == PARTS;
            for (size_t k = 0; ok && k < PARTS; k++, n++)
                ok =
                    json_integer_value(json_object_get(json_array_get(parts, k), "committed")) == 2;
        }
        json_decref(js);
    }
    floe_buf_free(&body);
    return ok;
}

static double wait_committed(const floe_proc_t *p, int ntopics, double timeout)
{
    double t0 = now_s();
    while (!all_committed(p, ntopics)) {
        if (now_s() - t0 > timeout) die("tables", "not every table committed in time");
        usleep(200000);
    }
    return now_s() - t0;
}

static double idle_cpu_pct(pid_t pid, int seconds)
{
    double c0 = floe_proc_cpu_s(pid), t0 = now_s();
    sleep((unsigned)seconds);
    return 100.0 * (floe_proc_cpu_s(pid) - c0) / (now_s() - t0);
}

/* Open, read and close every file of every partition log under
 * data/log, as a restart must at least do; seconds. */
static double open_all_logs(const char *data)
{
    char logdir[PATH_MAX], part[PATH_MAX], path[PATH_MAX], buf[1 << 16];
    if (floe_path_join(logdir, sizeof logdir, data, "log", NULL)) die("reference", "path too long");
    double t0 = now_s();
    DIR *d = opendir(logdir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || floe_path_join(part, sizeof part, logdir, de->d_name, NULL))
            continue;
        DIR *pd = opendir(part);
        struct dirent *fe;
        while (pd && (fe = readdir(pd)) != NULL) {
            if (fe->d_name[0] == '.' || floe_path_join(path, sizeof path, part, fe->d_name, NULL))
                continue;
            int fd = open(path, O_RDONLY);
            if (fd < 0) continue;
            while (read(fd, buf, sizeof buf) > 0) {
            }
            close(fd);
        }
        if (pd) closedir(pd);
    }
    if (d) closedir(d);
    return now_s() - t0;
}

int main(int argc, char **argv)
{
    int idle = argc > 1 ? atoi(argv[1]) : 20;
    if (idle < 1) idle = 20;
    signal(SIGPIPE, SIG_IGN);
    char bin[PATH_MAX], why[1024], data[PATH_MAX], tmp[] = "/tmp/floe-bench-many-XXXXXX";
    if (floe_proc_bin(bin, sizeof bin, "../../floe")) die("floe", "path too long");
    if (!mkdtemp(tmp)) die("temp dir", "mkdtemp failed");
    if (floe_path_join(data, sizeof data, tmp, "data", NULL)) die("temp dir", "path too long");
    floe_proc_t p = {0};
    if (floe_proc_start(&p, bin, data, NULL, why, sizeof why)) die("start", why);

    make_tables(&p, 0, IDLE_TOPICS);
    double commit1 = wait_committed(&p, IDLE_TOPICS, 300);
    sleep(2); /* the last commits and their files settle */
    double cpu1 = idle_cpu_pct(p.pid, idle);
    long rss1 = floe_proc_rss_kb(p.pid);
    int fds1 = count_fds(p.pid);
    printf("# %d idle table partitions: CPU %.2f%% of a core over %d s, RSS %.1f MB, %d "
           "descriptors (tables committed %.1f s after the last produce)\n",
           IDLE_TOPICS * PARTS, cpu1, idle, rss1 / 1024.0, fds1, commit1);
    fflush(stdout);

    make_tables(&p, IDLE_TOPICS, ALL_TOPICS);
    wait_committed(&p, ALL_TOPICS, 600);
    double t0 = now_s();
    int st = floe_proc_stop(&p, SIGTERM);
    double stop_s = now_s() - t0;
    if (st != 0) die("stop", "floe did not stop cleanly");
    double ref = open_all_logs(data);
    t0 = now_s();
    if (floe_proc_start(&p, bin, data, NULL, why, sizeof why)) die("restart", why);
    double ready_s = now_s() - t0;
    wait_committed(&p, ALL_TOPICS, 600);
    double tables_s = now_s() - t0;
    int fds2 = count_fds(p.pid);
    sleep(2);
    double cpu2 = idle_cpu_pct(p.pid, idle < 10 ? idle : 10);
    long rss2 = floe_proc_rss_kb(p.pid);
    printf("# %d partitions: stop %.2f s; restart to ready %.2f s, tables reopened %.2f s after "
           "the start; %d descriptors; idle CPU %.2f%%, RSS %.1f MB; opening and reading every "
           "segment file once takes %.3f s here\n",
           ALL_TOPICS * PARTS, stop_s, ready_s, tables_s, fds2, cpu2, rss2 / 1024.0, ref);
    floe_proc_stop(&p, SIGTERM);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "bench/many-tables: could not remove %s\n", tmp);
    printf("many_tables partitions=%d idle_cpu_pct=%.2f idle_cpu_goal_pct=1 "
           "idle_cpu_vs_goal=%.1f rss_mb=%.1f fds=%d restart_partitions=%d restart_s=%.2f "
           "restart_ms_per_partition=%.3f tables_ready_s=%.2f restart_vs_open_ratio=%.1f "
           "fds_4000=%d idle_cpu_pct_4000=%.2f\n",
           IDLE_TOPICS * PARTS, cpu1, cpu1 / 1.0, rss1 / 1024.0, fds1, ALL_TOPICS * PARTS, ready_s,
           1000.0 * ready_s / (ALL_TOPICS * PARTS), tables_s, ready_s / ref, fds2, cpu2);
    return 0;
}
