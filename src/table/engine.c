/* The engine thread: finds table topics, opens their tables (finishing an
 * interrupted re-drive) and hands them to the maintenance thread
 * (maint.h), steps the partitions that have news or more to read, commits
 * each table on its interval or once enough is written, asks for
 * widenings and follows them (widen.h), runs the requests (re-drive,
 * pause, resume) and builds the status when asked (engine_status.c).
 * With nothing arriving it sleeps until the next commit or discovery is
 * due: no work per partition. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/metadata.h"
#include "table/commit.h"
#include "table/engine_int.h"
#include "table/keyidx.h"
#include "table/redrive.h"
#include "table/widen.h"
#include "util/clock.h"
#include "util/diag.h"
#include "util/mem.h"

/* Most a requester waits for the engine thread to build the status: a
 * long commit holds it, and then the status built last is served. */
#define STATUS_WAIT_MS 2000
/* A source without news is polled: every partition, this often at most. */
#define POLL_MS 10

/* ms from now on the clock pthread_cond_timedwait reads. */
static struct timespec deadline(int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)(ms / 1000);
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
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
    e->rediscover = true;
    if (!(e->pq_scratch = floe_pq_scratch_new()) ||
        !(e->maint = floe_tmaint_new(cfg->catalog, err))) {
        floe_pq_scratch_free(e->pq_scratch);
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
    floe_tmaint_detach(t->maint_main);
    floe_tmaint_detach(t->maint_dlq);
    free(t->wide);
    free(t->nowiden);
    for (int32_t i = 0; i < t->nparts; i++) floe_tpart_free(t->parts[i]);
    free(t->parts);
    floe_tout_clear(&t->main);
    floe_tout_clear(&t->dlq);
    floe_tkeyidx_free(t->keyidx);
    floe_tupsert_parts_free(t->upparts);
    free(t->topic);
    free(t);
}

/* A running table of topic with configuration cfg, no partitions yet.
 * NULL when out of memory. */
static floe_ttable_t *table_new(floe_engine_t *e, const char *topic, const floe_table_config_t *cfg)
{
    floe_ttable_t *t = calloc(1, sizeof *t);
    if (!t || !(t->topic = strdup(topic))) {
        free(t);
        return NULL;
    }
    t->cfg = *cfg;
    t->catalog = e->cfg.catalog;
    t->maint = e->maint;
    t->src = e->src;
    t->schemas = e->cfg.schemas;
    t->read_bytes = e->cfg.read_bytes;
    t->shared = e->cfg.shared;
    t->state_dir = e->cfg.state_dir;
    floe_ice_uuid4(t->writer_id); /* names this run's files */
    t->files = (floe_tsink_env_t){.io = floe_ice_catalog_io(e->cfg.catalog),
                                  .pq_scratch = e->pq_scratch,
                                  .cfg = &t->cfg,
                                  .writer_id = t->writer_id};
    t->seen = true;
    t->next_commit_ms = floe_mono_ms() + cfg->commit_interval_ms;
    return t;
}

/* ---- scheduling: partitions to step, tables to commit ---------------------- */

/* Step p in the next round (once, however often asked). */
static void mark_ready(floe_engine_t *e, floe_tpart_t *p)
{
    if (p->ready) return;
    if (floe_grow(&e->ready, &e->capready, e->nready + 1, sizeof *e->ready) < 0) {
        FLOE_WARN("table engine: out of memory listing partition %d of %s to read; it waits "
                  "for its next records",
                  (int)p->id, p->t->topic);
        return;
    }
    e->ready[e->nready++] = p;
    p->ready = true;
}

static void mark_table_ready(floe_engine_t *e, floe_ttable_t *t)
{
    for (int32_t i = 0; i < t->nparts; i++) mark_ready(e, t->parts[i]);
}

/* t has something to commit: list it.  Its commits keep their rhythm
 * (one each table.commit.interval.ms from the last), so a table that was
 * idle commits at the next beat, as if it had committed nothing at each. */
static void mark_dirty(floe_engine_t *e, floe_ttable_t *t)
{
    if (t->dirty) return;
    int64_t now = floe_mono_ms(), iv = t->cfg.commit_interval_ms;
    if (t->next_commit_ms < now) t->next_commit_ms += ((now - t->next_commit_ms) / iv + 1) * iv;
    if (floe_grow(&e->dirty, &e->capdirty, e->ndirty + 1, sizeof *e->dirty) < 0) {
        FLOE_WARN("table %s.%s: out of memory listing it to commit; its next records list it",
                  t->main.ns, t->main.name);
        return;
    }
    e->dirty[e->ndirty++] = t;
    t->dirty = true;
}

/* t has nothing to commit: off the list. */
static void mark_clean(floe_engine_t *e, floe_ttable_t *t)
{
    if (!t->dirty) return;
    for (size_t i = 0; i < e->ndirty; i++)
        if (e->dirty[i] == t) {
            e->dirty[i] = e->dirty[--e->ndirty];
            break;
        }
    t->dirty = false;
}

