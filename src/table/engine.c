/* The engine thread: finds table topics, steps their partitions, commits
 * on each table's interval, and publishes a status snapshot after every
 * round. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/engine_int.h"
#include "util/clock.h"
#include "util/diag.h"

void floe_tsource_topics_free(floe_tsource_topic_t *t, size_t n)
{
    for (size_t i = 0; t && i < n; i++) {
        free(t[i].name);
        for (size_t k = 0; k < t[i].nconfigs; k++) {
            free(t[i].keys[k]);
            free(t[i].values[k]);
        }
        free(t[i].keys);
        free(t[i].values);
    }
    free(t);
}

floe_engine_t *floe_engine_new(const floe_engine_config_t *cfg, floe_tsource_t *src,
                               floe_err_t *err)
{
    if (!cfg || !cfg->catalog || !src) {
        floe_err_set(err, FLOE_EINVAL, "engine needs a catalog and a source");
        return NULL;
    }
    floe_engine_t *e = calloc(1, sizeof *e);
    if (!e) {
        floe_err_oom(err);
        return NULL;
    }
    e->cfg = *cfg;
    if (e->cfg.discover_ms <= 0) e->cfg.discover_ms = 1000;
    if (!e->cfg.read_bytes) e->cfg.read_bytes = 1 << 20;
    e->src = src;
    if (!(e->pq_scratch = floe_pq_scratch_new())) {
        free(e);
        floe_err_oom(err);
        return NULL;
    }
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    return e;
}

static void table_free(floe_ttable_t *t)
{
    if (!t) return;
    for (int32_t i = 0; i < t->nparts; i++) floe_tpart_free(t->parts[i]);
    free(t->parts);
    floe_tout_clear(&t->main);
    floe_tout_clear(&t->dlq);
    free(t->topic);
    free(t);
}

/* ---- discovery -------------------------------------------------------------- */

static const char *topic_get(void *ctx, const char *key)
{
    const floe_tsource_topic_t *t = ctx;
    for (size_t i = 0; i < t->nconfigs; i++)
        if (!strcmp(t->keys[i], key)) return t->values[i];
    return NULL;
}

static floe_ttable_t *find_table(floe_engine_t *e, const char *topic)
{
    for (size_t i = 0; i < e->ntables; i++)
        if (!strcmp(e->tables[i]->topic, topic)) return e->tables[i];
    return NULL;
}

static int add_parts(floe_ttable_t *t, int32_t n, floe_err_t *err)
{
    if (n <= t->nparts) return 0;
    floe_tpart_t **p = realloc(t->parts, (size_t)n * sizeof *p);
    if (!p) return floe_err_oom(err);
    t->parts = p;
    int32_t old = t->nparts;
    for (int32_t i = old; i < n; i++) {
        if (!(t->parts[i] = floe_tpart_new(t, i, err))) return -1;
        t->nparts = i + 1;
        t->parts[i]->next = 0;
    }
    /* the committed arrays follow the partition count */
    floe_tout_t *outs[2] = {&t->main, &t->dlq};
    for (int k = 0; k < 2; k++) {
        if (!outs[k]->committed) continue;
        int64_t *c = realloc(outs[k]->committed, (size_t)n * sizeof *c);
        if (!c) return floe_err_oom(err);
        for (int32_t i = old; i < n; i++) c[i] = -1;
        outs[k]->committed = c;
    }
    return 0;
}

/* Remove table i from the engine after a last commit. */
static void drop_table(floe_engine_t *e, size_t i, const char *why)
{
    floe_ttable_t *t = e->tables[i];
    floe_err_t err;
    if (t->state != T_FAILED && t->main.ice) floe_ttable_commit(t, &err);
    FLOE_INFO("table %s.%s: topic %s %s; the engine stops writing it", t->main.ns, t->main.name,
              t->topic, why);
    table_free(t);
    e->tables[i] = e->tables[--e->ntables];
}

