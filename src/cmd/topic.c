/* `floe topic create|list|describe|alter|delete`: topic administration over
 * the Kafka protocol with librdkafka's admin API, so the same commands work
 * against floe or any other Kafka broker.
 *
 * librdkafka 2.0.2 has no IncrementalAlterConfigs, so `alter` reads the
 * topic's explicitly set configs (DescribeConfigs), merges the changes and
 * sends the full set with AlterConfigs (which replaces every topic config).
 * librdkafka's own log lines are silenced: a failing command prints exactly
 * one line on stderr. */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/cli.h"
#include "util/clock.h"
#include "util/parse.h"

#define MAX_CFG 128

typedef struct topic_opts {
    const char *sub, *name, *bootstrap;
    int64_t partitions; /* -1: broker default */
    int64_t timeout_ms;
    const char *set_keys[MAX_CFG], *set_values[MAX_CFG];
    int nset;
    const char *del_keys[MAX_CFG];
    int ndel;
    char *owned[MAX_CFG]; /* split copies of k=v */
    int nowned;
} topic_opts_t;

typedef struct admin {
    rd_kafka_t *rk;
    rd_kafka_queue_t *q;
    const char *bootstrap;
    int64_t deadline_ms;
    int64_t timeout_ms;
    bool down;        /* the bootstrap broker refused or vanished */
    char reason[512]; /* first transport error librdkafka reported */
    bool reason_generic;
} admin_t;

static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk, (void)level, (void)fac, (void)buf;
}

static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    (void)rk;
    admin_t *a = opaque;
    if (err == RD_KAFKA_RESP_ERR__TRANSPORT || err == RD_KAFKA_RESP_ERR__RESOLVE ||
        err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || err == RD_KAFKA_RESP_ERR__AUTHENTICATION ||
        err == RD_KAFKA_RESP_ERR__SSL) {
        /* keep the first specific reason ("Connect to ... failed: Connection
         * refused") over the generic "1/1 brokers are down" */
        bool generic = err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN;
        if (!a->reason[0] || (a->reason_generic && !generic)) {
            snprintf(a->reason, sizeof a->reason, "%s", reason);
            a->reason_generic = generic;
        }
        a->down = true;
    }
}

static int admin_open(admin_t *a, const topic_opts_t *o, floe_err_t *err)
{
    memset(a, 0, sizeof *a);
    a->bootstrap = o->bootstrap;
    a->timeout_ms = o->timeout_ms;
    a->deadline_ms = floe_mono_ms() + o->timeout_ms;
    char es[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (rd_kafka_conf_set(conf, "bootstrap.servers", o->bootstrap, es, sizeof es) ||
        rd_kafka_conf_set(conf, "client.id", "floe-cli", es, sizeof es) ||
        rd_kafka_conf_set(conf, "log.connection.close", "false", es, sizeof es) ||
        rd_kafka_conf_set(conf, "reconnect.backoff.ms", "50", es, sizeof es)) {
        rd_kafka_conf_destroy(conf);
        return floe_err_set(err, FLOE_EINVAL, "bad client setting: %s", es);
    }
    rd_kafka_conf_set_log_cb(conf, on_log);
    rd_kafka_conf_set_error_cb(conf, on_error);
    rd_kafka_conf_set_opaque(conf, a);
    if (!(a->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, es, sizeof es))) {
        rd_kafka_conf_destroy(conf);
        return floe_err_set(err, FLOE_EINVAL, "cannot create a Kafka client: %s", es);
    }
    a->q = rd_kafka_queue_new(a->rk);
    return 0;
}

static void admin_close(admin_t *a)
{
    if (a->q) rd_kafka_queue_destroy(a->q);
    if (a->rk) rd_kafka_destroy(a->rk);
}

static int unreachable(admin_t *a, floe_err_t *err)
{
    if (a->reason[0])
        return floe_err_set(err, FLOE_EIO, "cannot reach the broker at %s: %s", a->bootstrap,
                            a->reason);
    return floe_err_set(err, FLOE_ETIMEOUT, "no answer from the broker at %s within %lld ms",
                        a->bootstrap, (long long)a->timeout_ms);
}

/* Metadata of every topic; fails fast when the bootstrap broker refuses
 * connections.  Caller frees *md with rd_kafka_metadata_destroy. */