/* Forget t in the engine's lists (before it is freed). */
static void unlist_table(floe_engine_t *e, floe_ttable_t *t)
{
    size_t k = 0;
    for (size_t i = 0; i < e->nready; i++)
        if (e->ready[i]->t != t) e->ready[k++] = e->ready[i];
    e->nready = k;
    k = 0;
    for (size_t i = 0; i < e->ndirty; i++)
        if (e->dirty[i] != t) e->dirty[k++] = e->dirty[i];
    e->ndirty = k;
}

/* After t committed (rc 0) or failed to (its partitions read again from
 * the committed offsets): nothing is open any more. */
static void after_commit(floe_engine_t *e, floe_ttable_t *t, int rc)
{
    for (int32_t i = 0; i < t->nparts; i++) t->parts[i]->open_bytes = 0;
    t->open_bytes = 0;
    t->commit_now = false;
    t->next_commit_ms = floe_mono_ms() + t->cfg.commit_interval_ms;
    if (rc < 0) {
        mark_table_ready(e, t);
        mark_dirty(e, t);
        return;
    }
    if (!t->paused) t->retried = FLOE_TPAUSE_NONE; /* it got past the cause */
    mark_clean(e, t);
}

static void commit_table(floe_engine_t *e, floe_ttable_t *t)
{
    if (t->fenced || t->maint_fenced) { /* the maintenance thread commits: later */
        t->next_commit_ms = floe_mono_ms() + t->cfg.commit_interval_ms;
        return;
    }
    floe_err_t err;
    bool by_size = t->commit_now;
    int rc = floe_ttable_commit(t, &err); /* failures logged and counted there */
    if (rc == 0 && by_size) t->size_commits++;
    after_commit(e, t, rc);
}

/* Partition p holds at a record that needs a committed long widened: ask
 * for the widening (once), or, when refused, let the field's fractions go
 * to the dead-letter table and read on. */
static void ask_widening(floe_engine_t *e, floe_ttable_t *t, floe_tpart_t *p)
{
    floe_err_t err;
    int r = floe_ttable_widen(t, p, &err);
    if (r > 0) return;
    if (r == 0) {
        int32_t *v = realloc(t->nowiden, (t->nnowiden + 1) * sizeof *v);
        if (v) {
            t->nowiden = v;
            t->nowiden[t->nnowiden++] = p->hold_field;
            FLOE_WARN("table %s.%s: field %d does not widen (%s): its fractions go to %s",
                      t->main.ns, t->main.name, (int)p->hold_field, err.msg, t->dlq.name);
            p->hold_field = 0; /* read again: the record is a dead letter now */
            mark_ready(e, p);
            return;
        }
        floe_err_oom(&err);
    }
    floe_ttable_pause(t, FLOE_TPAUSE_FAILED, "partition %d: widening field %d: %s", (int)p->id,
                      (int)p->hold_field, err.msg);
}

/* Step partition p once: it stays listed while more is left to read, its
 * table is listed to commit once it read anything, and commits at once
 * when table.commit.max.bytes are written.  Returns records converted. */
static int64_t step(floe_engine_t *e, floe_tpart_t *p)
{
    floe_ttable_t *t = p->t;
    p->ready = false;
    if (t->paused) return 0;
    int64_t before = p->next;
    uint64_t open = p->open_bytes;
    floe_err_t se;
    int64_t n = floe_tpart_step(p, &se);
    e->steps++;
    if (n < 0) floe_ttable_pause(t, FLOE_TPAUSE_FAILED, "partition %d: %s", (int)p->id, se.msg);
    if (p->hold_field && !t->paused) ask_widening(e, t, p);
    t->open_bytes += p->open_bytes - open;
    if (p->next == before) return 0;
    mark_dirty(e, t);
    if (!t->paused && p->next < p->log_end) mark_ready(e, p);
    if (floe_ttable_uncommitted_bytes(t) >= t->cfg.commit_max_bytes) {
        t->commit_now = true;
        commit_table(e, t);
    }
    return n > 0 ? n : 0;
}

/* ---- discovery -------------------------------------------------------------- */

static const char *topic_get(void *ctx, const char *key)
{
    const floe_tsource_topic_t *t = ctx;
    for (size_t i = 0; i < t->nconfigs; i++)
        if (!strcmp(t->keys[i], key)) return t->values[i];
    return NULL;
}

static int cmp_topic(const void *topic, const void *elem)
{
    return strcmp(topic, (*(floe_ttable_t *const *)elem)->topic);
}

/* Index of the first table whose topic is not below topic. */
static size_t table_at(const floe_engine_t *e, const char *topic)
{
    return floe_lower_bound(topic, e->tables, e->ntables, sizeof *e->tables, cmp_topic);
}

static floe_ttable_t *find_table(const floe_engine_t *e, const char *topic)
{
    size_t i = table_at(e, topic);
    return i < e->ntables && !strcmp(e->tables[i]->topic, topic) ? e->tables[i] : NULL;
}

