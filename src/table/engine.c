/* The engine thread: finds table topics, opens their tables (finishing an
 * interrupted re-drive), steps their partitions, commits on each table's
 * interval, runs re-drives asked for, and publishes a status snapshot
 * after every round (engine_status.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/metadata.h"
#include "table/engine_int.h"
#include "table/redrive.h"
#include "util/clock.h"
#include "util/diag.h"

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
    t->src = e->src;
    t->read_bytes = e->cfg.read_bytes;
    floe_ice_uuid4(t->writer_id); /* names this run's files */
    t->files = (floe_tsink_env_t){.io = floe_ice_catalog_io(e->cfg.catalog),
                                  .pq_scratch = e->pq_scratch,
                                  .cfg = &t->cfg,
                                  .writer_id = t->writer_id};
    t->seen = true;
    t->next_commit_ms = floe_mono_ms() + cfg->commit_interval_ms;
    return t;
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
    }
    return 0;
}

/* Open t's tables, then finish a re-drive a crash interrupted (recovery
 * is the engine's: opening only loads). */
static int open_table(floe_ttable_t *t, floe_err_t *err)
{
    if (floe_ttable_open(t, err) < 0) return -1;
    size_t finished;
    floe_err_t fe;
    if (floe_ttable_redrive_finish(t, &finished, &fe) < 0)
        FLOE_WARN("table %s.%s: cannot finish an interrupted re-drive yet: %s", t->main.ns,
                  t->main.name, fe.msg);
    return 0;
}

/* Remove table i from the engine after a last commit. */
static void drop_table(floe_engine_t *e, size_t i, const char *why)
{
    floe_ttable_t *t = e->tables[i];
    floe_err_t err;
    if (t->main.ice) floe_ttable_commit(t, &err);
    FLOE_INFO("table %s.%s: topic %s %s; the engine stops writing it", t->main.ns, t->main.name,
              t->topic, why);
    table_free(t);
    e->tables[i] = e->tables[--e->ntables];
}

/* A topic that asks to be a table but whose table.* configs do not load:
 * a running table pauses with the reason, a new one is not opened and the
 * status lists it as paused.  Logged once per reason, not every round. */
static void not_started(floe_engine_t *e, const char *topic, const floe_table_config_t *cfg,
                        const char *reason);

static void config_problem(floe_engine_t *e, floe_ttable_t *t, const char *topic,
                           const floe_table_config_t *cfg, const char *msg)
{
    char reason[sizeof t->reason];
    snprintf(reason, sizeof reason, "bad configuration: %s", msg);
    if (!t) {
        not_started(e, topic, cfg, reason);
        return;
    }
    {
        t->seen = true;
        if (t->paused == FLOE_TPAUSE_CONFIG && strcmp(t->reason, reason))
            floe_ttable_resume(t); /* paused again below, with today's reason */
        floe_ttable_pause(t, FLOE_TPAUSE_CONFIG, "%s", reason);
    }
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

/* List the topics: open tables for new table topics, apply live settings,
 * pause a table whose configuration went bad (and resume it once fixed),
 * drop tables whose topic is gone.  -1 with *err when the source cannot
 * list its topics (the known tables stay as they are). */
static int discover(floe_engine_t *e, floe_err_t *err)
{
    floe_tsource_topic_t *topics;
    size_t n;
    if (e->src->ops->topics(e->src, &topics, &n, err) < 0) {
        floe_err_wrap(err, "table engine: cannot list topics");
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
                t->seen = false; /* rebuilt below at the next discovery (converters too) */
                continue;
            }
            floe_table_config_apply_live(&t->cfg, &cfg);
            if (t->paused == FLOE_TPAUSE_CONFIG) floe_ttable_resume(t);
            if (add_parts(t, topics[i].partitions, &ce) < 0)
                FLOE_ERROR("table %s.%s: %s", t->main.ns, t->main.name, ce.msg);
            continue;
        }
        if (topics[i].partitions <= 0) continue;
        floe_ttable_t **tv = realloc(e->tables, (e->ntables + 1) * sizeof *tv);
        if (tv) e->tables = tv;
        if (!tv || !(t = table_new(e, topics[i].name, &cfg))) {
            FLOE_ERROR("table engine: out of memory adding topic %s", topics[i].name);
            continue;
        }
        if (add_parts(t, topics[i].partitions, &ce) < 0 || open_table(t, &ce) < 0) {
            char reason[sizeof t->reason];
            snprintf(reason, sizeof reason, "cannot open its table (retrying): %s", ce.msg);
            not_started(e, topics[i].name, &cfg, reason);
            table_free(t);
            continue;
        }
        e->tables[e->ntables++] = t;
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

/* What a round does beyond stepping every partition once. */
typedef enum round_flags {
    ROUND_DRAIN = 1 << 0,  /* step each partition until it is caught up */
    ROUND_COMMIT = 1 << 1, /* commit every table, due or not */
} round_flags_t;

/* Defined with the rounds below. */
static int64_t run_round(floe_engine_t *e, unsigned flags, floe_err_t *err);

/* ---- re-drive ------------------------------------------------------------------ */

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
    floe_engine_publish_status(e);
}