static int admin_metadata(admin_t *a, const struct rd_kafka_metadata **md, floe_err_t *err)
{
    for (;;) {
        int64_t left = a->deadline_ms - floe_mono_ms();
        if (left <= 0) return unreachable(a, err);
        rd_kafka_resp_err_t e =
            rd_kafka_metadata(a->rk, 1, NULL, md, (int)(left < 200 ? left : 200));
        if (!e) return 0;
        rd_kafka_poll(a->rk, 0); /* serves on_error */
        if (a->down) return unreachable(a, err);
        if (e != RD_KAFKA_RESP_ERR__TIMED_OUT && e != RD_KAFKA_RESP_ERR__TRANSPORT)
            return floe_err_set(err, FLOE_EIO, "metadata from %s: %s", a->bootstrap,
                                rd_kafka_err2str(e));
    }
}

static const rd_kafka_metadata_topic_t *find_topic(const struct rd_kafka_metadata *md,
                                                   const char *name)
{
    for (int i = 0; i < md->topic_cnt; i++)
        if (!strcmp(md->topics[i].topic, name)) return &md->topics[i];
    return NULL;
}

static rd_kafka_AdminOptions_t *admin_options(admin_t *a, rd_kafka_admin_op_t op)
{
    rd_kafka_AdminOptions_t *ao = rd_kafka_AdminOptions_new(a->rk, op);
    char es[256];
    int64_t left = a->deadline_ms - floe_mono_ms();
    if (left < 100) left = 100;
    rd_kafka_AdminOptions_set_request_timeout(ao, (int)left, es, sizeof es);
    if (op == RD_KAFKA_ADMIN_OP_CREATETOPICS || op == RD_KAFKA_ADMIN_OP_DELETETOPICS)
        rd_kafka_AdminOptions_set_operation_timeout(ao, (int)left, es, sizeof es);
    return ao;
}

/* Wait for the result event of an admin call; caller destroys it. */
static rd_kafka_event_t *admin_wait(admin_t *a, floe_err_t *err)
{
    for (;;) {
        rd_kafka_event_t *ev = rd_kafka_queue_poll(a->q, 100);
        if (ev) {
            if (rd_kafka_event_error(ev)) {
                floe_err_set(err, FLOE_EIO, "%s", rd_kafka_event_error_string(ev));
                rd_kafka_event_destroy(ev);
                return NULL;
            }
            return ev;
        }
        rd_kafka_poll(a->rk, 0);
        if (floe_mono_ms() > a->deadline_ms + 1000) {
            unreachable(a, err);
            return NULL;
        }
    }
}

/* The one topic result of a create or delete: 0, or -1 with its error. */
static int topic_result(const rd_kafka_topic_result_t **tr, size_t n, const char *name,
                        floe_err_t *err)
{
    if (n != 1) return floe_err_set(err, FLOE_EIO, "no result for topic '%s'", name);
    rd_kafka_resp_err_t e = rd_kafka_topic_result_error(tr[0]);
    if (!e) return 0;
    const char *why = rd_kafka_topic_result_error_string(tr[0]);
    return floe_err_set(err, FLOE_EIO, "%s", why ? why : rd_kafka_err2str(e));
}

/* The table a topic becomes, from its configs (table.enable, table.namespace,
 * table.name) as design.md says; out = "" when it is no table topic. */
static void table_of(const char *topic, const char *enable, const char *ns, const char *name,
                     char *out, size_t size)
{
    out[0] = 0;
    bool on = false;
    if (!enable || floe_parse_bool(enable, &on, NULL) || !on) return;
    char t[256];
    snprintf(t, sizeof t, "%s", name && *name ? name : topic);
    if (!(name && *name))
        for (char *p = t; *p; p++)
            if (*p == '.') *p = '_';
    snprintf(out, size, "%s.%s", ns && *ns ? ns : "default", t);
}

/* ---- configs ---- */

typedef struct cfg_entry {
    const char *name, *value;
    bool is_default, read_only;
} cfg_entry_t;

/* DescribeConfigs of topics[0..n); *ev holds the result (caller destroys);
 * *res[i] the resource of topic i (borrowed from *ev). */