static int add_parts(floe_engine_t *e, floe_ttable_t *t, int32_t n, floe_err_t *err)
{
    if (n <= t->nparts) return 0;
    /* the committed offsets first: a partition never lacks its entry */
    if (floe_tout_set_partitions(&t->main, n, err) < 0 ||
        floe_tout_set_partitions(&t->dlq, n, err) < 0)
        return -1;
    floe_tpart_t **p = realloc(t->parts, (size_t)n * sizeof *p);
    if (!p) return floe_err_oom(err);
    t->parts = p;
    for (int32_t i = t->nparts; i < n; i++) {
        if (!(t->parts[i] = floe_tpart_new(t, i, err))) return -1;
        t->nparts = i + 1;
        if (t->main.ice) mark_ready(e, t->parts[i]);
    }
    return 0;
}

/* Open t's tables, hand them to the maintenance thread, then finish a
 * re-drive a crash interrupted (recovery is the engine's: opening only
 * loads). */
static int open_table(floe_ttable_t *t, floe_err_t *err)
{
    if (floe_ttable_open(t, err) < 0) return -1;
    if (!(t->maint_main = floe_tmaint_attach(t->maint, t->main.ns, t->main.name, t->topic, true,
                                             &t->cfg, err)) ||
        !(t->maint_dlq =
              floe_tmaint_attach(t->maint, t->dlq.ns, t->dlq.name, t->topic, false, &t->cfg, err)))
        return -1;
    size_t finished;
    floe_err_t fe;
    if (floe_ttable_redrive_finish(t, &finished, &fe) < 0)
        FLOE_WARN("table %s.%s: cannot finish an interrupted re-drive yet: %s", t->main.ns,
                  t->main.name, fe.msg);
    return 0;
}

/* Whether a maintenance commit of t's main or dead-letter table asks the
 * engine to hold its commits (each poll acknowledges its own ask). */
static void fence_poll(floe_ttable_t *t)
{
    bool of_main = floe_tmaint_fence_poll(t->maint_main);
    bool of_dlq = floe_tmaint_fence_poll(t->maint_dlq);
    t->maint_fenced = of_main || of_dlq;
}

/* Remove table i from the engine after a last commit. */
static void drop_table(floe_engine_t *e, size_t i, const char *why)
{
    floe_ttable_t *t = e->tables[i];
    floe_err_t err;
    floe_ttable_widen_poll(t); /* a widening that landed is taken before the commit */
    fence_poll(t);
    if (t->main.ice) floe_ttable_commit(t, &err);
    FLOE_INFO("table %s.%s: topic %s %s; the engine stops writing it", t->main.ns, t->main.name,
              t->topic, why);
    unlist_table(e, t);
    table_free(t);
    memmove(&e->tables[i], &e->tables[i + 1], (e->ntables - i - 1) * sizeof *e->tables);
    e->ntables--;
}

/* Run t again after a pause (resumed, or retried after a configuration
 * change): what a failure left in its buffers and files goes, and every
 * partition reads on. */
static void run_again(floe_engine_t *e, floe_ttable_t *t, floe_tpause_t was)
{
    if (was == FLOE_TPAUSE_FAILED || was == FLOE_TPAUSE_DLQ) {
        floe_ttable_reset(t, FLOE_TFILES_DELETE);
        after_commit(e, t, -1);
    }
    mark_table_ready(e, t);
}

/* A table that is not opened (bad configs, or a store that refuses it:
 * wrong credentials, no such bucket): listed as paused with the reason,
 * logged once per reason; the next rounds try again. */
static void not_started(floe_engine_t *e, const char *topic, const floe_table_config_t *cfg,
                        const char *reason)
{
    tbadcfg_t *b = NULL;
    for (size_t i = 0; i < e->nbadcfg && !b; i++)
        if (!strcmp(e->badcfg[i].topic, topic)) b = &e->badcfg[i];
    if (!b) {
        tbadcfg_t *v = realloc(e->badcfg, (e->nbadcfg + 1) * sizeof *v);
        char *name = strdup(topic);
        if (!v || !name) {
            if (v) e->badcfg = v;
            free(name);
            return;
        }
        e->badcfg = v;
        b = &e->badcfg[e->nbadcfg++];
        memset(b, 0, sizeof *b);
        b->topic = name;
    }
    b->seen = true;
    if (!strcmp(b->reason, reason)) return;
    snprintf(b->reason, sizeof b->reason, "%s", reason);
    snprintf(b->table, sizeof b->table, "%s.%s", cfg->namespace_, cfg->name);
    FLOE_ERROR("table %s of topic %s not started: %s", b->table, topic, b->reason);
}

/* A topic that asks to be a table but whose table.* configs do not load:
 * a running table pauses with the reason, a new one is not opened and the
 * status lists it as paused.  Logged once per reason, not every round. */
static void config_problem(floe_engine_t *e, floe_ttable_t *t, const char *topic,
                           const floe_table_config_t *cfg, const char *msg)
{
    char reason[sizeof t->reason];
    snprintf(reason, sizeof reason, "bad configuration: %s", msg);
    if (!t) {
        not_started(e, topic, cfg, reason);
        return;
    }
    t->seen = true;
    if (t->paused == FLOE_TPAUSE_CONFIG && strcmp(t->reason, reason))
        floe_ttable_resume(t); /* paused again below, with today's reason */
    floe_ttable_pause(t, FLOE_TPAUSE_CONFIG, "%s", reason);
}