int floe_engine_redrive(floe_engine_t *e, const char *name, floe_buf_t *out, floe_err_t *err)
{
    struct redrive_req rq = {.name = name, .out = out};
    if (!e->running) {
        e->next_discover_ms = 0;
        floe_err_t re;
        run_round(e, ROUND_DRAIN, &re); /* find the tables and read what there is */
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

/* Step every partition once (until caught up with ROUND_DRAIN), commit
 * what is due (everything with ROUND_COMMIT).  Returns records converted;
 * -1 with *err when topics could not be listed (the known tables were
 * stepped all the same). */
static int64_t run_round(floe_engine_t *e, unsigned flags, floe_err_t *err)
{
    int64_t now = floe_mono_ms();
    int rc = 0;
    if (now >= e->next_discover_ms) {
        rc = discover(e, err);
        e->next_discover_ms = now + e->cfg.discover_ms;
    }
    int64_t total = 0;
    for (size_t i = 0; i < e->ntables; i++) {
        floe_ttable_t *t = e->tables[i];
        for (int32_t k = 0; k < t->nparts && !t->paused; k++) {
            floe_err_t se;
            int64_t n;
            do {
                n = floe_tpart_step(t->parts[k], &se);
                if (n < 0) {
                    floe_ttable_pause(t, FLOE_TPAUSE_FAILED, "partition %d: %s", (int)k, se.msg);
                    break;
                }
                total += n;
            } while ((flags & ROUND_DRAIN) && n > 0);
        }
        if ((flags & ROUND_COMMIT) || floe_mono_ms() >= t->next_commit_ms) {
            floe_err_t ce;
            floe_ttable_commit(t, &ce); /* failures logged and counted there */
            t->next_commit_ms = floe_mono_ms() + t->cfg.commit_interval_ms;
        }
    }
    floe_engine_publish_status(e);
    return rc < 0 ? -1 : total;
}

int64_t floe_engine_run_once(floe_engine_t *e, bool force_commit, floe_err_t *err)
{
    e->next_discover_ms = 0;
    return run_round(e, ROUND_DRAIN | (force_commit ? ROUND_COMMIT : 0), err);
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
        floe_err_t err;
        int64_t n = run_round(e, 0, &err);
        if (n < 0) {
            FLOE_WARN("%s", err.msg);
            n = 0;
        }
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
        floe_ttable_commit(e->tables[i], &err);
    }
    floe_engine_publish_status(e);
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
    for (size_t i = 0; i < e->nbadcfg; i++) free(e->badcfg[i].topic);
    free(e->badcfg);
    floe_buf_free(&e->status);
    floe_buf_free(&e->metrics);
    floe_pq_scratch_free(e->pq_scratch);
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
    free(e);
}