static int describe_configs(admin_t *a, const char *const *topics, size_t n, rd_kafka_event_t **ev,
                            const rd_kafka_ConfigResource_t ***res, floe_err_t *err)
{
    rd_kafka_ConfigResource_t **rq = calloc(n ? n : 1, sizeof *rq);
    if (!rq) return floe_err_oom(err);
    for (size_t i = 0; i < n; i++)
        rq[i] = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topics[i]);
    rd_kafka_AdminOptions_t *ao = admin_options(a, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
    rd_kafka_DescribeConfigs(a->rk, rq, n, ao, a->q);
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_ConfigResource_destroy_array(rq, n);
    free(rq);
    if (!(*ev = admin_wait(a, err))) {
        floe_err_wrap(err, "describe configs");
        return -1;
    }
    const rd_kafka_DescribeConfigs_result_t *r = rd_kafka_event_DescribeConfigs_result(*ev);
    size_t cnt = 0;
    const rd_kafka_ConfigResource_t **rs =
        r ? rd_kafka_DescribeConfigs_result_resources(r, &cnt) : NULL;
    if (!rs || cnt != n) {
        rd_kafka_event_destroy(*ev);
        *ev = NULL;
        return floe_err_set(err, FLOE_EIO, "describe configs: %zu results for %zu topics", cnt, n);
    }
    *res = rs;
    for (size_t i = 0; i < cnt; i++)
        if (rd_kafka_ConfigResource_error(rs[i])) {
            floe_err_set(err, FLOE_EIO, "describe configs of '%s': %s",
                         rd_kafka_ConfigResource_name(rs[i]),
                         rd_kafka_ConfigResource_error_string(rs[i])
                             ? rd_kafka_ConfigResource_error_string(rs[i])
                             : rd_kafka_err2str(rd_kafka_ConfigResource_error(rs[i])));
            rd_kafka_event_destroy(*ev);
            *ev = NULL;
            return -1;
        }
    return 0;
}

static const char *cfg_get(const rd_kafka_ConfigResource_t *r, const char *key)
{
    size_t n;
    const rd_kafka_ConfigEntry_t **e = rd_kafka_ConfigResource_configs(r, &n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rd_kafka_ConfigEntry_name(e[i]), key)) return rd_kafka_ConfigEntry_value(e[i]);
    return NULL;
}

static void table_of_res(const rd_kafka_ConfigResource_t *r, char *out, size_t size)
{
    table_of(rd_kafka_ConfigResource_name(r), cfg_get(r, "table.enable"),
             cfg_get(r, "table.namespace"), cfg_get(r, "table.name"), out, size);
}