/* Table t's topic is listed again with configuration cfg (its identity
 * unchanged): live settings apply; a table paused for its configuration
 * runs again now that it loads, and one paused for another cause (but an
 * operator) retries, since the change may be the fix. */
static void table_configured(floe_engine_t *e, floe_ttable_t *t, const floe_table_config_t *cfg)
{
    bool changed = floe_table_config_live_changed(&t->cfg, cfg);
    floe_table_config_apply_live(&t->cfg, cfg);
    floe_tmaint_configure(t->maint_main, &t->cfg);
    floe_tmaint_configure(t->maint_dlq, &t->cfg);
    floe_tpause_t was = t->paused;
    if (was == FLOE_TPAUSE_CONFIG) {
        floe_ttable_resume(t);
        run_again(e, t, was);
    } else if (changed && was != FLOE_TPAUSE_NONE && was != FLOE_TPAUSE_OPERATOR) {
        FLOE_INFO("table %s.%s: its configuration changed; running it again after its pause "
                  "(%s)",
                  t->main.ns, t->main.name, t->reason);
        floe_ttable_retry(t);
        run_again(e, t, was);
    }
}

/* A new table of topic (n partitions) with cfg, opened and listed in
 * topic order; on failure the next discovery tries again. */
static void table_add(floe_engine_t *e, const char *topic, int32_t n,
                      const floe_table_config_t *cfg)
{
    floe_err_t ce;
    floe_ttable_t *t = NULL;
    if (floe_grow(&e->tables, &e->captables, e->ntables + 1, sizeof *e->tables) < 0 ||
        !(t = table_new(e, topic, cfg))) {
        FLOE_ERROR("table engine: out of memory adding topic %s", topic);
        e->rediscover = true;
        return;
    }
    if (add_parts(e, t, n, &ce) < 0 || open_table(t, &ce) < 0) {
        char reason[sizeof t->reason];
        snprintf(reason, sizeof reason, "cannot open its table (retrying): %s", ce.msg);
        not_started(e, topic, cfg, reason);
        table_free(t);
        e->rediscover = true;
        return;
    }
    size_t at = table_at(e, topic);
    memmove(&e->tables[at + 1], &e->tables[at], (e->ntables - at) * sizeof *e->tables);
    e->tables[at] = t;
    e->ntables++;
    mark_table_ready(e, t);
}

/* List the topics: open tables for new table topics, apply live settings,
 * pause a table whose configuration went bad (and resume it once fixed),
 * drop tables whose topic is gone.  -1 with *err when the source cannot
 * list its topics (the known tables stay as they are). */
static int discover(floe_engine_t *e, floe_err_t *err)
{
    floe_tsource_topic_t *topics;
    size_t n;
    e->rediscover = false;
    if (e->src->ops->topics_version) e->topics_seen = e->src->ops->topics_version(e->src);
    if (e->src->ops->topics(e->src, &topics, &n, err) < 0) {
        floe_err_wrap(err, "table engine: cannot list topics");
        e->rediscover = true;
        return -1;
    }
    for (size_t i = 0; i < e->ntables; i++) e->tables[i]->seen = false;
    for (size_t i = 0; i < e->nbadcfg; i++) e->badcfg[i].seen = false;
    for (size_t i = 0; i < n; i++) {
        floe_table_config_t cfg;
        floe_err_t ce;
        floe_ttable_t *t = find_table(e, topics[i].name);
        int rc = floe_table_config_load(&cfg, topics[i].name, topic_get, &topics[i],
                                        e->cfg.get_default, e->cfg.default_ctx, &ce);
        if (rc < 0 && !floe_table_config_wanted(topic_get, &topics[i], e->cfg.get_default,
                                                e->cfg.default_ctx))
            continue; /* no table asked for: its table.* keys do not matter */
        if (rc == 0 && !cfg.enable) continue;
        if (rc < 0) {
            config_problem(e, t, topics[i].name, &cfg, ce.msg);
            continue;
        }
        if (t) {
            t->seen = true;
            if (floe_table_config_identity_changed(&t->cfg, &cfg)) {
                t->seen = false; /* rebuilt at the next discovery (converters too) */
                e->rediscover = true;
                continue;
            }
            table_configured(e, t, &cfg);
            if (add_parts(e, t, topics[i].partitions, &ce) < 0)
                FLOE_ERROR("table %s.%s: %s", t->main.ns, t->main.name, ce.msg);
            continue;
        }
        if (topics[i].partitions > 0) table_add(e, topics[i].name, topics[i].partitions, &cfg);
    }
    for (size_t i = e->ntables; i-- > 0;)
        if (!e->tables[i]->seen) drop_table(e, i, "is gone, disabled or renamed");
    for (size_t i = e->nbadcfg; i-- > 0;)
        if (!e->badcfg[i].seen) {
            free(e->badcfg[i].topic);
            e->badcfg[i] = e->badcfg[--e->nbadcfg];
        }
    floe_tsource_topics_free(topics, n);
    return 0;
}

