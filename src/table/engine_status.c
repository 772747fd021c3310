/* The engine's status JSON and Prometheus metrics, built when asked by
 * the thread that owns the tables (engine.h, engine.c). */
#include <stdio.h>

#include "table/engine_int.h"
#include "table/keyidx.h"
#include "table/pipeline.h"
#include "util/clock.h"
#include "util/json.h"

static const char *state_name(const floe_ttable_t *t)
{
    return t->paused ? "paused" : "running";
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

/* Partition p's log end as of now: what its last fetch saw, or later
 * what the source says (a paused table reads nothing, and its lag must
 * grow all the same). */
static void refresh_log_end(const floe_ttable_t *t, floe_tpart_t *p)
{
    if (!t->src->ops->log_end) return;
    int64_t end = t->src->ops->log_end(t->src, t->topic, p->id);
    if (end > p->log_end) p->log_end = end;
}

/* Bytes the source's retention keeps for partition k of t's table. */
static uint64_t retention_blocked(const floe_ttable_t *t, int32_t k)
{
    return t->src->ops->retention_held ? t->src->ops->retention_held(t->src, t->topic, k) : 0;
}

/* Metric families, each printed whole (Prometheus wants a family's samples
 * together): per partition first, then per table. */
enum {
    PM_RECORDS,
    PM_BYTES,
    PM_DLQ,
    PM_DROPPED,
    PM_WIDEN,
    PM_LAG,
    PM_FRESH,
    PM_BUFFERED,
    PM_BLOCKED,
    PM_SKIPPED,
    PM_NPART,
    TM_COMMITS = 0,
    TM_SIZE_COMMITS,
    TM_FAILURES,
    TM_LATENCY,
    TM_FILES,
    TM_FBYTES,
    TM_UNCOMMITTED,
    TM_PAUSED,
    TM_PAUSES,
    TM_SINCE,
    TM_STATE,
    TM_REASON,
    TM_INDEX_KEYS,
    TM_INDEX_MEM,
    TM_INDEX_DISK,
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
        {"floe_table_widen_refused_total", "counter",
         "Records refused (to the dead-letter table, or dropped) because a fraction arrived for a "
         "long column that may not widen: a partition source, or a table whose data is above "
         "table.json.widen.max.bytes."},
        {"floe_table_lag_offsets", "gauge", "Records in the log not yet in a committed snapshot."},
        {"floe_table_freshness_lag_seconds", "gauge",
         "Age of the oldest record not yet in a committed snapshot (0 when caught up)."},
        {"floe_table_buffered_bytes", "gauge",
         "Bytes the partition holds: its L1 buffer and open row groups not yet written."},
        {"floe_table_retention_blocked_bytes", "gauge",
         "Bytes log retention wanted to delete at its last run but kept because the table has "
         "not committed them."},
        {"floe_table_retention_skipped_records_total", "counter",
         "Records deleted from the log before the table read them (past "
         "table.retention.max.lag.bytes); each range is a row in the dead-letter table."},
},
  table_families[TM_NTABLE] = {
      {"floe_table_commits_total", "counter", "Snapshots committed."},
      {"floe_table_size_commits_total", "counter",
       "Commits made before their interval because table.commit.max.bytes were written."},
      {"floe_table_commit_failures_total", "counter",
       "Commits that failed and were retried from the table."},
      {"floe_table_commit_latency_ms", "gauge",
       "Duration of the last commit, sealing files included."},
      {"floe_table_files_written_total", "counter", "Data files closed by the pipeline."},
      {"floe_table_bytes_written_total", "counter", "Bytes of the data files closed."},
      {"floe_table_uncommitted_bytes", "gauge",
       "Bytes of data files written since the last commit (closed and open)."},
      {"floe_table_paused", "gauge",
       "1 when the table stopped, on an error or on purpose (see its reason)."},
      {"floe_table_pauses_total", "counter", "Times the table paused."},
      {"floe_table_paused_since_seconds", "gauge",
       "When the table paused, in seconds since the epoch (paused tables only)."},
      {"floe_table_state", "gauge", "1 for the table's pipeline state."},
      {"floe_table_pause_reason", "gauge",
       "1, labelled with why the table stopped and the kind of cause (paused tables only)."},
      {"floe_table_key_index_keys", "gauge",
       "Live keys in the key index of a position-mode upsert table (tables holding one only)."},
      {"floe_table_key_index_memory_bytes", "gauge",
       "Memory the key index holds, at most table.upsert.index.memory.bytes when it has a state "
       "directory."},
      {"floe_table_key_index_disk_bytes", "gauge",
       "Bytes of the key index's page file (0 while every key fits in memory)."},
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

/* The maintenance thread's figures of t's tables (maint.h). */
static void maintenance_json(floe_ttable_t *t, floe_buf_t *js)
{
    floe_tmaint_status_json(t->maint_main, "maintenance", js);
    floe_tmaint_status_json(t->maint_dlq, "dlq_maintenance", js);
    floe_buf_printf(js, ",\"widening_fence\":%s", t->fenced ? "true" : "false");
}

void floe_engine_state_json(floe_buf_t *js, const floe_ttable_t *t)
{
    floe_buf_printf(js, "\"state\":\"%s\",\"reason\":", state_name(t));
    floe_json_cstr(js, t->reason);
    floe_buf_printf(js, ",\"pause_kind\":\"%s\",\"paused_since_ms\":%lld",
                    floe_tpause_name(t->paused), (long long)t->paused_since_ms);
}

void floe_engine_status_build(floe_engine_t *e, floe_buf_t *js, floe_buf_t *m)
{
    int64_t now = floe_wall_ms();
    floe_buf_append_str(js, "{\"tables\":[");
    for (size_t i = 0; i < e->ntables; i++) {
        floe_ttable_t *t = e->tables[i];
        char tn[450];
        snprintf(tn, sizeof tn, "%s.%s", t->main.ns, t->main.name);
        floe_buf_printf(js, "%s{\"topic\":", i ? "," : "");
        floe_json_cstr(js, t->topic);
        floe_buf_append_str(js, ",\"table\":");
        floe_json_cstr(js, tn);
        floe_buf_printf(js, ",\"dlq_table\":\"%s.%s\",", t->dlq.ns, t->dlq.name);
        floe_engine_state_json(js, t);
        floe_buf_printf(
            js,
            ",\"config\":{\"value_converter\":\"%s\",\"key_converter\":\"%s\","
            "\"invalid_record_action\":\"%s\",\"json_infer_timestamps\":%s,"
            "\"json_coerce\":%s,\"commit_interval_ms\":%lld,\"commit_max_bytes\":%llu,"
            "\"json_widen_max_bytes\":%llu,\"partition_by\":",
            floe_conv_kind_name(t->cfg.value_conv), floe_conv_kind_name(t->cfg.key_conv),
            floe_invalid_action_name(t->cfg.invalid_action),
            t->cfg.json_infer_timestamps ? "true" : "false", t->cfg.json_coerce ? "true" : "false",
            (long long)t->cfg.commit_interval_ms, (unsigned long long)t->cfg.commit_max_bytes,
            (unsigned long long)t->cfg.json_widen_max_bytes);
        floe_json_cstr(js, t->cfg.partition_by);
        floe_buf_append_u8(js, '}');
        floe_buf_printf(
            js,
            ",\"commits\":%llu,\"size_commits\":%llu,\"commit_failures\":%llu,"
            "\"last_commit_ms\":%lld,\"last_commit_latency_ms\":%lld,"
            "\"files_written\":%llu,\"bytes_written\":%llu,\"pending_files\":%zu,"
            "\"uncommitted_bytes\":%llu,\"pauses\":%llu",
            (unsigned long long)t->commits, (unsigned long long)t->size_commits,
            (unsigned long long)t->commit_failures, (long long)t->last_commit_ms,
            (long long)t->last_commit_latency_ms, (unsigned long long)t->files.files_written,
            (unsigned long long)t->files.bytes_written, t->main.npending,
            (unsigned long long)floe_ttable_uncommitted_bytes(t), (unsigned long long)t->pauses);
        maintenance_json(t, js);
        if (t->keyidx)
            floe_buf_printf(js,
                            ",\"key_index\":{\"keys\":%zu,\"memory_bytes\":%zu,\"disk_bytes\":%zu,"
                            "\"rebuilds\":%llu}",
                            floe_tkeyidx_count(t->keyidx), floe_tkeyidx_mem(t->keyidx),
                            floe_tkeyidx_disk(t->keyidx), (unsigned long long)t->index_rebuilds);
        floe_buf_append_str(js, ",\"partitions\":[");
        for (int32_t k = 0; k < t->nparts; k++) {
            floe_tpart_t *p = t->parts[k];
            int64_t c = t->main.committed ? t->main.committed[k] : -1;
            refresh_log_end(t, p);
            floe_buf_printf(
                js,
                "%s{\"partition\":%d,\"committed\":%lld,\"read\":%lld,\"log_start\":%lld,"
                "\"log_end\":%lld,\"lag\":%lld,\"freshness_lag_s\":%.3f,\"records\":%llu,"
                "\"bytes\":%llu,\"dlq\":%llu,\"dropped\":%llu,\"widen_refused\":%llu,"
                "\"buffered_rows\":%zu,\"buffered_bytes\":%zu,\"retention_blocked_bytes\":%llu,"
                "\"retention_skipped_records\":%llu}",
                k ? "," : "", (int)k, (long long)c, (long long)p->next, (long long)p->log_start,
                (long long)p->log_end, (long long)lag_offsets(p, c), freshness_lag_s(p, c, now),
                (unsigned long long)p->records, (unsigned long long)p->bytes,
                (unsigned long long)p->dlq_records, (unsigned long long)p->dropped,
                (unsigned long long)p->widen_refused, floe_rows_count(p->main.rows),
                (size_t)floe_tpart_buffered(p),
                (unsigned long long)(p->retention_blocked = retention_blocked(t, k)),
                (unsigned long long)p->retention_skipped);
        }
        floe_buf_append_str(js, "]}");
    }
    for (size_t i = 0; i < e->nbadcfg; i++) {
        floe_buf_append_str(js, e->ntables + i ? ",{\"topic\":" : "{\"topic\":");
        floe_json_cstr(js, e->badcfg[i].topic);
        floe_buf_append_str(js, ",\"table\":");
        floe_json_cstr(js, e->badcfg[i].table);
        floe_buf_append_str(js, ",\"state\":\"paused\",\"reason\":");
        floe_json_cstr(js, e->badcfg[i].reason);
        floe_buf_append_str(js, ",\"pause_kind\":\"config\",\"partitions\":[]}");
    }
    floe_buf_printf(js, "],\"engine\":{\"steps\":%llu,\"rounds\":%llu}}",
                    (unsigned long long)e->steps, (unsigned long long)e->rounds);

    for (int f = 0; f < PM_NPART; f++) {
        floe_buf_printf(m, "# HELP %s %s\n# TYPE %s %s\n", part_families[f].name,
                        part_families[f].help, part_families[f].name, part_families[f].type);
        for (size_t i = 0; i < e->ntables; i++) {
            floe_ttable_t *t = e->tables[i];
            for (int32_t k = 0; k < t->nparts; k++) {
                floe_tpart_t *p = t->parts[k];
                int64_t c = t->main.committed ? t->main.committed[k] : -1;
                floe_buf_printf(m, "%s{table=\"%s.%s\",partition=\"%d\"} ", part_families[f].name,
                                t->main.ns, t->main.name, (int)k);
                switch (f) {
                case PM_RECORDS:
                    floe_buf_printf(m, "%llu\n", (unsigned long long)p->records);
                    break;
                case PM_BYTES: floe_buf_printf(m, "%llu\n", (unsigned long long)p->bytes); break;
                case PM_DLQ:
                    floe_buf_printf(m, "%llu\n", (unsigned long long)p->dlq_records);
                    break;
                case PM_DROPPED:
                    floe_buf_printf(m, "%llu\n", (unsigned long long)p->dropped);
                    break;
                case PM_WIDEN:
                    floe_buf_printf(m, "%llu\n", (unsigned long long)p->widen_refused);
                    break;
                case PM_LAG: floe_buf_printf(m, "%lld\n", (long long)lag_offsets(p, c)); break;
                case PM_FRESH: floe_buf_printf(m, "%.3f\n", freshness_lag_s(p, c, now)); break;
                case PM_BLOCKED:
                    floe_buf_printf(m, "%llu\n", (unsigned long long)p->retention_blocked);
                    break;
                case PM_SKIPPED:
                    floe_buf_printf(m, "%llu\n", (unsigned long long)p->retention_skipped);
                    break;
                default:
                    floe_buf_printf(m, "%llu\n", (unsigned long long)floe_tpart_buffered(p));
                    break;
                }
            }
        }
    }
    for (int f = 0; f < TM_NTABLE; f++) {
        floe_buf_printf(m, "# HELP %s %s\n# TYPE %s %s\n", table_families[f].name,
                        table_families[f].help, table_families[f].name, table_families[f].type);
        for (size_t i = 0; i < e->ntables; i++) {
            floe_ttable_t *t = e->tables[i];
            if ((f == TM_REASON || f == TM_SINCE) && !t->paused) continue;
            if (f >= TM_INDEX_KEYS && !t->keyidx) continue;
            floe_buf_printf(m, "%s{table=\"%s.%s\"", table_families[f].name, t->main.ns,
                            t->main.name);
            switch (f) {
            case TM_COMMITS: floe_buf_printf(m, "} %llu\n", (unsigned long long)t->commits); break;
            case TM_SIZE_COMMITS:
                floe_buf_printf(m, "} %llu\n", (unsigned long long)t->size_commits);
                break;
            case TM_FAILURES:
                floe_buf_printf(m, "} %llu\n", (unsigned long long)t->commit_failures);
                break;
            case TM_LATENCY:
                floe_buf_printf(m, "} %lld\n", (long long)t->last_commit_latency_ms);
                break;
            case TM_FILES:
                floe_buf_printf(m, "} %llu\n", (unsigned long long)t->files.files_written);
                break;
            case TM_FBYTES:
                floe_buf_printf(m, "} %llu\n", (unsigned long long)t->files.bytes_written);
                break;
            case TM_UNCOMMITTED:
                floe_buf_printf(m, "} %llu\n",
                                (unsigned long long)floe_ttable_uncommitted_bytes(t));
                break;
            case TM_PAUSED: floe_buf_printf(m, "} %d\n", t->paused != FLOE_TPAUSE_NONE); break;
            case TM_PAUSES: floe_buf_printf(m, "} %llu\n", (unsigned long long)t->pauses); break;
            case TM_SINCE:
                floe_buf_printf(m, "} %.3f\n", (double)t->paused_since_ms / 1000.0);
                break;
            case TM_REASON:
                floe_buf_append_str(m, ",reason=\"");
                label_value(m, t->reason);
                floe_buf_printf(m, "\",kind=\"%s\"} 1\n", floe_tpause_name(t->paused));
                break;
            case TM_INDEX_KEYS: floe_buf_printf(m, "} %zu\n", floe_tkeyidx_count(t->keyidx)); break;
            case TM_INDEX_MEM: floe_buf_printf(m, "} %zu\n", floe_tkeyidx_mem(t->keyidx)); break;
            case TM_INDEX_DISK: floe_buf_printf(m, "} %zu\n", floe_tkeyidx_disk(t->keyidx)); break;
            default: floe_buf_printf(m, ",state=\"%s\"} 1\n", state_name(t)); break;
            }
        }
        for (size_t i = 0; i < e->nbadcfg; i++) {
            if (f != TM_PAUSED && f != TM_STATE && f != TM_REASON) break;
            floe_buf_printf(m, "%s{table=\"", table_families[f].name);
            label_value(m, e->badcfg[i].table);
            if (f == TM_PAUSED) {
                floe_buf_append_str(m, "\"} 1\n");
            } else if (f == TM_STATE) {
                floe_buf_append_str(m, "\",state=\"paused\"} 1\n");
            } else {
                floe_buf_append_str(m, "\",reason=\"");
                label_value(m, e->badcfg[i].reason);
                floe_buf_append_str(m, "\",kind=\"config\"} 1\n");
            }
        }
    }
    floe_tmaint_metrics(e->maint, m);
    floe_buf_printf(m,
                    "# HELP floe_table_engine_steps_total Partition steps the table engine took "
                    "(a fetch each): flat while no records arrive.\n"
                    "# TYPE floe_table_engine_steps_total counter\n"
                    "floe_table_engine_steps_total %llu\n"
                    "# HELP floe_table_engine_rounds_total Rounds the table engine ran: one per "
                    "wake-up (news, a commit or discovery due, a request).\n"
                    "# TYPE floe_table_engine_rounds_total counter\n"
                    "floe_table_engine_rounds_total %llu\n",
                    (unsigned long long)e->steps, (unsigned long long)e->rounds);
}