static int cmp_entry(const void *x, const void *y)
{
    const cfg_entry_t *a = x, *b = y;
    if (a->is_default != b->is_default) return a->is_default ? 1 : -1;
    return strcmp(a->name, b->name);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* ---- subcommands ---- */

static int do_create(admin_t *a, const topic_opts_t *o, floe_err_t *err)
{
    const struct rd_kafka_metadata *md;
    if (admin_metadata(a, &md, err)) return -1;
    bool exists = find_topic(md, o->name) != NULL;
    rd_kafka_metadata_destroy(md);
    if (exists) return floe_err_set(err, FLOE_EEXIST, "topic '%s' already exists", o->name);
    char es[512];
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(o->name, (int)o->partitions, -1, es, sizeof es);
    if (!nt) return floe_err_set(err, FLOE_EINVAL, "%s", es);
    for (int i = 0; i < o->nset; i++)
        if (rd_kafka_NewTopic_set_config(nt, o->set_keys[i], o->set_values[i])) {
            rd_kafka_NewTopic_destroy(nt);
            return floe_err_oom(err);
        }
    rd_kafka_AdminOptions_t *ao = admin_options(a, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_CreateTopics(a->rk, &nt, 1, ao, a->q);
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_NewTopic_destroy(nt);
    rd_kafka_event_t *ev = admin_wait(a, err);
    if (!ev) return -1;
    size_t n = 0;
    const rd_kafka_topic_result_t **tr =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
    int rc = topic_result(tr, n, o->name, err);
    rd_kafka_event_destroy(ev);
    if (rc) return -1;
    const char *en = NULL, *ns = NULL, *tn = NULL;
    for (int i = 0; i < o->nset; i++) {
        if (!strcmp(o->set_keys[i], "table.enable")) en = o->set_values[i];
        if (!strcmp(o->set_keys[i], "table.namespace")) ns = o->set_values[i];
        if (!strcmp(o->set_keys[i], "table.name")) tn = o->set_values[i];
    }
    char table[600];
    table_of(o->name, en, ns, tn, table, sizeof table);
    /* the broker picks the partition count when none was given: ask it */
    int parts = (int)o->partitions;
    if (parts < 0 && !admin_metadata(a, &md, err)) {
        const rd_kafka_metadata_topic_t *t = find_topic(md, o->name);
        if (t) parts = t->partition_cnt;
        rd_kafka_metadata_destroy(md);
    }
    printf("created topic %s (%d partition%s)", o->name, parts, parts == 1 ? "" : "s");
    if (table[0]) printf(", table %s", table);
    printf("\n");
    return 0;
}

static int do_list(admin_t *a, floe_err_t *err)
{
    const struct rd_kafka_metadata *md;
    if (admin_metadata(a, &md, err)) return -1;
    size_t n = 0;
    const char **names = calloc((size_t)md->topic_cnt + 1, sizeof *names);
    if (!names) {
        rd_kafka_metadata_destroy(md);
        return floe_err_oom(err);
    }
    for (int i = 0; i < md->topic_cnt; i++) names[n++] = md->topics[i].topic;
    qsort(names, n, sizeof *names, cmp_str);
    rd_kafka_event_t *ev = NULL;
    const rd_kafka_ConfigResource_t **res = NULL;
    int rc = 0;
    if (n && describe_configs(a, names, n, &ev, &res, err)) rc = -1;
    if (!rc) {
        printf("%-40s %10s  %s\n", "TOPIC", "PARTITIONS", "TABLE");
        for (size_t i = 0; i < n; i++) {
            const rd_kafka_metadata_topic_t *t = find_topic(md, names[i]);
            char table[600] = "";
            for (size_t k = 0; res && k < n; k++)
                if (!strcmp(rd_kafka_ConfigResource_name(res[k]), names[i]))
                    table_of_res(res[k], table, sizeof table);
            printf("%-40s %10d  %s\n", names[i], t->partition_cnt, table[0] ? table : "-");
        }
    }
    if (ev) rd_kafka_event_destroy(ev);
    free(names);
    rd_kafka_metadata_destroy(md);
    return rc;
}

static int do_describe(admin_t *a, const topic_opts_t *o, floe_err_t *err)
{
    const struct rd_kafka_metadata *md;
    if (admin_metadata(a, &md, err)) return -1;
    const rd_kafka_metadata_topic_t *t = find_topic(md, o->name);
    if (!t) {
        rd_kafka_metadata_destroy(md);
        return floe_err_set(err, FLOE_ENOENT, "unknown topic '%s'", o->name);
    }
    if (t->err) {
        floe_err_set(err, FLOE_EIO, "topic '%s': %s", o->name, rd_kafka_err2str(t->err));
        rd_kafka_metadata_destroy(md);
        return -1;
    }
    rd_kafka_event_t *ev;
    const rd_kafka_ConfigResource_t **res;
    if (describe_configs(a, &o->name, 1, &ev, &res, err)) {
        rd_kafka_metadata_destroy(md);
        return -1;
    }
    /* watermarks first, so a failure prints nothing half-done */
    int np = t->partition_cnt;
    int64_t *lo = calloc((size_t)np + 1, sizeof *lo), *hi = calloc((size_t)np + 1, sizeof *hi);
    int rc = 0;
    if (!lo || !hi) rc = floe_err_oom(err);
    for (int p = 0; p < np && !rc; p++) {
        int32_t id = t->partitions[p].id;
        int64_t left = a->deadline_ms - floe_mono_ms();
        rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(a->rk, o->name, id, &lo[p], &hi[p],
                                                                 (int)(left > 100 ? left : 100));
        if (e)
            rc = floe_err_set(err, FLOE_EIO, "offsets of %s[%d]: %s", o->name, (int)id,
                              rd_kafka_err2str(e));
    }
    if (!rc) {
        char table[600];
        table_of_res(res[0], table, sizeof table);
        printf("topic       %s\n", o->name);
        printf("partitions  %d\n", np);
        if (table[0]) printf("table       %s (dead letters: %s_dlq)\n", table, table);
        else
            printf("table       - (table.enable is not set)\n");
        size_t nc;
        const rd_kafka_ConfigEntry_t **ce = rd_kafka_ConfigResource_configs(res[0], &nc);
        cfg_entry_t *es = calloc(nc + 1, sizeof *es);
        if (!es) rc = floe_err_oom(err);
        for (size_t i = 0; es && i < nc; i++) {
            es[i].name = rd_kafka_ConfigEntry_name(ce[i]);
            es[i].value = rd_kafka_ConfigEntry_value(ce[i]);
            es[i].is_default = rd_kafka_ConfigEntry_is_default(ce[i]);
            es[i].read_only = rd_kafka_ConfigEntry_is_read_only(ce[i]);
        }
        if (es) {
            qsort(es, nc, sizeof *es, cmp_entry);
            printf("configs:\n");
            for (size_t i = 0; i < nc; i++)
                printf("  %-40s %s%s\n", es[i].name, es[i].value ? es[i].value : "(null)",
                       es[i].is_default ? "  (default)" : "");
            free(es);
            printf("%-10s %8s %14s %14s %10s\n", "PARTITION", "LEADER", "LOG_START", "LOG_END",
                   "RECORDS");
            for (int p = 0; p < np; p++)
                printf("%-10d %8d %14lld %14lld %10lld\n", (int)t->partitions[p].id,
                       (int)t->partitions[p].leader, (long long)lo[p], (long long)hi[p],
                       (long long)(hi[p] - lo[p]));
        }
    }
    free(lo);
    free(hi);
    rd_kafka_event_destroy(ev);
    rd_kafka_metadata_destroy(md);
    return rc;
}

static int do_alter(admin_t *a, const topic_opts_t *o, floe_err_t *err)
{
    if (!o->nset && !o->ndel)
        return floe_err_set(err, FLOE_EINVAL,
                            "nothing to change: give --config KEY=VALUE or --delete-config KEY");
    const struct rd_kafka_metadata *md;
    if (admin_metadata(a, &md, err)) return -1;
    bool exists = find_topic(md, o->name) != NULL;
    rd_kafka_metadata_destroy(md);
    if (!exists) return floe_err_set(err, FLOE_ENOENT, "unknown topic '%s'", o->name);
    rd_kafka_event_t *ev;
    const rd_kafka_ConfigResource_t **res;
    if (describe_configs(a, &o->name, 1, &ev, &res, err)) return -1;
    /* the full set: every explicitly set config, then the changes */
    rd_kafka_ConfigResource_t *r = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, o->name);
    size_t nc;
    const rd_kafka_ConfigEntry_t **ce = rd_kafka_ConfigResource_configs(res[0], &nc);
    int rc = 0;
    for (size_t i = 0; i < nc && !rc; i++) {
        const char *k = rd_kafka_ConfigEntry_name(ce[i]);
        if (rd_kafka_ConfigEntry_is_default(ce[i]) || rd_kafka_ConfigEntry_is_read_only(ce[i]))
            continue;
        if (rd_kafka_ConfigEntry_source(ce[i]) != RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG &&
            rd_kafka_ConfigEntry_source(ce[i]) != RD_KAFKA_CONFIG_SOURCE_UNKNOWN_CONFIG)
            continue;
        bool changed = false;
        for (int d = 0; d < o->ndel; d++) changed |= !strcmp(o->del_keys[d], k);
        for (int s = 0; s < o->nset; s++) changed |= !strcmp(o->set_keys[s], k);
        if (changed) continue;
        if (!rd_kafka_ConfigEntry_value(ce[i]))
            rc = floe_err_set(err, FLOE_EUNSUPPORTED,
                              "config '%s' is sensitive and cannot be carried over by AlterConfigs",
                              k);
        else if (rd_kafka_ConfigResource_set_config(r, k, rd_kafka_ConfigEntry_value(ce[i])))
            rc = floe_err_set(err, FLOE_EINVAL, "config '%s' rejected by the client", k);
    }
    for (int s = 0; s < o->nset && !rc; s++)
        if (rd_kafka_ConfigResource_set_config(r, o->set_keys[s], o->set_values[s]))
            rc = floe_err_set(err, FLOE_EINVAL, "config '%s' rejected by the client",
                              o->set_keys[s]);
    rd_kafka_event_destroy(ev);
    if (!rc) {
        rd_kafka_AdminOptions_t *ao = admin_options(a, RD_KAFKA_ADMIN_OP_ALTERCONFIGS);
        rd_kafka_AlterConfigs(a->rk, &r, 1, ao, a->q);
        rd_kafka_AdminOptions_destroy(ao);
    }
    rd_kafka_ConfigResource_destroy(r);
    if (rc) return -1;
    if (!(ev = admin_wait(a, err))) return -1;
    size_t n = 0;
    const rd_kafka_ConfigResource_t **rs =
        rd_kafka_AlterConfigs_result_resources(rd_kafka_event_AlterConfigs_result(ev), &n);
    if (n != 1) rc = floe_err_set(err, FLOE_EIO, "no result for topic '%s'", o->name);
    else if (rd_kafka_ConfigResource_error(rs[0]))
        rc = floe_err_set(err, FLOE_EIO, "%s",
                          rd_kafka_ConfigResource_error_string(rs[0])
                              ? rd_kafka_ConfigResource_error_string(rs[0])
                              : rd_kafka_err2str(rd_kafka_ConfigResource_error(rs[0])));
    rd_kafka_event_destroy(ev);
    if (rc) return -1;
    printf("altered topic %s:", o->name);
    for (int s = 0; s < o->nset; s++) printf(" %s=%s", o->set_keys[s], o->set_values[s]);
    for (int d = 0; d < o->ndel; d++) printf(" -%s", o->del_keys[d]);
    printf("\n");
    return 0;
}

static int do_delete(admin_t *a, const topic_opts_t *o, floe_err_t *err)
{
    const struct rd_kafka_metadata *md;
    if (admin_metadata(a, &md, err)) return -1;
    bool exists = find_topic(md, o->name) != NULL;
    rd_kafka_metadata_destroy(md);
    if (!exists) return floe_err_set(err, FLOE_ENOENT, "unknown topic '%s'", o->name);
    rd_kafka_DeleteTopic_t *dt = rd_kafka_DeleteTopic_new(o->name);
    rd_kafka_AdminOptions_t *ao = admin_options(a, RD_KAFKA_ADMIN_OP_DELETETOPICS);
    rd_kafka_DeleteTopics(a->rk, &dt, 1, ao, a->q);
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_DeleteTopic_destroy(dt);
    rd_kafka_event_t *ev = admin_wait(a, err);
    if (!ev) return -1;
    size_t n = 0;
    const rd_kafka_topic_result_t **tr =
        rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev), &n);
    int rc = topic_result(tr, n, o->name, err);
    rd_kafka_event_destroy(ev);
    if (rc) return -1;
    printf("deleted topic %s\n", o->name);
    return 0;
}