/* Whether the topics are to be listed now: a source that tells its
 * topics version is listed when it changed (or a table waits to be opened
 * or rebuilt), one that does not every discovery period. */
static bool discover_due(floe_engine_t *e)
{
    if (e->rediscover || !e->src->ops->topics_version) return true;
    return e->src->ops->topics_version(e->src) != e->topics_seen;
}

/* The source's news: partitions that got messages. */
static void on_news(void *arg, const char *topic, int32_t partition)
{
    floe_engine_t *e = arg;
    floe_ttable_t *t = find_table(e, topic);
    if (t && !t->paused && partition >= 0 && partition < t->nparts)
        mark_ready(e, t->parts[partition]);
}

/* ---- rounds --------------------------------------------------------------------- */

/* What a round does beyond stepping the partitions with news once. */
typedef enum round_flags {
    ROUND_DISCOVER = 1 << 0, /* list the topics, whatever their version */
    ROUND_ALL = 1 << 1,      /* every partition, news or not */
    ROUND_DRAIN = 1 << 2,    /* step each partition until it is caught up */
    ROUND_COMMIT = 1 << 3,   /* commit every table, due or not */
} round_flags_t;

static void serve_status(floe_engine_t *e);

/* What the maintenance thread asks of the engine, between two commits:
 * take a widening's fence or its switched schema (the partitions that
 * waited read on), hold the commits a contended maintenance commit asks
 * to.  A few loads per table when nothing is asked. */
static void poll_maint(floe_engine_t *e)
{
    for (size_t i = 0; i < e->ntables; i++) {
        floe_ttable_t *t = e->tables[i];
        if (t->nwide || t->fenced) {
            floe_ttable_widen_poll(t);
            for (int32_t k = 0; k < t->nparts && !t->paused; k++) {
                floe_tpart_t *p = t->parts[k];
                if (!p->hold_field && p->next < p->log_end) mark_ready(e, p);
            }
        }
        fence_poll(t);
    }
}

/* Step the partitions listed (each once; with ROUND_DRAIN until none is
 * left), commit what is due (everything with ROUND_COMMIT).  Returns
 * records converted, and in *wait_ms how long nothing is due (0: more to
 * do now); -1 with *err when topics could not be listed (the known
 * tables were stepped all the same). */
static int64_t run_round(floe_engine_t *e, unsigned flags, int64_t *wait_ms, floe_err_t *err)
{
    int64_t now = floe_mono_ms();
    int rc = 0;
    const floe_tsource_ops_t *ops = e->src->ops;
    if ((flags & ROUND_DISCOVER) || now >= e->next_discover_ms) {
        if ((flags & ROUND_DISCOVER) || discover_due(e)) rc = discover(e, err);
        e->next_discover_ms = now + e->cfg.discover_ms;
    }
    if (ops->changed) ops->changed(e->src, on_news, e);
    poll_maint(e);
    if ((flags & ROUND_ALL) || !ops->changed)
        for (size_t i = 0; i < e->ntables; i++)
            if (!e->tables[i]->paused) mark_table_ready(e, e->tables[i]);
    e->rounds++;
    int64_t total = 0;
    do {
        /* the list taken; steps list what is left for the next pass */
        floe_tpart_t **v = e->ready;
        size_t nv = e->nready, cap = e->capready;
        e->ready = e->stepping;
        e->capready = e->capstepping;
        e->nready = 0;
        e->stepping = v;
        e->capstepping = cap;
        for (size_t i = 0; i < nv; i++) {
            total += step(e, v[i]);
            if (!(flags & ROUND_DRAIN)) serve_status(e);
        }
    } while ((flags & ROUND_DRAIN) && e->nready);
    if (flags & ROUND_COMMIT)
        for (size_t i = 0; i < e->ntables; i++) commit_table(e, e->tables[i]);
    now = floe_mono_ms();
    int64_t next = e->next_discover_ms;
    for (size_t i = 0; i < e->ndirty;) {
        floe_ttable_t *t = e->dirty[i];
        if (now >= t->next_commit_ms) {
            commit_table(e, t); /* off the list when it succeeds */
            now = floe_mono_ms();
            if (i >= e->ndirty || e->dirty[i] != t) continue;
        }
        if (t->next_commit_ms < next) next = t->next_commit_ms;
        i++;
    }
    if (!ops->changed && now + POLL_MS < next) next = now + POLL_MS;
    *wait_ms = e->nready ? 0 : next > now ? next - now : 0;
    return rc < 0 ? -1 : total;
}

/* Without the threads: take every widening asked for in the last round
 * to its end in this thread (the maintenance steps, the fence needing no
 * acknowledgement), then read on from the records that waited.  A
 * widening that fails stays asked for (the next run tries again). */