static void discover(floe_engine_t *e)
{
    floe_tsource_topic_t *topics;
    size_t n;
    floe_err_t err;
    if (e->src->ops->topics(e->src, &topics, &n, &err) < 0) {
        FLOE_WARN("table engine: cannot list topics: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < e->ntables; i++) e->tables[i]->seen = false;
    for (size_t i = 0; i < n; i++) {
        floe_table_config_t cfg;
        floe_ttable_t *t = find_table(e, topics[i].name);
        int rc = floe_table_config_load(&cfg, topics[i].name, topic_get, &topics[i],
                                        e->cfg.get_default, e->cfg.default_ctx, &err);
        if (rc == 0 && !cfg.enable) continue;
        if (t) {
            t->seen = true;
            if (rc < 0) {
                if (t->state == T_RUNNING) {
                    t->state = T_PAUSED;
                    snprintf(t->reason, sizeof t->reason, "bad configuration: %s", err.msg);
                    FLOE_ERROR("table %s.%s paused: %s", t->main.ns, t->main.name, t->reason);
                }
                continue;
            }
            bool identity = strcmp(cfg.namespace_, t->cfg.namespace_) ||
                            strcmp(cfg.name, t->cfg.name) || cfg.value_conv != t->cfg.value_conv ||
                            cfg.key_conv != t->cfg.key_conv ||
                            cfg.json_infer_timestamps != t->cfg.json_infer_timestamps ||
                            cfg.json_coerce != t->cfg.json_coerce;
            if (identity) { /* rebuilt below at the next discovery (converters too) */
                t->seen = false;
                continue;
            }
            /* live settings */
            t->cfg.commit_interval_ms = cfg.commit_interval_ms;
            t->cfg.flush_bytes = cfg.flush_bytes;
            t->cfg.target_file_bytes = cfg.target_file_bytes;
            t->cfg.invalid_action = cfg.invalid_action;
            memcpy(t->cfg.partition_by, cfg.partition_by, sizeof cfg.partition_by);
            if (t->state == T_PAUSED && !strncmp(t->reason, "bad configuration", 17)) {
                t->state = T_RUNNING;
                t->reason[0] = '\0';
            }
            if (add_parts(t, topics[i].partitions, &err) < 0)
                FLOE_ERROR("table %s.%s: %s", t->main.ns, t->main.name, err.msg);
            continue;
        }
        if (rc < 0) {
            FLOE_WARN("table engine: topic %s: %s", topics[i].name, err.msg);
            continue;
        }
        if (topics[i].partitions <= 0) continue;
        floe_ttable_t **tv = realloc(e->tables, (e->ntables + 1) * sizeof *tv);
        t = calloc(1, sizeof *t);
        if (!tv || !t || !(t->topic = strdup(topics[i].name))) {
            if (tv) e->tables = tv;
            free(t);
            FLOE_ERROR("table engine: out of memory adding topic %s", topics[i].name);
            continue;
        }
        e->tables = tv;
        t->e = e;
        t->cfg = cfg;
        t->state = T_RUNNING;
        t->seen = true;
        t->next_commit_ms = floe_mono_ms() + cfg.commit_interval_ms;
        if (add_parts(t, topics[i].partitions, &err) < 0 || floe_ttable_open(t, &err) < 0) {
            FLOE_ERROR("table engine: topic %s: cannot open its table: %s (retrying)", t->topic,
                       err.msg);
            table_free(t);
            continue;
        }
        e->tables[e->ntables++] = t;
    }
    for (size_t i = e->ntables; i-- > 0;)
        if (!e->tables[i]->seen) drop_table(e, i, "is gone, disabled or renamed");
    floe_tsource_topics_free(topics, n);
}

/* ---- status ------------------------------------------------------------------- */

static const char *state_name(tstate_t s)
{
    return s == T_RUNNING ? "running" : s == T_PAUSED ? "paused" : "failed";
}

static void json_str(floe_buf_t *b, const char *s)
{
    floe_buf_append_u8(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') floe_buf_printf(b, "\\%c", c);
        else if (c < 0x20)
            floe_buf_printf(b, "\\u%04x", c);
        else
            floe_buf_append_u8(b, c);
    }
    floe_buf_append_u8(b, '"');
}

/* Seconds the oldest record not yet in a snapshot has waited: from its
 * timestamp once read, from when the engine saw it arrive before that;
 * 0 when the table holds everything in the log. */
static double freshness_lag_s(const floe_tpart_t *p, int64_t committed, int64_t now_ms)
{
    if (p->log_end <= (committed >= 0 ? committed : p->log_start)) return 0;
    int64_t since = p->pending_ts_ms >= 0 ? p->pending_ts_ms : p->behind_since_ms;
    return since >= 0 && now_ms > since ? (double)(now_ms - since) / 1000.0 : 0;
}

static int64_t lag_offsets(const floe_tpart_t *p, int64_t committed)
{
    int64_t lag = p->log_end - (committed >= 0 ? committed : p->log_start);
    return lag > 0 ? lag : 0;
}

/* Metric families, each printed whole (Prometheus wants a family's samples
 * together): per partition first, then per table. */
enum {
    PM_RECORDS,
    PM_BYTES,
    PM_DLQ,
    PM_DROPPED,
    PM_LAG,
    PM_FRESH,
    PM_BUFFERED,
    PM_NPART,
    TM_COMMITS = 0,
    TM_FAILURES,
    TM_LATENCY,
    TM_FILES,
    TM_FBYTES,
    TM_PAUSED,
    TM_STATE,
    TM_REASON,
    TM_NTABLE
};

static const struct family {
    const char *name, *type, *help;
} part_families[PM_NPART] =
    {
        {"floe_table_records_total", "counter", "Records converted into the table."},
        {"floe_table_bytes_total", "counter", "Key and value bytes of the records converted."},
        {"floe_table_dlq_records_total", "counter", "Records sent to the dead-letter table."},
        {"floe_table_dropped_records_total", "counter", "Invalid records dropped (action drop)."},
        {"floe_table_lag_offsets", "gauge", "Records in the log not yet in a committed snapshot."},
        {"floe_table_freshness_lag_seconds", "gauge",
         "Age of the oldest record not yet in a committed snapshot (0 when caught up)."},
        {"floe_table_buffered_bytes", "gauge",
         "Bytes the partition holds: its L1 buffer and open row groups not yet written."},
},
  table_families[TM_NTABLE] = {
      {"floe_table_commits_total", "counter", "Snapshots committed."},
      {"floe_table_commit_failures_total", "counter",
       "Commits that failed and were retried from the table."},
      {"floe_table_commit_latency_ms", "gauge",
       "Duration of the last commit, sealing files included."},
      {"floe_table_files_written_total", "counter", "Data files closed by the pipeline."},
      {"floe_table_bytes_written_total", "counter", "Bytes of the data files closed."},
      {"floe_table_paused", "gauge", "1 when the table stopped on an error (see its reason)."},
      {"floe_table_state", "gauge", "1 for the table's pipeline state."},
      {"floe_table_pause_reason", "gauge",
       "1, labelled with why the table stopped (paused tables only)."},
};

/* A Prometheus label value: backslash, quote and newline escaped. */
static void label_value(floe_buf_t *m, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"') floe_buf_printf(m, "\\%c", *s);
        else if (*s == '\n')
            floe_buf_append_str(m, "\\n");
        else
            floe_buf_append_u8(m, (uint8_t)*s);
    }
}

static void snapshot_status(floe_engine_t *e)
{
    floe_buf_t js = FLOE_BUF_INIT, m = FLOE_BUF_INIT;
    int64_t now = floe_wall_ms();
    floe_buf_append_str(&js, "{\"tables\":[");
    for (size_t i = 0; i < e->ntables; i++) {
        floe_ttable_t *t = e->tables[i];
        char tn[450];
        snprintf(tn, sizeof tn, "%s.%s", t->main.ns, t->main.name);
        floe_buf_printf(&js, "%s{\"topic\":", i ? "," : "");
        json_str(&js, t->topic);
        floe_buf_append_str(&js, ",\"table\":");
        json_str(&js, tn);
        floe_buf_printf(&js, ",\"dlq_table\":\"%s.%s\",\"state\":\"%s\",\"reason\":", t->dlq.ns,
                        t->dlq.name, state_name(t->state));
        json_str(&js, t->reason);
        floe_buf_printf(
            &js,
            ",\"config\":{\"value_converter\":\"%s\",\"key_converter\":\"%s\","
            "\"invalid_record_action\":\"%s\",\"json_infer_timestamps\":%s,"
            "\"json_coerce\":%s,\"commit_interval_ms\":%lld,\"partition_by\":",
            floe_conv_kind_name(t->cfg.value_conv), floe_conv_kind_name(t->cfg.key_conv),
            floe_invalid_action_name(t->cfg.invalid_action),
            t->cfg.json_infer_timestamps ? "true" : "false", t->cfg.json_coerce ? "true" : "false",
            (long long)t->cfg.commit_interval_ms);
        json_str(&js, t->cfg.partition_by);
        floe_buf_append_u8(&js, '}');
        floe_buf_printf(&js,
                        ",\"commits\":%llu,\"commit_failures\":%llu,\"last_commit_ms\":%lld,"
                        "\"last_commit_latency_ms\":%lld,\"files_written\":%llu,"
                        "\"bytes_written\":%llu,\"pending_files\":%zu,\"partitions\":[",
                        (unsigned long long)t->commits, (unsigned long long)t->commit_failures,
                        (long long)t->last_commit_ms, (long long)t->last_commit_latency_ms,
                        (unsigned long long)t->files_written, (unsigned long long)t->bytes_written,
                        t->main.npending);
        for (int32_t k = 0; k < t->nparts; k++) {
            floe_tpart_t *p = t->parts[k];
            int64_t c = t->main.committed ? t->main.committed[k] : -1;
            floe_buf_printf(
                &js,
                "%s{\"partition\":%d,\"committed\":%lld,\"read\":%lld,\"log_start\":%lld,"
                "\"log_end\":%lld,\"lag\":%lld,\"freshness_lag_s\":%.3f,\"records\":%llu,"
                "\"bytes\":%llu,\"dlq\":%llu,\"dropped\":%llu,\"buffered_rows\":%zu,"
                "\"buffered_bytes\":%zu}",
                k ? "," : "", (int)k, (long long)c, (long long)p->next, (long long)p->log_start,
                (long long)p->log_end, (long long)lag_offsets(p, c), freshness_lag_s(p, c, now),
                (unsigned long long)p->records, (unsigned long long)p->bytes,
                (unsigned long long)p->dlq_records, (unsigned long long)p->dropped,
                floe_rows_count(p->main.rows), (size_t)floe_tpart_buffered(p));
        }
        floe_buf_append_str(&js, "]}");
    }
    floe_buf_append_str(&js, "]}");

    for (int f = 0; f < PM_NPART; f++) {
        floe_buf_printf(&m, "# HELP %s %s\n# TYPE %s %s\n", part_families[f].name,
                        part_families[f].help, part_families[f].name, part_families[f].type);
        for (size_t i = 0; i < e->ntables; i++) {
            floe_ttable_t *t = e->tables[i];
            for (int32_t k = 0; k < t->nparts; k++) {
                floe_tpart_t *p = t->parts[k];
                int64_t c = t->main.committed ? t->main.committed[k] : -1;
                floe_buf_printf(&m, "%s{table=\"%s.%s\",partition=\"%d\"} ", part_families[f].name,
                                t->main.ns, t->main.name, (int)k);
                switch (f) {
                case PM_RECORDS:
                    floe_buf_printf(&m, "%llu\n", (unsigned long long)p->records);
                    break;
                case PM_BYTES: floe_buf_printf(&m, "%llu\n", (unsigned long long)p->bytes); break;
                case PM_DLQ:
                    floe_buf_printf(&m, "%llu\n", (unsigned long long)p->dlq_records);
                    break;
                case PM_DROPPED:
                    floe_buf_printf(&m, "%llu\n", (unsigned long long)p->dropped);
                    break;
                case PM_LAG: floe_buf_printf(&m, "%lld\n", (long long)lag_offsets(p, c)); break;
                case PM_FRESH: floe_buf_printf(&m, "%.3f\n", freshness_lag_s(p, c, now)); break;
                default:
                    floe_buf_printf(&m, "%llu\n", (unsigned long long)floe_tpart_buffered(p));
                    break;
                }
            }
        }
    }
    for (int f = 0; f < TM_NTABLE; f++) {
        floe_buf_printf(&m, "# HELP %s %s\n# TYPE %s %s\n", table_families[f].name,
                        table_families[f].help, table_families[f].name, table_families[f].type);
        for (size_t i = 0; i < e->ntables; i++) {
            floe_ttable_t *t = e->tables[i];
            if (f == TM_REASON && t->state == T_RUNNING) continue;
            floe_buf_printf(&m, "%s{table=\"%s.%s\"", table_families[f].name, t->main.ns,
                            t->main.name);
            switch (f) {
            case TM_COMMITS: floe_buf_printf(&m, "} %llu\n", (unsigned long long)t->commits); break;
            case TM_FAILURES:
                floe_buf_printf(&m, "} %llu\n", (unsigned long long)t->commit_failures);
                break;
            case TM_LATENCY:
                floe_buf_printf(&m, "} %lld\n", (long long)t->last_commit_latency_ms);
                break;
            case TM_FILES:
                floe_buf_printf(&m, "} %llu\n", (unsigned long long)t->files_written);
                break;
            case TM_FBYTES:
                floe_buf_printf(&m, "} %llu\n", (unsigned long long)t->bytes_written);
                break;
            case TM_PAUSED: floe_buf_printf(&m, "} %d\n", t->state != T_RUNNING); break;
            case TM_REASON:
                floe_buf_append_str(&m, ",reason=\"");
                label_value(&m, t->reason);
                floe_buf_append_str(&m, "\"} 1\n");
                break;
            default: floe_buf_printf(&m, ",state=\"%s\"} 1\n", state_name(t->state)); break;
            }
        }
    }
    pthread_mutex_lock(&e->mu);
    floe_buf_free(&e->status);
    floe_buf_free(&e->metrics);
    e->status = js;
    e->metrics = m;
    pthread_mutex_unlock(&e->mu);
}

int floe_engine_status_json(floe_engine_t *e, floe_buf_t *out)
{
    pthread_mutex_lock(&e->mu);
    int rc = e->status.len ? floe_buf_append(out, e->status.data, e->status.len)
                           : floe_buf_append_str(out, "{\"tables\":[]}");
    pthread_mutex_unlock(&e->mu);
    return rc;
}

int floe_engine_metrics(floe_engine_t *e, floe_buf_t *out)
{
    pthread_mutex_lock(&e->mu);
    int rc = floe_buf_append(out, e->metrics.data, e->metrics.len);
    pthread_mutex_unlock(&e->mu);
    return rc;
}

/* ---- re-drive ------------------------------------------------------------------ */

static int64_t round_(floe_engine_t *e, bool drain, bool force_commit);

struct redrive_req {
    const char *name;
    floe_buf_t *out;
    floe_err_t err;
    int rc;
    bool done;
};

static void redrive_now(floe_engine_t *e, struct redrive_req *rq)
{
    floe_ttable_t *t = NULL;
    for (size_t i = 0; i < e->ntables && !t; i++) {
        char tn[450];
        snprintf(tn, sizeof tn, "%s.%s", e->tables[i]->main.ns, e->tables[i]->main.name);
        bool bare =
            !strcmp(e->tables[i]->main.ns, "default") && !strcmp(rq->name, e->tables[i]->main.name);
        if (bare || !strcmp(rq->name, tn) || !strcmp(rq->name, e->tables[i]->topic))
            t = e->tables[i];
    }
    if (!t) {
        rq->rc = floe_err_set(&rq->err, FLOE_ENOENT,
                              "no table topic '%s' (name a topic or "
                              "namespace.table)",
                              rq->name);
        return;
    }
    floe_redrive_result_t r;
    rq->rc = floe_ttable_redrive(t, &r, &rq->err);
    if (rq->rc == 0 &&
        floe_buf_printf(rq->out,
                        "{\"table\":\"%s\",\"redrive_id\":\"%s\",\"examined\":%llu,\"moved\":%llu,"
                        "\"still_invalid\":%llu,\"undecodable\":%llu,\"files_rewritten\":%llu,"
                        "\"finished_earlier\":%llu}",
                        r.table, r.redrive_id, (unsigned long long)r.examined,
                        (unsigned long long)r.moved, (unsigned long long)r.still_invalid,
                        (unsigned long long)r.undecodable, (unsigned long long)r.files_rewritten,
                        (unsigned long long)r.finished_earlier) < 0)
        rq->rc = floe_err_oom(&rq->err);
    snapshot_status(e);
}

int floe_engine_redrive(floe_engine_t *e, const char *name, floe_buf_t *out, floe_err_t *err)
{
    struct redrive_req rq = {.name = name, .out = out};
    if (!e->running) {
        e->next_discover_ms = 0;
        round_(e, true, false); /* find the tables and read what there is */
        redrive_now(e, &rq);
    } else {
        pthread_mutex_lock(&e->mu);
        while (e->redrive && !e->stop) pthread_cond_wait(&e->cv, &e->mu); /* one at a time */
        if (e->stop) {
            pthread_mutex_unlock(&e->mu);
            return floe_err_set(err, FLOE_ECLOSED, "the table engine is stopping");
        }
        e->redrive = &rq;
        pthread_cond_broadcast(&e->cv);
        while (!rq.done) pthread_cond_wait(&e->cv, &e->mu);
        e->redrive = NULL;
        pthread_cond_broadcast(&e->cv);
        pthread_mutex_unlock(&e->mu);
    }
    if (rq.rc < 0) *err = rq.err;
    return rq.rc;
}

/* ---- rounds --------------------------------------------------------------------- */

/* Step every partition once (until caught up when drain), commit what is
 * due.  Returns records converted. */
static int64_t round_(floe_engine_t *e, bool drain, bool force_commit)
{
    int64_t now = floe_mono_ms();
    if (now >= e->next_discover_ms) {
        discover(e);
        e->next_discover_ms = now + e->cfg.discover_ms;
    }
    int64_t total = 0;
    for (size_t i = 0; i < e->ntables; i++) {
        floe_ttable_t *t = e->tables[i];
        for (int32_t k = 0; k < t->nparts && t->state == T_RUNNING; k++) {
            floe_err_t err;
            int64_t n;
            do {
                n = floe_tpart_step(t->parts[k], &err);
                if (n < 0) {
                    t->state = T_PAUSED;
                    snprintf(t->reason, sizeof t->reason, "partition %d: %s", (int)k, err.msg);
                    FLOE_ERROR("table %s.%s paused: %s", t->main.ns, t->main.name, t->reason);
                    break;
                }
                total += n;
            } while (drain && n > 0);
        }
        if (force_commit || floe_mono_ms() >= t->next_commit_ms) {
            floe_err_t err;
            floe_ttable_commit(t, &err); /* failures logged and counted there */
            t->next_commit_ms = floe_mono_ms() + t->cfg.commit_interval_ms;
        }
    }
    snapshot_status(e);
    return total;
}

int64_t floe_engine_run_once(floe_engine_t *e, bool force_commit, floe_err_t *err)
{
    (void)err;
    e->next_discover_ms = 0;
    return round_(e, true, force_commit);
}

static void *thread_main(void *arg)
{
    floe_engine_t *e = arg;
    FLOE_INFO("table engine started");
    for (;;) {
        pthread_mutex_lock(&e->mu);
        bool stop = e->stop;
        pthread_mutex_unlock(&e->mu);
        if (stop) break;
        int64_t n = round_(e, false, false);
        pthread_mutex_lock(&e->mu);
        struct redrive_req *rq = e->redrive && !e->redrive->done ? e->redrive : NULL;
        pthread_mutex_unlock(&e->mu);
        if (rq) {
            redrive_now(e, rq);
            pthread_mutex_lock(&e->mu);
            rq->done = true;
            pthread_cond_broadcast(&e->cv);
            pthread_mutex_unlock(&e->mu);
            continue;
        }
        if (n == 0) {
            pthread_mutex_lock(&e->mu);
            if (!e->stop && !e->redrive) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_nsec += 10 * 1000000;
                if (ts.tv_nsec >= 1000000000) {
                    ts.tv_sec++;
                    ts.tv_nsec -= 1000000000;
                }
                pthread_cond_timedwait(&e->cv, &e->mu, &ts);
            }
            pthread_mutex_unlock(&e->mu);
        }
    }
    /* a re-drive asked for while stopping is refused, not left waiting */
    pthread_mutex_lock(&e->mu);
    if (e->redrive && !e->redrive->done) {
        e->redrive->rc =
            floe_err_set(&e->redrive->err, FLOE_ECLOSED, "the table engine is stopping");
        e->redrive->done = true;
        pthread_cond_broadcast(&e->cv);
    }
    pthread_mutex_unlock(&e->mu);
    /* a last commit of what is buffered: a clean stop loses no progress */
    for (size_t i = 0; i < e->ntables; i++) {
        floe_err_t err;
        if (e->tables[i]->state != T_FAILED) floe_ttable_commit(e->tables[i], &err);
    }
    snapshot_status(e);
    FLOE_INFO("table engine stopped");
    return NULL;
}

int floe_engine_start(floe_engine_t *e, floe_err_t *err)
{
    if (e->running) return 0;
    e->stop = false;
    int rc = pthread_create(&e->thread, NULL, thread_main, e);
    if (rc != 0) return floe_err_errno(err, rc, "starting the table engine thread");
    e->running = true;
    return 0;
}

void floe_engine_stop(floe_engine_t *e)
{
    if (!e || !e->running) return;
    pthread_mutex_lock(&e->mu);
    e->stop = true;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
    pthread_join(e->thread, NULL);
    e->running = false;
}

void floe_engine_free(floe_engine_t *e)
{
    if (!e) return;
    floe_engine_stop(e);
    for (size_t i = 0; i < e->ntables; i++) table_free(e->tables[i]);
    free(e->tables);
    floe_buf_free(&e->status);
    floe_buf_free(&e->metrics);
    floe_buf_free(&e->readbuf);
    floe_buf_free(&e->scratch);
    floe_pq_scratch_free(e->pq_scratch);
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
    free(e);
}
