/* The log cleaner thread (broker.h): compacts the partitions of topics
 * whose cleanup.policy holds compact (log.h floe_log_clean), one
 * partition at a time, every cleaner_backoff_ms, at a low CPU priority.
 * Topic deletion waits for the partition being cleaned (clean_mu).  A
 * partition with a retention floor (a table topic) is compacted only below
 * it; the loop's tick asks the floor (t->clean_floor). */
#include <inttypes.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "kafka/broker_int.h"
#include "util/clock.h"
#include "util/diag.h"

#define DEFAULT_BACKOFF_MS 15000

/* Is t still in the registry?  It may have been deleted since the
 * snapshot: its pointer is compared, and used only when it is there.
 * Caller holds b->mu. */
static bool registered(floe_broker_t *b, floe_topic_t *t)
{
    for (int i = 0; i < b->ntopics; i++)
        if (b->topics[i] == t) return true;
    return false;
}

/* Partitions of t when it is registered and compacted, else 0. */
static int32_t compacted_parts(floe_broker_t *b, floe_topic_t *t)
{
    pthread_mutex_lock(&b->mu);
    int32_t n =
        registered(b, t) && (t->logcfg.cleanup_policy & FLOE_LOG_CLEANUP_COMPACT) ? t->nparts : 0;
    pthread_mutex_unlock(&b->mu);
    return n;
}

/* Partition p's log when t is registered and compacted (and its floor),
 * else NULL. */
static floe_log_t *live_log(floe_broker_t *b, floe_topic_t *t, int32_t p, int64_t *floor)
{
    floe_log_t *l = NULL;
    pthread_mutex_lock(&b->mu);
    if (registered(b, t) && (t->logcfg.cleanup_policy & FLOE_LOG_CLEANUP_COMPACT) &&
        p < t->nparts) {
        l = t->logs[p];
        *floor = __atomic_load_n(&t->clean_floor[p], __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&b->mu);
    return l;
}

/* Clean one partition when due; *max_ratio gets the larger of itself and
 * the partition's dirty ratio before the run. */
static void clean_partition(floe_broker_t *b, floe_topic_t *t, int32_t p, double *max_ratio)
{
    /* held to the end: deleting t waits for it, so t stays valid */
    pthread_mutex_lock(&b->clean_mu);
    int64_t floor = 0;
    floe_log_t *l = live_log(b, t, p, &floor);
    if (!l || floor <= 0) {
        pthread_mutex_unlock(&b->clean_mu);
        return;
    }
    double before = floe_log_dirty_ratio(l, floe_wall_ms(), NULL);
    if (before > *max_ratio) *max_ratio = before;
    int64_t t0 = floe_mono_ms();
    floe_log_clean_stats_t st;
    floe_err_t e;
    /* a table topic's log keeps what its table has not taken (design.md
     * invariant 8): only what lies below the table's committed offset */
    floe_log_clean_opts_t o = {.floor = floor};
    int rc = floe_log_clean(l, floe_wall_ms(), &o, &st, &e);
    int64_t ms = floe_mono_ms() - t0;
    double ratio = floe_log_dirty_ratio(l, floe_wall_ms(), NULL);
    pthread_mutex_lock(&b->cmu);
    if (rc < 0) b->cstats.errors++;
    if (rc > 0) {
        b->cstats.runs++;
        b->cstats.bytes_read += st.bytes_before;
        b->cstats.bytes_written += st.bytes_after;
        b->cstats.records_removed += (uint64_t)st.records_removed;
        b->cstats.tombstones_removed += (uint64_t)st.tombstones_removed;
        b->cstats.segments_cleaned += st.segments_cleaned;
        b->cstats.last_run_ms = ms;
    }
    pthread_mutex_unlock(&b->cmu);
    if (rc < 0) FLOE_ERROR("kafka: %s-%d: log cleaner: %s", t->name, (int)p, e.msg);
    else if (rc > 0 && st.segments_cleaned > 0)
        FLOE_INFO("kafka: %s-%d: log cleaned in %" PRId64 " ms: %" PRIu64 " -> %" PRIu64
                  " bytes, %" PRId64 " of %" PRId64 " records removed (%" PRId64
                  " tombstones), %zu segments rewritten, %zu in the log, clean up to offset "
                  "%" PRId64 ", dirty ratio now %.2f",
                  t->name, (int)p, ms, st.bytes_before, st.bytes_after, st.records_removed,
                  st.records_before, st.tombstones_removed, st.segments_cleaned, st.segments_after,
                  st.clean_upto, ratio);
    pthread_mutex_unlock(&b->clean_mu);
}

static void *cleaner_main(void *arg)
{
    floe_broker_t *b = arg;
    /* background work: below the loop and the appenders (per thread) */
    if (setpriority(PRIO_PROCESS, (id_t)gettid(), 10) != 0)
        FLOE_DEBUG("kafka: log cleaner: cannot lower its priority");
    int64_t every = b->cfg.cleaner_backoff_ms > 0 ? b->cfg.cleaner_backoff_ms : DEFAULT_BACKOFF_MS;
    pthread_mutex_lock(&b->cmu);
    while (!b->cleaner_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += every / 1000;
        ts.tv_nsec += (every % 1000) * 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        while (!b->cleaner_stop && pthread_cond_timedwait(&b->ccv, &b->cmu, &ts) == 0) {
        }
        if (b->cleaner_stop) break;
        pthread_mutex_unlock(&b->cmu);
        floe_topic_t **v;
        double max_ratio = 0;
        int n = floe_broker_topics(b, &v);
        for (int i = 0; i < n; i++) {
            int32_t np = compacted_parts(b, v[i]);
            for (int32_t p = 0; p < np; p++) {
                pthread_mutex_lock(&b->cmu);
                bool stop = b->cleaner_stop;
                pthread_mutex_unlock(&b->cmu);
                if (stop) break;
                clean_partition(b, v[i], p, &max_ratio);
            }
        }
        if (n >= 0) free(v);
        pthread_mutex_lock(&b->cmu);
        b->cstats.max_dirty_ratio = max_ratio;
    }
    pthread_mutex_unlock(&b->cmu);
    return NULL;
}

int floe_broker_cleaner_start(floe_broker_t *b, floe_err_t *err)
{
    if (b->cfg.cleaner_disable) return 0;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_destroy(&b->ccv);
    pthread_cond_init(&b->ccv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&b->cleaner, NULL, cleaner_main, b))
        return floe_err_set(err, FLOE_EIO, "cannot start the log cleaner thread");
    b->cleaner_started = true;
    return 0;
}