static int64_t finish_widenings(floe_engine_t *e, unsigned flags, floe_err_t *err)
{
    int64_t total = 0;
    for (int pass = 0; pass < 8; pass++) {
        bool any = false;
        for (size_t i = 0; i < e->ntables; i++) {
            floe_ttable_t *t = e->tables[i];
            int failures = 0;
            for (int k = 0; t->nwide && k < 100 && failures < 2; k++) {
                floe_tmaint_widen_state_t s = floe_ttable_widen_poll(t);
                if (!t->nwide) break;
                if (s == FLOE_TMW_SWITCHED) break; /* not taken: storage fails */
                if (floe_tmaint_widen_step(t->maint_main) == FLOE_TMW_FAILED) failures++;
            }
            floe_ttable_widen_poll(t);
            any |= !t->nwide;
        }
        if (!any) break;
        int64_t wait;
        int64_t n = run_round(e, flags, &wait, err);
        if (n <= 0) break;
        total += n;
    }
    return total;
}

int64_t floe_engine_run_once(floe_engine_t *e, bool force_commit, floe_err_t *err)
{
    int64_t wait;
    unsigned flags = ROUND_DISCOVER | ROUND_ALL | ROUND_DRAIN | (force_commit ? ROUND_COMMIT : 0);
    int64_t n = run_round(e, flags, &wait, err);
    if (n < 0) return n;
    bool widening = false;
    for (size_t i = 0; i < e->ntables; i++) widening |= e->tables[i]->nwide > 0;
    return widening ? n + finish_widenings(e, flags, err) : n;
}

/* ---- requests: re-drive, pause, resume --------------------------------------- */

typedef enum req_kind { REQ_REDRIVE, REQ_PAUSE, REQ_RESUME, REQ_RESYNC } req_kind_t;

struct engine_req {
    req_kind_t kind;
    const char *name;
    floe_buf_t *out;
    floe_err_t err;
    int rc;
    bool done;
};

/* The table named ("ns.table", its topic, or the bare table name in
 * namespace default), or NULL. */
static floe_ttable_t *find_named(floe_engine_t *e, const char *name)
{
    for (size_t i = 0; i < e->ntables; i++) {
        floe_ttable_t *t = e->tables[i];
        char tn[450];
        snprintf(tn, sizeof tn, "%s.%s", t->main.ns, t->main.name);
        bool bare = !strcmp(t->main.ns, "default") && !strcmp(name, t->main.name);
        if (bare || !strcmp(name, tn) || !strcmp(name, t->topic)) return t;
    }
    return NULL;
}

/* {"table": ..., state members} into rq->out. */
static void answer_state(struct engine_req *rq, const floe_ttable_t *t)
{
    floe_buf_t *o = rq->out;
    int rc = floe_buf_printf(o, "{\"table\":\"%s.%s\",", t->main.ns, t->main.name);
    size_t len = o->len;
    floe_engine_state_json(o, t);
    if (rc < 0 || o->len == len || floe_buf_append_u8(o, '}') < 0) rq->rc = floe_err_oom(&rq->err);
}

static void redrive_now(floe_engine_t *e, floe_ttable_t *t, struct engine_req *rq)
{
    floe_redrive_result_t r;
    rq->rc = floe_ttable_redrive(t, &r, &rq->err);
    after_commit(e, t, rq->rc); /* it commits what t buffered first */
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
}

/* An operator's pause: it replaces any other cause (which a resume finds
 * again if it persists). */
static void pause_now(floe_ttable_t *t, struct engine_req *rq)
{
    if (t->paused != FLOE_TPAUSE_OPERATOR) {
        char was[sizeof t->reason];
        snprintf(was, sizeof was, "%s", t->reason);
        bool other = t->paused != FLOE_TPAUSE_NONE;
        floe_ttable_resume(t);
        floe_ttable_pause(t, FLOE_TPAUSE_OPERATOR, "paused by an operator%s%.500s%s",
                          other ? " (it was paused: " : "", other ? was : "", other ? ")" : "");
    }
    answer_state(rq, t);
}

/* An operator's resume: the table runs again, its configuration is
 * looked at anew and every partition steps once before the answer, so
 * that a cause that persists shows in it (paused again). */
static void resume_now(floe_engine_t *e, floe_ttable_t *t, struct engine_req *rq)
{
    floe_tpause_t was = t->paused;
    if (was != FLOE_TPAUSE_NONE) {
        FLOE_INFO("table %s.%s: resumed by an operator (it was paused: %s)", t->main.ns,
                  t->main.name, t->reason);
        floe_ttable_resume(t);
        run_again(e, t, was);
        floe_err_t de;
        char name[450];
        snprintf(name, sizeof name, "%s.%s", t->main.ns, t->main.name);
        if (discover(e, &de) < 0) FLOE_WARN("%s", de.msg);
        t = find_named(e, name); /* a discovery may rebuild it */
        for (int32_t i = 0; t && !t->paused && i < t->nparts; i++) step(e, t->parts[i]);
    }
    if (t) answer_state(rq, t);
    else
        rq->rc =
            floe_err_set(&rq->err, FLOE_ENOENT, "table %s is being rebuilt: ask again", rq->name);
}

/* The source's assignment changed: what every table read goes in now,
 * then each reads again from its table's offsets (another writer may
 * have moved those of partitions it gets), which the source hears. */