/* ---- arguments ---- */

static const char usage_text[] =
    "usage: floe topic create NAME [--partitions N] [--config KEY=VALUE ...]\n"
    "       floe topic list\n"
    "       floe topic describe NAME\n"
    "       floe topic alter NAME [--config KEY=VALUE ...] [--delete-config KEY ...]\n"
    "       floe topic delete NAME\n"
    "options: --bootstrap HOST:PORT (default $FLOE_BOOTSTRAP or 127.0.0.1:9092),\n"
    "         --timeout DURATION (default 10s)\n"
    "A topic with --config table.enable=true is also an Iceberg table.\n";

static int parse_args(int argc, char **argv, topic_opts_t *o, floe_err_t *err)
{
    o->partitions = -1;
    o->timeout_ms = 10000;
    o->bootstrap = getenv("FLOE_BOOTSTRAP");
    if (!o->bootstrap || !*o->bootstrap) o->bootstrap = "127.0.0.1:9092";
    if (argc < 3)
        return floe_err_set(err, FLOE_EINVAL,
                            "missing subcommand (create, list, describe, alter, delete)");
    o->sub = argv[2];
    if (!strcmp(o->sub, "--help") || !strcmp(o->sub, "-h")) o->sub = "help";
    for (int i = 3; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] != '-' || !arg[1]) {
            if (o->name) return floe_err_set(err, FLOE_EINVAL, "unexpected argument '%s'", arg);
            o->name = arg;
            continue;
        }
        const char *v = NULL;
        if (strcmp(arg, "--help") && strcmp(arg, "-h")) {
            if (i + 1 >= argc) return floe_err_set(err, FLOE_EINVAL, "%s needs a value", arg);
            v = argv[++i];
        }
        if (!strcmp(arg, "--bootstrap") || !strcmp(arg, "-b")) o->bootstrap = v;
        else if (!strcmp(arg, "--partitions") || !strcmp(arg, "-p")) {
            if (floe_parse_int64(v, 1, 100000, &o->partitions, err)) {
                floe_err_wrap(err, "--partitions");
                return -1;
            }
        } else if (!strcmp(arg, "--timeout")) {
            if (floe_parse_duration_ms(v, &o->timeout_ms, err)) {
                floe_err_wrap(err, "--timeout");
                return -1;
            }
            if (o->timeout_ms < 1) o->timeout_ms = 1;
        } else if (!strcmp(arg, "--config") || !strcmp(arg, "-c")) {
            const char *eq = strchr(v, '=');
            if (!eq || eq == v)
                return floe_err_set(err, FLOE_EINVAL, "--config wants KEY=VALUE, not '%s'", v);
            if (o->nset == MAX_CFG || o->nowned == MAX_CFG)
                return floe_err_set(err, FLOE_EINVAL, "too many --config");
            char *k = strndup(v, (size_t)(eq - v));
            if (!k) return floe_err_oom(err);
            o->owned[o->nowned++] = k;
            for (int s = 0; s < o->nset; s++)
                if (!strcmp(o->set_keys[s], k))
                    return floe_err_set(err, FLOE_EINVAL, "config '%s' given twice", k);
            o->set_keys[o->nset] = k;
            o->set_values[o->nset++] = eq + 1;
        } else if (!strcmp(arg, "--delete-config")) {
            if (o->ndel == MAX_CFG)
                return floe_err_set(err, FLOE_EINVAL, "too many --delete-config");
            o->del_keys[o->ndel++] = v;
        } else if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            o->sub = "help";
        } else {
            return floe_err_set(err, FLOE_EINVAL, "unknown option '%s' (see 'floe topic help')",
                                arg);
        }
    }
    bool named = !strcmp(o->sub, "create") || !strcmp(o->sub, "describe") ||
                 !strcmp(o->sub, "alter") || !strcmp(o->sub, "delete");
    if (!named && strcmp(o->sub, "list") && strcmp(o->sub, "help"))
        return floe_err_set(err, FLOE_EINVAL,
                            "unknown subcommand '%s' (create, list, describe, alter, delete)",
                            o->sub);
    if (named && !o->name) return floe_err_set(err, FLOE_EINVAL, "missing the topic NAME");
    if (!named && o->name)
        return floe_err_set(err, FLOE_EINVAL, "unexpected argument '%s'", o->name);
    if (o->nset && strcmp(o->sub, "create") && strcmp(o->sub, "alter"))
        return floe_err_set(err, FLOE_EINVAL, "--config applies to create and alter only");
    if (o->ndel && strcmp(o->sub, "alter"))
        return floe_err_set(err, FLOE_EINVAL, "--delete-config applies to alter only");
    if (o->partitions > 0 && strcmp(o->sub, "create"))
        return floe_err_set(err, FLOE_EINVAL, "--partitions applies to create only");
    return 0;
}

int floe_cmd_topic(int argc, char **argv)
{
    topic_opts_t o = {0};
    floe_err_t err;
    floe_err_clear(&err);
    floe_cli_quiet_logs();
    int rc = parse_args(argc, argv, &o, &err);
    admin_t a = {0};
    if (!rc && !strcmp(o.sub, "help")) {
        fputs(usage_text, stdout);
    } else if (!rc && !(rc = admin_open(&a, &o, &err))) {
        if (!strcmp(o.sub, "create")) rc = do_create(&a, &o, &err);
        else if (!strcmp(o.sub, "list"))
            rc = do_list(&a, &err);
        else if (!strcmp(o.sub, "describe"))
            rc = do_describe(&a, &o, &err);
        else if (!strcmp(o.sub, "alter"))
            rc = do_alter(&a, &o, &err);
        else
            rc = do_delete(&a, &o, &err);
    }
    admin_close(&a);
    for (int i = 0; i < o.nowned; i++) free(o.owned[i]);
    fflush(stdout);
    if (rc) {
        floe_cli_fail("topic", o.sub && strcmp(o.sub, "help") ? o.sub : NULL, &err);
        return 1;
    }
    return 0;
}