void floe_broker_cleaner_stop(floe_broker_t *b)
{
    if (!b->cleaner_started) return;
    pthread_mutex_lock(&b->cmu);
    b->cleaner_stop = true;
    pthread_cond_signal(&b->ccv);
    pthread_mutex_unlock(&b->cmu);
    pthread_join(b->cleaner, NULL);
    b->cleaner_started = false;
}

int floe_broker_cleaner_metrics(floe_broker_t *b, floe_buf_t *out)
{
    pthread_mutex_lock(&b->cmu);
    floe_cleaner_stats_t c = b->cstats;
    pthread_mutex_unlock(&b->cmu);
    return floe_buf_printf(
        out,
        "# HELP floe_log_cleaner_runs_total Compacted partition logs cleaned.\n"
        "# TYPE floe_log_cleaner_runs_total counter\nfloe_log_cleaner_runs_total %" PRIu64 "\n"
        "# HELP floe_log_cleaner_errors_total Cleaner runs that failed.\n"
        "# TYPE floe_log_cleaner_errors_total counter\nfloe_log_cleaner_errors_total %" PRIu64 "\n"
        "# HELP floe_log_cleaner_bytes_read_total Bytes of segments the cleaner rewrote, before.\n"
        "# TYPE floe_log_cleaner_bytes_read_total counter\n"
        "floe_log_cleaner_bytes_read_total %" PRIu64 "\n"
        "# HELP floe_log_cleaner_bytes_written_total Bytes of the cleaned segments, after.\n"
        "# TYPE floe_log_cleaner_bytes_written_total counter\n"
        "floe_log_cleaner_bytes_written_total %" PRIu64 "\n"
        "# HELP floe_log_cleaner_records_removed_total Records compaction removed.\n"
        "# TYPE floe_log_cleaner_records_removed_total counter\n"
        "floe_log_cleaner_records_removed_total %" PRIu64 "\n"
        "# HELP floe_log_cleaner_tombstones_removed_total Tombstones removed after "
        "delete.retention.ms.\n"
        "# TYPE floe_log_cleaner_tombstones_removed_total counter\n"
        "floe_log_cleaner_tombstones_removed_total %" PRIu64 "\n"
        "# HELP floe_log_cleaner_segments_cleaned_total Segments replaced by cleaned ones.\n"
        "# TYPE floe_log_cleaner_segments_cleaned_total counter\n"
        "floe_log_cleaner_segments_cleaned_total %" PRIu64 "\n"
        "# HELP floe_log_cleaner_last_run_ms Duration of the last cleaning of a log.\n"
        "# TYPE floe_log_cleaner_last_run_ms gauge\nfloe_log_cleaner_last_run_ms %" PRId64 "\n"
        "# HELP floe_log_cleaner_max_dirty_ratio Highest dirty ratio of a compacted log at the "
        "cleaner's last pass.\n"
        "# TYPE floe_log_cleaner_max_dirty_ratio gauge\n"
        "floe_log_cleaner_max_dirty_ratio %.4f\n",
        c.runs, c.errors, c.bytes_read, c.bytes_written, c.records_removed, c.tombstones_removed,
        c.segments_cleaned, c.last_run_ms, c.max_dirty_ratio);
}