static void resync_now(floe_engine_t *e)
{
    floe_err_t de;
    if (discover(e, &de) < 0) FLOE_WARN("%s", de.msg);
    for (size_t i = 0; i < e->ntables; i++) {
        floe_ttable_t *t = e->tables[i];
        if (!t->main.ice) continue;
        commit_table(e, t);
        floe_ttable_reset(t, FLOE_TFILES_DELETE); /* nothing pending once committed */
        for (int32_t k = 0; k < t->nparts; k++) t->parts[k]->open_bytes = 0;
        t->open_bytes = 0;
        floe_ttable_report_committed(t);
        mark_table_ready(e, t);
    }
}

/* Run request rq in the thread that owns the tables. */
static void serve_request(floe_engine_t *e, struct engine_req *rq)
{
    if (rq->kind == REQ_RESYNC) {
        resync_now(e);
        rq->rc = 0;
        return;
    }
    floe_ttable_t *t = find_named(e, rq->name);
    if (!t) {
        rq->rc = floe_err_set(&rq->err, FLOE_ENOENT,
                              "no table topic '%s' (name a topic or namespace.table)", rq->name);
        return;
    }
    rq->rc = 0;
    switch (rq->kind) {
    case REQ_REDRIVE: redrive_now(e, t, rq); break;
    case REQ_PAUSE: pause_now(t, rq); break;
    case REQ_RESUME: resume_now(e, t, rq); break;
    case REQ_RESYNC: break;
    }
}

/* Submit rq to the engine thread and wait for it; without the thread, run
 * it here after a round that finds the tables and reads what there is
 * (not for a resync). */
static int request(floe_engine_t *e, struct engine_req *rq, floe_err_t *err)
{
    pthread_mutex_lock(&e->mu);
    if (!e->thread_on) {
        pthread_mutex_unlock(&e->mu);
        int64_t wait;
        floe_err_t re;
        if (rq->kind != REQ_RESYNC) /* (which must not read from stale offsets first) */
            run_round(e, ROUND_DISCOVER | ROUND_ALL | ROUND_DRAIN, &wait, &re);
        serve_request(e, rq);
    } else {
        while (e->req && !e->stop) pthread_cond_wait(&e->cv, &e->mu); /* one at a time */
        if (e->stop) {
            pthread_mutex_unlock(&e->mu);
            return floe_err_set(err, FLOE_ECLOSED, "the table engine is stopping");
        }
        e->req = rq;
        pthread_cond_broadcast(&e->cv);
        while (!rq->done) pthread_cond_wait(&e->cv, &e->mu);
        e->req = NULL;
        pthread_cond_broadcast(&e->cv);
        pthread_mutex_unlock(&e->mu);
    }
    if (rq->rc < 0) *err = rq->err;
    return rq->rc;
}

/* ---- rounds --------------------------------------------------------------------- */

int floe_engine_maintain(floe_engine_t *e, const char *name, const floe_tmaint_req_t *req,
                         floe_buf_t *out, floe_err_t *err)
{
    return floe_tmaint_run(e->maint, name, req, out, err);
}

int floe_engine_maintenance_json(floe_engine_t *e, const char *name, floe_buf_t *out,
                                 floe_err_t *err)
{
    return floe_tmaint_table_json(e->maint, name, out, err);
}

int floe_engine_redrive(floe_engine_t *e, const char *name, floe_buf_t *out, floe_err_t *err)
{
    struct engine_req rq = {.kind = REQ_REDRIVE, .name = name, .out = out};
    return request(e, &rq, err);
}

int floe_engine_pause(floe_engine_t *e, const char *name, floe_buf_t *out, floe_err_t *err)
{
    struct engine_req rq = {.kind = REQ_PAUSE, .name = name, .out = out};
    return request(e, &rq, err);
}

int floe_engine_resume(floe_engine_t *e, const char *name, floe_buf_t *out, floe_err_t *err)
{
    struct engine_req rq = {.kind = REQ_RESUME, .name = name, .out = out};
    return request(e, &rq, err);
}

int floe_engine_resync(floe_engine_t *e, floe_err_t *err)
{
    struct engine_req rq = {.kind = REQ_RESYNC, .name = ""};
    return request(e, &rq, err);
}

/* ---- status on demand ------------------------------------------------------------ */

/* Build the status and metrics now and keep them for the asking.  The
 * tables' thread, without e->mu. */
static void build_status(floe_engine_t *e)
{
    floe_buf_t js = FLOE_BUF_INIT, m = FLOE_BUF_INIT;
    floe_engine_status_build(e, &js, &m);
    pthread_mutex_lock(&e->mu);
    floe_buf_free(&e->status);
    floe_buf_free(&e->metrics);
    e->status = js;
    e->metrics = m;
    pthread_mutex_unlock(&e->mu);
}

/* Build the status asked for since the last build, if any.  Engine
 * thread. */
static void serve_status(floe_engine_t *e)
{
    pthread_mutex_lock(&e->mu);
    uint64_t asked = e->status_asked;
    pthread_mutex_unlock(&e->mu);
    if (asked == e->status_built) return; /* (only this thread writes status_built) */
    build_status(e);
    pthread_mutex_lock(&e->mu);
    e->status_built = asked;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

/* The status (or the metrics) now, appended to out: built by the engine
 * thread between two steps, or here when it does not run. */
static int status_get(floe_engine_t *e, floe_buf_t *out, bool metrics)
{
    pthread_mutex_lock(&e->mu);
    if (e->thread_on) {
        uint64_t mine = ++e->status_asked;
        pthread_cond_broadcast(&e->cv);
        struct timespec ts = deadline(STATUS_WAIT_MS);
        while (e->thread_on && e->status_built < mine)
            if (pthread_cond_timedwait(&e->cv, &e->mu, &ts) != 0) break; /* the last one then */
    }
    if (!e->thread_on) {
        /* no thread: the caller's is the tables' (a stopped engine's are
         * still) */
        pthread_mutex_unlock(&e->mu);
        build_status(e);
        pthread_mutex_lock(&e->mu);
    }
    const floe_buf_t *b = metrics ? &e->metrics : &e->status;
    int rc = b->len    ? floe_buf_append(out, b->data, b->len)
             : metrics ? 0
                       : floe_buf_append_str(out, "{\"tables\":[]}");
    pthread_mutex_unlock(&e->mu);
    return rc;
}

int floe_engine_status_json(floe_engine_t *e, floe_buf_t *out)
{
    return status_get(e, out, false);
}

int floe_engine_metrics(floe_engine_t *e, floe_buf_t *out)
{
    return status_get(e, out, true);
}

/* ---- the thread ------------------------------------------------------------------- */

static void on_wake(void *arg)
{
    floe_engine_t *e = arg;
    pthread_mutex_lock(&e->mu);
    e->woken = true;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

/* Sleep until something is due in wait_ms, news arrive, or somebody asks
 * for something. */
static void sleep_until_due(floe_engine_t *e, int64_t wait_ms)
{
    pthread_mutex_lock(&e->mu);
    if (!e->stop && !e->woken && !(e->req && !e->req->done) && e->status_asked == e->status_built) {
        struct timespec ts = deadline(wait_ms);
        pthread_cond_timedwait(&e->cv, &e->mu, &ts);
    }
    pthread_mutex_unlock(&e->mu);
}

static void *thread_main(void *arg)
{
    floe_engine_t *e = arg;
    FLOE_INFO("table engine started");
    if (e->src->ops->watch) e->src->ops->watch(e->src, on_wake, e);
    for (;;) {
        pthread_mutex_lock(&e->mu);
        bool stop = e->stop;
        e->woken = false;
        struct engine_req *rq = e->req && !e->req->done ? e->req : NULL;
        pthread_mutex_unlock(&e->mu);
        if (stop) break;
        if (rq) {
            serve_request(e, rq);
            pthread_mutex_lock(&e->mu);
            rq->done = true;
            pthread_cond_broadcast(&e->cv);
            pthread_mutex_unlock(&e->mu);
        }
        floe_err_t err;
        int64_t wait;
        if (run_round(e, 0, &wait, &err) < 0) FLOE_WARN("%s", err.msg);
        serve_status(e);
        if (wait > 0) sleep_until_due(e, wait);
    }
    if (e->src->ops->watch) e->src->ops->watch(e->src, NULL, NULL);
    /* a request asked for while stopping is refused, not left waiting */
    pthread_mutex_lock(&e->mu);
    if (e->req && !e->req->done) {
        e->req->rc = floe_err_set(&e->req->err, FLOE_ECLOSED, "the table engine is stopping");
        e->req->done = true;
        pthread_cond_broadcast(&e->cv);
    }
    pthread_mutex_unlock(&e->mu);
    /* the maintenance thread first (a rewrite under way is dropped), then
     * a last commit of what is buffered: a clean stop loses no progress;
     * a table whose widening holds the fence commits nothing (its records
     * are read again at the next start) */
    floe_tmaint_stop(e->maint);
    for (size_t i = 0; i < e->ntables; i++) {
        floe_ttable_t *t = e->tables[i];
        floe_ttable_widen_poll(t);
        t->maint_fenced = false; /* the maintenance commits are over */
        commit_table(e, t);
    }
    pthread_mutex_lock(&e->mu);
    e->thread_on = false; /* the tables are whoever asks next's to read */
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
    FLOE_INFO("table engine stopped");
    return NULL;
}

int floe_engine_start(floe_engine_t *e, floe_err_t *err)
{
    if (e->running) return 0;
    e->stop = false;
    if (floe_tmaint_start(e->maint, err) < 0) return -1;
    e->thread_on = true;
    int rc = pthread_create(&e->thread, NULL, thread_main, e);
    if (rc != 0) {
        e->thread_on = false;
        floe_tmaint_stop(e->maint);
        return floe_err_errno(err, rc, "starting the table engine thread");
    }
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
    floe_tmaint_free(e->maint);
    for (size_t i = 0; i < e->nbadcfg; i++) free(e->badcfg[i].topic);
    free(e->badcfg);
    free(e->ready);
    free(e->stepping);
    free(e->dirty);
    floe_buf_free(&e->status);
    floe_buf_free(&e->metrics);
    floe_pq_scratch_free(e->pq_scratch);
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
    free(e);
}
