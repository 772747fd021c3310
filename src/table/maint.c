/* The maintenance thread (maint.h): attached tables, their schedule, the
 * widening state machine, operator requests, figures. */
#include "table/maint.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/diag.h"
#include "util/json.h"

/* What a table's settings say, copied from its table.* config. */
typedef struct settings {
    bool compaction;
    size_t min_files;
    int64_t compact_every, expire_every, orphan_age, commit_every;
    int64_t max_bytes, target;
    int64_t delete_percent; /* table.compaction.delete.percent */
    size_t delete_files;    /* table.compaction.delete.files */
} settings_t;

/* Files in doubt of one table, by name: they outlive the table's handle. */
typedef struct doubt {
    char *table; /* ns.name */
    char **paths;
    size_t n;
} doubt_t;

typedef struct opreq {
    int64_t queued_ms; /* monotonic */
    char ns[128], name[300];
    floe_tmaint_table_t *h; /* the attached table, or NULL */
    const floe_tmaint_req_t *req;
    floe_buf_t *out;
    floe_err_t err;
    int rc;
    bool done;
    struct opreq *next;
} opreq_t;

struct floe_tmaint_table {
    floe_tmaint_t *m;
    char ns[128], name[300];
    char *topic;
    bool main;
    settings_t set;
    int64_t next_compact, next_expire, next_orphans, next_stats;
    uint64_t commits, commits_compacted, commits_expired;
    unsigned idle_expiries;
    bool busy;      /* an operation works on it (the lock is not held then) */
    bool detaching; /* floe_tmaint_detach waits for it */
    atomic_bool cancel;
    /* the fence a maintenance commit that keeps losing to the engine asks
     * for: FENCE_NONE, FENCE_WANTED, FENCE_HELD (the engine holds its
     * commits of the table) */
    atomic_int fence;
    /* widening */
    floe_tmaint_widen_state_t wstate;
    floe_twiden_t *asked; /* for the next job */
    size_t nasked;
    floe_twiden_t *jpairs; /* the job's */
    size_t njpairs;
    floe_tmaint_widen_t *job;
    int rounds, commit_tries;
    int64_t retry_at, widen_t0;
    int64_t widen_last; /* when its last step ended (monotonic) */
    int64_t late_said;  /* when the catch-up worker last said it took over */
    uint64_t late_runs; /* operations the catch-up worker ran */
    /* figures and counters */
    floe_tmaint_stats_t st;
    bool has_st;
    uint64_t compactions, compact_failures, compact_files_in, compact_files_out;
    uint64_t compact_bytes_in, compact_bytes_out, compact_ms;
    uint64_t expiries, expired_snapshots, expired_files;
    uint64_t orphan_runs, orphans_deleted;
    uint64_t widenings, widen_files;
    uint64_t fences; /* maintenance commits that made the engine hold its commits */
    char running[16];
    char progress[256];
    char last_error[320];
};

/* A thread doing the work.  The background worker runs at low priority and
 * takes everything; the catch-up worker keeps normal priority and takes
 * only what is late by more than lag() (a request queued 5 s, a widening
 * step waiting 5 s): when the background one starves under a busy CPU, the
 * tables still stay bounded, at the cost of competing for the CPU then. */
typedef struct worker {
    floe_tmaint_t *m;
    bool catchup;
    floe_pq_scratch_t *scratch; /* its Parquet temporaries */
    pthread_t thread;
} worker_t;

struct floe_tmaint {
    floe_ice_catalog_t *cat;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    worker_t workers[2]; /* background, catch-up */
    bool running, stop;
    floe_tmaint_table_t **tables;
    size_t ntables;
    doubt_t *doubts;
    size_t ndoubts;
    opreq_t *head, *tail;
    bool inline_busy; /* without the threads: an operation runs in a caller's thread */
};

enum { FENCE_NONE, FENCE_WANTED, FENCE_HELD };
/* A maintenance commit asks for the fence at this attempt (two lost). */
#define CONTENDED_AT 3
/* and waits this long at most for the engine to hold its commits */
#define FENCE_WAIT_MS 10000

/* A widening's rewrite rounds stop and ask for the fence once a round
 * rewrote at most this many files (or after this many rounds): what the
 * engine wrote meanwhile is small enough to rewrite while it holds its
 * commits. */
#define WIDEN_FENCE_FILES 8
#define WIDEN_MAX_ROUNDS 4
#define WIDEN_COMMIT_TRIES 5
#define WIDEN_RETRY_MS 30000

/* ---- service ---------------------------------------------------------------- */

floe_tmaint_t *floe_tmaint_new(floe_ice_catalog_t *cat, floe_err_t *err)
{
    floe_tmaint_t *m = calloc(1, sizeof *m);
    for (int i = 0; m && i < 2; i++) {
        m->workers[i] = (worker_t){.m = m, .catchup = i == 1};
        if (!(m->workers[i].scratch = floe_pq_scratch_new())) {
            floe_pq_scratch_free(m->workers[0].scratch);
            free(m);
            m = NULL;
        }
    }
    if (!m) {
        floe_err_oom(err);
        return NULL;
    }
    m->cat = cat;
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->cv, NULL);
    return m;
}

void floe_tmaint_free(floe_tmaint_t *m)
{
    if (!m) return;
    floe_tmaint_stop(m);
    for (size_t i = 0; i < m->ndoubts; i++) {
        for (size_t k = 0; k < m->doubts[i].n; k++) free(m->doubts[i].paths[k]);
        free(m->doubts[i].paths);
        free(m->doubts[i].table);
    }
    free(m->doubts);
    free(m->tables);
    for (int i = 0; i < 2; i++) floe_pq_scratch_free(m->workers[i].scratch);
    pthread_mutex_destroy(&m->mu);
    pthread_cond_destroy(&m->cv);
    free(m);
}

static void settings_of(settings_t *s, const floe_table_config_t *cfg)
{
    s->compaction = cfg->compaction_enable;
    s->min_files = (size_t)cfg->compaction_min_input_files;
    s->compact_every = cfg->compaction_interval_ms;
    s->expire_every = cfg->expire_interval_ms;
    s->orphan_age = cfg->orphan_min_age_ms;
    s->commit_every = cfg->commit_interval_ms;
    s->max_bytes = (int64_t)cfg->compaction_max_bytes;
    s->target = (int64_t)cfg->target_file_bytes;
    s->delete_percent = cfg->compaction_delete_percent;
    s->delete_files = (size_t)cfg->compaction_delete_files;
}

/* Orphan removal never deletes files younger than this: a file the engine
 * wrote waits at most about a commit interval for its commit. */
static int64_t safe_orphan_age(const settings_t *s, int64_t asked)
{
    int64_t floor = 2 * s->commit_every + 60000;
    return asked > floor ? asked : floor;
}

static int64_t orphan_every(const settings_t *s)
{
    return s->orphan_age > 60000 ? s->orphan_age : 60000;
}

/* ---- tables ------------------------------------------------------------------ */

floe_tmaint_table_t *floe_tmaint_attach(floe_tmaint_t *m, const char *ns, const char *name,
                                        const char *topic, bool main,
                                        const floe_table_config_t *cfg, floe_err_t *err)
{
    floe_tmaint_table_t *h = calloc(1, sizeof *h);
    if (!h || !(h->topic = strdup(topic))) {
        free(h);
        floe_err_oom(err);
        return NULL;
    }
    h->m = m;
    snprintf(h->ns, sizeof h->ns, "%s", ns);
    snprintf(h->name, sizeof h->name, "%s", name);
    h->main = main;
    settings_of(&h->set, cfg);
    atomic_init(&h->cancel, false);
    atomic_init(&h->fence, FENCE_NONE);
    int64_t now = floe_mono_ms();
    h->late_said = now - 60000;
    h->next_compact = now + h->set.compact_every;
    h->next_expire = now + h->set.expire_every;
    h->next_orphans = now + orphan_every(&h->set);
    h->next_stats = now + 1000;
    pthread_mutex_lock(&m->mu);
    floe_tmaint_table_t **v = realloc(m->tables, (m->ntables + 1) * sizeof *v);
    if (v) {
        m->tables = v;
        m->tables[m->ntables++] = h;
        pthread_cond_broadcast(&m->cv);
    }
    pthread_mutex_unlock(&m->mu);
    if (!v) {
        free(h->topic);
        free(h);
        floe_err_oom(err);
        return NULL;
    }
    return h;
}

void floe_tmaint_detach(floe_tmaint_table_t *h)
{
    if (!h) return;
    floe_tmaint_t *m = h->m;
    pthread_mutex_lock(&m->mu);
    h->detaching = true;
    atomic_store(&h->cancel, true);
    while (h->busy) pthread_cond_wait(&m->cv, &m->mu);
    for (size_t i = 0; i < m->ntables; i++)
        if (m->tables[i] == h) {
            m->tables[i] = m->tables[--m->ntables];
            break;
        }
    for (opreq_t *rq = m->head; rq; rq = rq->next)
        if (rq->h == h) rq->h = NULL; /* queued: runs on the table's name alone */
    floe_tmaint_widen_t *job = h->job;
    h->job = NULL;
    pthread_mutex_unlock(&m->mu);
    floe_tmaint_widen_free(job, false); /* never committed */
    free(h->asked);
    free(h->jpairs);
    free(h->topic);
    free(h);
}

void floe_tmaint_configure(floe_tmaint_table_t *h, const floe_table_config_t *cfg)
{
    settings_t now_set;
    memset(&now_set, 0, sizeof now_set);
    settings_of(&now_set, cfg);
    pthread_mutex_lock(&h->m->mu);
    if (!memcmp(&now_set, &h->set, sizeof now_set)) { /* the engine asks every discovery */
        pthread_mutex_unlock(&h->m->mu);
        return;
    }
    settings_t old = h->set;
    h->set = now_set;
    /* a shorter interval takes effect now, not after the old one */
    int64_t now = floe_mono_ms();
    if (h->set.compact_every < old.compact_every && h->next_compact > now + h->set.compact_every)
        h->next_compact = now + h->set.compact_every;
    if (h->set.expire_every < old.expire_every && h->next_expire > now + h->set.expire_every)
        h->next_expire = now + h->set.expire_every;
    pthread_cond_broadcast(&h->m->cv);
    pthread_mutex_unlock(&h->m->mu);
}

void floe_tmaint_note_commit(floe_tmaint_table_t *h)
{
    pthread_mutex_lock(&h->m->mu);
    h->commits++;
    pthread_mutex_unlock(&h->m->mu);
}

/* The doubts of table ns.name; created when create. Lock held. */
static doubt_t *doubts_of(floe_tmaint_t *m, const char *ns, const char *name, bool create)
{
    char key[450];
    snprintf(key, sizeof key, "%s.%s", ns, name);
    for (size_t i = 0; i < m->ndoubts; i++)
        if (!strcmp(m->doubts[i].table, key)) return &m->doubts[i];
    if (!create) return NULL;
    doubt_t *v = realloc(m->doubts, (m->ndoubts + 1) * sizeof *v);
    if (!v) return NULL;
    m->doubts = v;
    doubt_t *d = &m->doubts[m->ndoubts];
    memset(d, 0, sizeof *d);
    if (!(d->table = strdup(key))) return NULL;
    m->ndoubts++;
    return d;
}

/* Lock held. */
static void doubt_add(floe_tmaint_t *m, const char *ns, const char *name, const char *path)
{
    doubt_t *d = doubts_of(m, ns, name, true);
    char **v = d ? realloc(d->paths, (d->n + 1) * sizeof *v) : NULL;
    char *p = v ? strdup(path) : NULL;
    if (v) d->paths = v;
    if (!p) {
        FLOE_ERROR("table %s.%s: out of memory noting %s in doubt: orphan removal is off for "
                   "the table until restart",
                   ns, name, path);
        if (d) d->n = SIZE_MAX; /* see in_doubt_copy */
        return;
    }
    if (d->n == SIZE_MAX) {
        free(p);
        return;
    }
    d->paths[d->n++] = p;
}

void floe_tmaint_in_doubt_add(floe_tmaint_t *m, const char *ns, const char *name, const char *path)
{
    pthread_mutex_lock(&m->mu);
    doubt_add(m, ns, name, path);
    pthread_mutex_unlock(&m->mu);
}

/* Copy of the doubts (lock held).  -1 when out of memory, or when a doubt
 * could not be noted (orphan removal must not run then). */
static int in_doubt_copy(floe_tmaint_t *m, const char *ns, const char *name, char ***paths,
                         size_t *n, floe_err_t *err)
{
    *paths = NULL;
    *n = 0;
    doubt_t *d = doubts_of(m, ns, name, false);
    if (!d || !d->n) return 0;
    if (d->n == SIZE_MAX)
        return floe_err_set(err, FLOE_ENOMEM, "table %s.%s: a file in doubt went unnoted", ns,
                            name);
    char **v = calloc(d->n, sizeof *v);
    if (!v) return floe_err_oom(err);
    for (size_t i = 0; i < d->n; i++)
        if (!(v[i] = strdup(d->paths[i]))) {
            for (size_t k = 0; k < i; k++) free(v[k]);
            free(v);
            return floe_err_oom(err);
        }
    *paths = v;
    *n = d->n;
    return 0;
}

int floe_tmaint_in_doubt(floe_tmaint_t *m, const char *ns, const char *name, char ***paths,
                         size_t *n, floe_err_t *err)
{
    pthread_mutex_lock(&m->mu);
    int rc = in_doubt_copy(m, ns, name, paths, n, err);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static void free_paths(char **p, size_t n)
{
    for (size_t i = 0; i < n; i++) free(p[i]);
    free(p);
}

/* ---- the fence of a contended commit ------------------------------------------ */

/* Before each attempt of a maintenance commit on h: from the third on
 * (two lost to the engine's commits), ask the engine to hold its commits
 * of the table and wait until it does (or FENCE_WAIT_MS, a stop, a
 * detach): the attempts after it cannot lose. */
static void contended(void *ctx, int attempt)
{
    floe_tmaint_table_t *h = ctx;
    floe_tmaint_t *m = h->m;
    if (attempt < CONTENDED_AT) return;
    pthread_mutex_lock(&m->mu);
    if (atomic_load(&h->fence) == FENCE_NONE) {
        atomic_store(&h->fence, FENCE_WANTED);
        h->fences++;
        FLOE_INFO("table %s.%s: maintenance lost %d commit races to the engine: the engine "
                  "holds its commits of the table until this one lands",
                  h->ns, h->name, attempt - 1);
    }
    int64_t deadline = floe_mono_ms() + FENCE_WAIT_MS;
    while (atomic_load(&h->fence) == FENCE_WANTED && !m->stop && !h->detaching &&
           floe_mono_ms() < deadline) {
        struct timespec ts = floe_deadline_ms(100);
        pthread_cond_timedwait(&m->cv, &m->mu, &ts);
    }
    pthread_mutex_unlock(&m->mu);
}

/* The maintenance commit is over: the engine commits again. */
static void fence_release(floe_tmaint_table_t *h)
{
    if (!h || atomic_load(&h->fence) == FENCE_NONE) return;
    pthread_mutex_lock(&h->m->mu);
    atomic_store(&h->fence, FENCE_NONE);
    pthread_cond_broadcast(&h->m->cv);
    pthread_mutex_unlock(&h->m->mu);
}

bool floe_tmaint_fence_poll(floe_tmaint_table_t *h)
{
    if (!h) return false;
    int f = atomic_load(&h->fence);
    if (f == FENCE_WANTED) {
        pthread_mutex_lock(&h->m->mu);
        if (atomic_load(&h->fence) == FENCE_WANTED) atomic_store(&h->fence, FENCE_HELD);
        pthread_cond_broadcast(&h->m->cv);
        pthread_mutex_unlock(&h->m->mu);
        return true;
    }
    return f == FENCE_HELD;
}

/* ---- progress ------------------------------------------------------------------ */

typedef struct progress_ctx {
    floe_tmaint_table_t *h; /* may be NULL */
    const floe_tmaint_req_t *req;
    floe_buf_t *lines; /* an operator's request: every line, a JSON array's items */
} progress_ctx_t;

static void on_progress(void *ctx, const char *line)
{
    progress_ctx_t *pc = ctx;
    if (pc->h) {
        pthread_mutex_lock(&pc->h->m->mu);
        snprintf(pc->h->progress, sizeof pc->h->progress, "%s", line);
        pthread_mutex_unlock(&pc->h->m->mu);
    }
    if (pc->req && pc->req->progress) pc->req->progress(pc->req->progress_ctx, line);
    if (pc->lines) {
        if (pc->lines->len) floe_buf_append_u8(pc->lines, ',');
        floe_json_cstr(pc->lines, line);
    }
    FLOE_INFO("maintenance: %s", line);
}

/* Mark h as worked on (lock held); the op name shows in the status. */
static void begin(floe_tmaint_table_t *h, const char *op)
{
    h->busy = true;
    atomic_store(&h->cancel, h->detaching);
    snprintf(h->running, sizeof h->running, "%s", op);
    h->progress[0] = '\0';
}

/* Lock held. */
static void end(floe_tmaint_table_t *h)
{
    if (!strcmp(h->running, "widen")) h->widen_last = floe_mono_ms();
    h->busy = false;
    h->running[0] = '\0';
    h->progress[0] = '\0';
    pthread_cond_broadcast(&h->m->cv);
}

/* ---- the operations, with h's bookkeeping (lock not held) ------------------------ */

static void refresh_stats(floe_tmaint_t *m, floe_tmaint_table_t *h)
{
    floe_tmaint_stats_t st;
    floe_err_t e;
    int rc = floe_tmaint_stats(m->cat, h->ns, h->name, &st, &e);
    pthread_mutex_lock(&m->mu);
    if (rc == 0) {
        h->st = st;
        h->has_st = true;
    }
    pthread_mutex_unlock(&m->mu);
}

static void note_error(floe_tmaint_table_t *h, const char *what, const floe_err_t *e)
{
    pthread_mutex_lock(&h->m->mu);
    snprintf(h->last_error, sizeof h->last_error, "%s: %s", what, e->msg);
    pthread_mutex_unlock(&h->m->mu);
}

static int do_compact(floe_tmaint_t *m, floe_tmaint_table_t *h, const char *ns, const char *name,
                      const settings_t *s, bool all, floe_pq_scratch_t *scratch, progress_ctx_t *pc,
                      floe_tmaint_compact_result_t *r, floe_err_t *err)
{
    floe_tmaint_compact_opts_t o = {.target_file_bytes = s->target,
                                    .min_input_files = all ? 2 : s->min_files,
                                    .max_bytes = all ? 0 : s->max_bytes,
                                    /* on a schedule, a compacted file is rewritten
                                     * once the new data reaches a quarter of it */
                                    .tier_ratio = all ? 0 : 4,
                                    .delete_percent = s->delete_percent,
                                    .delete_files = s->delete_files,
                                    .scratch = scratch,
                                    .cancel = h ? &h->cancel : NULL,
                                    .progress = on_progress,
                                    .progress_ctx = pc,
                                    .contended = h && m->running ? contended : NULL,
                                    .contended_ctx = h};
    int rc = floe_tmaint_compact(m->cat, ns, name, &o, r, err);
    fence_release(h);
    if (!h) return rc;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < r->nin_doubt; i++) doubt_add(m, ns, name, r->in_doubt[i]);
    if (rc == 0 && r->snapshot_id >= 0) {
        h->compactions++;
        h->compact_files_in += r->files_in;
        h->compact_files_out += r->files_out;
        h->compact_bytes_in += (uint64_t)r->bytes_in;
        h->compact_bytes_out += (uint64_t)r->bytes_out;
        h->compact_ms += (uint64_t)r->duration_ms;
    } else if (rc < 0) {
        h->compact_failures++;
    }
    pthread_mutex_unlock(&m->mu);
    if (rc < 0) note_error(h, "compaction", err);
    return rc;
}

static int do_expire(floe_tmaint_t *m, floe_tmaint_table_t *h, const char *ns, const char *name,
                     int64_t older_than, int keep, floe_tmaint_expire_result_t *r, floe_err_t *err)
{
    floe_tmaint_expire_opts_t o = {.older_than_ms = older_than,
                                   .keep_last = keep,
                                   .contended = h && m->running ? contended : NULL,
                                   .contended_ctx = h};
    int rc = floe_tmaint_expire(m->cat, ns, name, &o, r, err);
    fence_release(h);
    if (!h) return rc;
    pthread_mutex_lock(&m->mu);
    if (rc == 0) {
        h->expiries++;
        h->expired_snapshots += r->snapshots_removed;
        h->expired_files += r->files_deleted;
    }
    pthread_mutex_unlock(&m->mu);
    if (rc < 0) note_error(h, "expiry", err);
    return rc;
}

/* Orphans of ns.name older than age_ms, files in doubt and the widening's
 * rewrites kept. */
static int do_orphans(floe_tmaint_t *m, floe_tmaint_table_t *h, const char *ns, const char *name,
                      int64_t age_ms, bool dry_run, floe_ice_orphan_result_t *r, floe_err_t *err)
{
    memset(r, 0, sizeof *r);
    char **doubt = NULL;
    size_t nd = 0;
    const char **keep = NULL;
    size_t nkeep = 0;
    pthread_mutex_lock(&m->mu);
    int rc = in_doubt_copy(m, ns, name, &doubt, &nd, err);
    const char **wout = NULL;
    size_t nw = h && h->job ? floe_tmaint_widen_outputs(h->job, &wout) : 0;
    if (rc == 0 && !(keep = calloc(nd + nw + 1, sizeof *keep))) rc = floe_err_oom(err);
    for (size_t i = 0; rc == 0 && i < nd; i++) keep[nkeep++] = doubt[i];
    for (size_t i = 0; rc == 0 && i < nw; i++) keep[nkeep++] = wout[i];
    pthread_mutex_unlock(&m->mu);
    if (rc == 0) {
        floe_ice_orphan_opts_t o = {
            .min_age_ms = age_ms, .in_doubt = keep, .nin_doubt = nkeep, .dry_run = dry_run};
        rc = floe_tmaint_remove_orphans(m->cat, ns, name, &o, r, err);
    }
    free(keep);
    free_paths(doubt, nd);
    if (!h) return rc;
    pthread_mutex_lock(&m->mu);
    if (rc == 0) {
        h->orphan_runs++;
        h->orphans_deleted += r->files_deleted;
    }
    pthread_mutex_unlock(&m->mu);
    if (rc < 0) note_error(h, "orphan removal", err);
    return rc;
}

/* ---- the schedule ------------------------------------------------------------------ */

typedef enum due { DUE_NONE, DUE_COMPACT, DUE_EXPIRE, DUE_ORPHANS, DUE_STATS } due_t;

/* h's widening state as the engine and the status see it (lock held):
 * running also when asked and not started yet, or while widen_run makes
 * its job (NONE with the job's pairs taken).  Without the second, an
 * engine polling in that moment took NONE for a job gone and asked again,
 * and the same field widened a second time after the first. */
static floe_tmaint_widen_state_t wstate_seen(const floe_tmaint_table_t *h)
{
    return h->wstate == FLOE_TMW_NONE && (h->nasked || h->njpairs) ? FLOE_TMW_RUNNING : h->wstate;
}

/* A widening's rewrites are planned on a snapshot and its files: no
 * compaction, expiry or orphan removal meanwhile (lock held). */
static bool widening(const floe_tmaint_table_t *h)
{
    return h->job || wstate_seen(h) != FLOE_TMW_NONE;
}

/* What of h is due at now (lock held). */
static due_t due_of(const floe_tmaint_table_t *h, int64_t now)
{
    if (h->busy || h->detaching) return DUE_NONE;
    if (!widening(h) && h->set.compaction && now >= h->next_compact) return DUE_COMPACT;
    if (!widening(h) && now >= h->next_expire) return DUE_EXPIRE;
    if (!widening(h) && now >= h->next_orphans) return DUE_ORPHANS;
    if (now >= h->next_stats) return DUE_STATS;
    return DUE_NONE;
}

static int64_t next_due(const floe_tmaint_table_t *h)
{
    int64_t t = h->next_expire;
    if (h->set.compaction && h->next_compact < t) t = h->next_compact;
    if (h->next_orphans < t) t = h->next_orphans;
    if (h->next_stats < t) t = h->next_stats;
    return t;
}

/* When the work of kind `what` of h fell due, and how late it may get
 * before the catch-up worker takes it (lock held). */
static int64_t due_at(const floe_tmaint_table_t *h, due_t what, int64_t *lag)
{
    int64_t every = what == DUE_COMPACT  ? h->set.compact_every
                    : what == DUE_EXPIRE ? h->set.expire_every
                                         : orphan_every(&h->set);
    *lag = what == DUE_STATS ? INT64_MAX / 2 : every * 2 > 5000 ? every * 2 : 5000;
    return what == DUE_COMPACT   ? h->next_compact
           : what == DUE_EXPIRE  ? h->next_expire
           : what == DUE_ORPHANS ? h->next_orphans
                                 : h->next_stats;
}

/* Run what is due for h (h->busy set by the caller, lock not held). */
static void run_due(floe_tmaint_t *m, floe_tmaint_table_t *h, due_t what,
                    floe_pq_scratch_t *scratch)
{
    pthread_mutex_lock(&m->mu);
    settings_t s = h->set;
    int64_t now = floe_mono_ms();
    bool changed = false;
    switch (what) {
    case DUE_COMPACT:
        h->next_compact = now + s.compact_every;
        changed = h->commits != h->commits_compacted;
        h->commits_compacted = h->commits;
        break;
    case DUE_EXPIRE:
        h->next_expire = now + s.expire_every;
        changed = h->commits != h->commits_expired || ++h->idle_expiries % 10 == 0;
        h->commits_expired = h->commits;
        break;
    case DUE_ORPHANS: h->next_orphans = now + orphan_every(&s); break;
    default: h->next_stats = INT64_MAX; break;
    }
    pthread_mutex_unlock(&m->mu);
    floe_err_t err;
    progress_ctx_t pc = {.h = h};
    if (what == DUE_COMPACT && changed) {
        floe_tmaint_compact_result_t r;
        if (do_compact(m, h, h->ns, h->name, &s, false, scratch, &pc, &r, &err) < 0 &&
            err.code != FLOE_ECLOSED)
            FLOE_WARN("table %s.%s: compaction failed (next run in %lld ms): %s", h->ns, h->name,
                      (long long)s.compact_every, err.msg);
        else if (r.snapshot_id >= 0)
            FLOE_INFO("table %s.%s: compacted %zu files (%.2f MB) into %zu in %lld ms", h->ns,
                      h->name, r.files_in, (double)r.bytes_in / 1e6, r.files_out,
                      (long long)r.duration_ms);
        floe_tmaint_compact_result_clear(&r);
    } else if (what == DUE_EXPIRE && changed) {
        floe_tmaint_expire_result_t r;
        if (do_expire(m, h, h->ns, h->name, 0, 0, &r, &err) < 0)
            FLOE_WARN("table %s.%s: snapshot expiry failed: %s", h->ns, h->name, err.msg);
        else if (r.snapshots_removed)
            FLOE_INFO("table %s.%s: expired %zu snapshots, %zu files deleted", h->ns, h->name,
                      r.snapshots_removed, r.files_deleted);
    } else if (what == DUE_ORPHANS) {
        floe_ice_orphan_result_t r;
        if (do_orphans(m, h, h->ns, h->name, safe_orphan_age(&s, s.orphan_age), false, &r, &err) <
            0)
            FLOE_WARN("table %s.%s: orphan removal failed: %s", h->ns, h->name, err.msg);
        else if (r.files_deleted)
            FLOE_INFO("table %s.%s: deleted %zu orphan files (%.2f MB)", h->ns, h->name,
                      r.files_deleted, (double)r.bytes_deleted / 1e6);
        floe_ice_orphan_result_clear(&r);
    }
    if (what == DUE_STATS || changed || what == DUE_ORPHANS) refresh_stats(m, h);
}

/* ---- widenings ------------------------------------------------------------------------ */

static bool has_pair(const floe_twiden_t *v, size_t n, int32_t from)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].from == from) return true;
    return false;
}

int floe_tmaint_widen_ask(floe_tmaint_table_t *h, const floe_twiden_t *pairs, size_t n,
                          floe_err_t *err)
{
    floe_tmaint_t *m = h->m;
    pthread_mutex_lock(&m->mu);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        /* the job's pairs: a job running, failed, or being made (NONE
         * with pairs: widen_run between taking them and RUNNING) */
        if (has_pair(h->asked, h->nasked, pairs[i].from) ||
            has_pair(h->jpairs, h->njpairs, pairs[i].from))
            continue;
        floe_twiden_t *v = realloc(h->asked, (h->nasked + 1) * sizeof *v);
        if (!v) rc = floe_err_oom(err);
        else {
            h->asked = v;
            h->asked[h->nasked++] = pairs[i];
        }
    }
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

floe_tmaint_widen_state_t floe_tmaint_widen_poll(floe_tmaint_table_t *h,
                                                 const floe_twiden_t **pairs, size_t *n)
{
    pthread_mutex_lock(&h->m->mu);
    floe_tmaint_widen_state_t s = wstate_seen(h);
    if (pairs) *pairs = h->jpairs;
    if (n) *n = h->njpairs;
    pthread_mutex_unlock(&h->m->mu);
    return s;
}

void floe_tmaint_widen_fenced(floe_tmaint_table_t *h)
{
    pthread_mutex_lock(&h->m->mu);
    if (h->wstate == FLOE_TMW_FENCE) h->wstate = FLOE_TMW_FENCED;
    pthread_cond_broadcast(&h->m->cv);
    pthread_mutex_unlock(&h->m->mu);
}

void floe_tmaint_widen_applied(floe_tmaint_table_t *h)
{
    pthread_mutex_lock(&h->m->mu);
    if (h->wstate == FLOE_TMW_SWITCHED) {
        h->wstate = FLOE_TMW_NONE;
        free(h->jpairs);
        h->jpairs = NULL;
        h->njpairs = 0;
    }
    pthread_cond_broadcast(&h->m->cv);
    pthread_mutex_unlock(&h->m->mu);
}

/* Whether h has widening work for the thread now (lock held). */
static bool widen_ready(const floe_tmaint_table_t *h, int64_t now)
{
    if (h->busy || h->detaching) return false;
    switch (h->wstate) {
    case FLOE_TMW_NONE: return h->nasked > 0;
    case FLOE_TMW_RUNNING:
    case FLOE_TMW_FENCED: return true;
    case FLOE_TMW_FAILED: return now >= h->retry_at;
    default: return false;
    }
}

/* The job failed: its rewrites go (unless in doubt), the engine lifts
 * its fence, the thread tries again later (lock held; job freed by the
 * caller after unlocking). */
static floe_tmaint_widen_t *widen_failed(floe_tmaint_table_t *h, const floe_err_t *e)
{
    FLOE_WARN("table %s.%s: widening failed (again in %d s; the records that need it wait): %s",
              h->ns, h->name, WIDEN_RETRY_MS / 1000, e->msg);
    snprintf(h->last_error, sizeof h->last_error, "widening: %s", e->msg);
    h->wstate = FLOE_TMW_FAILED;
    h->retry_at = floe_mono_ms() + WIDEN_RETRY_MS;
    floe_tmaint_widen_t *job = h->job;
    h->job = NULL;
    return job;
}

/* One step of h's widening (h->busy set by the caller, lock not held).
 * fence_ok: no engine runs beside (inline mode): the fence needs no
 * acknowledgement. */
static void widen_run(floe_tmaint_t *m, floe_tmaint_table_t *h, bool fence_ok)
{
    floe_err_t err;
    floe_tmaint_widen_t *drop = NULL;
    bool keep_files = false;
    pthread_mutex_lock(&m->mu);
    floe_tmaint_widen_state_t st = h->wstate;
    if (st == FLOE_TMW_NONE || st == FLOE_TMW_FAILED) {
        /* a new job: what was asked for (and a failed job's pairs again) */
        size_t keep = st == FLOE_TMW_FAILED ? h->njpairs : 0;
        size_t n = keep + h->nasked;
        floe_twiden_t *v = n ? realloc(keep ? h->jpairs : NULL, n * sizeof *v) : NULL;
        if (v) {
            memcpy(v + keep, h->asked, h->nasked * sizeof *v);
            if (!keep) free(h->jpairs);
            h->jpairs = v;
            h->njpairs = n;
            h->nasked = 0;
        }
        pthread_mutex_unlock(&m->mu);
        if (!n) return;
        floe_tmaint_widen_t *job =
            v ? floe_tmaint_widen_new(m->cat, h->ns, h->name, v, n, NULL, &err) : NULL;
        if (!v) floe_err_oom(&err);
        pthread_mutex_lock(&m->mu);
        if (!job) {
            widen_failed(h, &err);
        } else {
            h->job = job;
            h->wstate = FLOE_TMW_RUNNING;
            h->rounds = h->commit_tries = 0;
            h->widen_t0 = floe_mono_ms();
            h->widenings++;
            FLOE_INFO("table %s.%s: widening %zu long column(s) to double: rewriting the files "
                      "that hold them while the table keeps committing",
                      h->ns, h->name, n);
        }
        pthread_mutex_unlock(&m->mu);
        return;
    }
    floe_tmaint_widen_t *job = h->job;
    pthread_mutex_unlock(&m->mu);
    if (st == FLOE_TMW_RUNNING) {
        size_t files;
        int64_t bytes;
        int rc = floe_tmaint_widen_round(job, &h->cancel, &files, &bytes, &err);
        int64_t tb;
        size_t tf = floe_tmaint_widen_done(job, &tb);
        pthread_mutex_lock(&m->mu);
        h->rounds++;
        snprintf(h->progress, sizeof h->progress,
                 "widening: round %d rewrote %zu files (%.2f MB); %zu files (%.2f MB) so far",
                 h->rounds, files, (double)bytes / 1e6, tf, (double)tb / 1e6);
        if (rc < 0 && err.code != FLOE_ECLOSED) {
            drop = widen_failed(h, &err);
        } else if (rc == 0 && (files <= WIDEN_FENCE_FILES || h->rounds >= WIDEN_MAX_ROUNDS)) {
            h->wstate = fence_ok ? FLOE_TMW_FENCED : FLOE_TMW_FENCE;
        }
        pthread_mutex_unlock(&m->mu);
        if (rc == 0) FLOE_INFO("table %s.%s: %s", h->ns, h->name, h->progress);
    } else if (st == FLOE_TMW_FENCED) {
        int64_t snap = -1;
        int rc = floe_tmaint_widen_commit(job, &h->cancel, &snap, &err);
        int landed = -1;
        if (rc < 0 && err.code == FLOE_EUNKNOWN) {
            floe_err_t le;
            landed = floe_tmaint_widen_landed(job, &le);
        }
        pthread_mutex_lock(&m->mu);
        if (rc == 0 || landed == 1) {
            int64_t tb;
            size_t tf = floe_tmaint_widen_done(job, &tb);
            h->widen_files += tf;
            FLOE_INFO("table %s.%s: widening committed (snapshot %lld): %zu files (%.2f MB) "
                      "rewritten in %lld ms",
                      h->ns, h->name, (long long)snap, tf, (double)tb / 1e6,
                      (long long)(floe_mono_ms() - h->widen_t0));
            h->wstate = FLOE_TMW_SWITCHED;
            drop = job;
            h->job = NULL;
            keep_files = true;
        } else if (err.code == FLOE_ECLOSED) {
            /* cancelled: detach frees the job */
        } else if (err.code == FLOE_EUNKNOWN && landed < 0) {
            snprintf(h->last_error, sizeof h->last_error, "widening: %s (checking again)",
                     err.msg); /* the fence stays: a commit cannot tell either */
        } else if (err.code == FLOE_ECONFLICT && ++h->commit_tries < WIDEN_COMMIT_TRIES) {
            /* data came in after the last round: round and commit again */
        } else {
            if (landed == 0) { /* unknown and not in: the rewrites may never be read */
                const char **outs;
                size_t no = floe_tmaint_widen_outputs(job, &outs);
                for (size_t i = 0; i < no; i++) doubt_add(m, h->ns, h->name, outs[i]);
                keep_files = true;
            }
            drop = widen_failed(h, &err);
        }
        pthread_mutex_unlock(&m->mu);
    }
    floe_tmaint_widen_free(drop, keep_files);
}

floe_tmaint_widen_state_t floe_tmaint_widen_step(floe_tmaint_table_t *h)
{
    floe_tmaint_t *m = h->m;
    pthread_mutex_lock(&m->mu);
    /* inline: a failed job is tried again at once; one inline operation
     * at a time (they share the scratch) */
    while (m->inline_busy) pthread_cond_wait(&m->cv, &m->mu);
    bool go = widen_ready(h, INT64_MAX);
    if (go) {
        begin(h, "widen");
        m->inline_busy = true;
    }
    pthread_mutex_unlock(&m->mu);
    if (go) widen_run(m, h, true);
    pthread_mutex_lock(&m->mu);
    if (go) {
        m->inline_busy = false;
        end(h);
    }
    floe_tmaint_widen_state_t s = h->wstate;
    pthread_mutex_unlock(&m->mu);
    return s;
}

/* ---- operator requests ----------------------------------------------------------------- */

/* Resolve name into rq's ns and name (and its attached table). Lock held. */
static int resolve(floe_tmaint_t *m, const char *name, opreq_t *rq, floe_err_t *err)
{
    for (size_t i = 0; i < m->ntables; i++) {
        floe_tmaint_table_t *h = m->tables[i];
        char full[450];
        snprintf(full, sizeof full, "%s.%s", h->ns, h->name);
        bool bare = !strcmp(h->ns, "default") && !strcmp(name, h->name);
        if (bare || !strcmp(name, full) || (h->main && !strcmp(name, h->topic))) {
            snprintf(rq->ns, sizeof rq->ns, "%s", h->ns);
            snprintf(rq->name, sizeof rq->name, "%s", h->name);
            rq->h = h;
            return 0;
        }
    }
    const char *dot = strchr(name, '.');
    size_t nl = dot ? (size_t)(dot - name) : 0;
    if ((dot && (nl == 0 || nl >= sizeof rq->ns || !dot[1] || strchr(dot + 1, '.'))) ||
        strlen(dot ? dot + 1 : name) >= sizeof rq->name || !*name)
        return floe_err_set(err, FLOE_EINVAL, "bad table name '%s' (NAMESPACE.TABLE or TABLE)",
                            name);
    snprintf(rq->ns, sizeof rq->ns, "%.*s", dot ? (int)nl : 7, dot ? name : "default");
    snprintf(rq->name, sizeof rq->name, "%s", dot ? dot + 1 : name);
    return 0;
}

static const char *op_name(floe_tmaint_op_t op)
{
    return op == FLOE_TMAINT_COMPACT  ? "compact"
           : op == FLOE_TMAINT_EXPIRE ? "expire"
                                      : "remove-orphans";
}

/* Run request rq (lock not held; rq->h busy when set). */
static void run_request(floe_tmaint_t *m, opreq_t *rq, floe_pq_scratch_t *scratch)
{
    const floe_tmaint_req_t *req = rq->req;
    floe_tmaint_table_t *h = rq->h;
    settings_t s = {.min_files = 2,
                    .target = 64 << 20,
                    .orphan_age = 3600000,
                    .delete_percent = 10,
                    .delete_files = 20};
    if (h) {
        pthread_mutex_lock(&m->mu);
        s = h->set;
        pthread_mutex_unlock(&m->mu);
    }
    floe_buf_t lines = FLOE_BUF_INIT;
    progress_ctx_t pc = {.h = h, .req = req, .lines = &lines};
    floe_buf_t *o = rq->out;
    char full[450];
    snprintf(full, sizeof full, "%s.%s", rq->ns, rq->name);
    floe_buf_append_str(o, "{\"table\":");
    floe_json_cstr(o, full);
    floe_buf_printf(o, ",\"op\":\"%s\"", op_name(req->op));
    if (req->op == FLOE_TMAINT_COMPACT) {
        floe_tmaint_compact_result_t r;
        rq->rc = do_compact(m, h, rq->ns, rq->name, &s, true, scratch, &pc, &r, &rq->err);
        floe_buf_printf(o,
                        ",\"small_files\":%zu,\"groups\":%zu,\"files_in\":%zu,\"files_out\":%zu,"
                        "\"bytes_in\":%lld,\"bytes_out\":%lld,\"records\":%lld,"
                        "\"rows_deleted\":%lld,\"delete_files_removed\":%zu,"
                        "\"snapshot_id\":%lld,\"duration_ms\":%lld,\"progress\":[",
                        r.small_files, r.groups, r.files_in, r.files_out, (long long)r.bytes_in,
                        (long long)r.bytes_out, (long long)r.records, (long long)r.rows_deleted,
                        r.delete_files_removed, (long long)r.snapshot_id, (long long)r.duration_ms);
        floe_buf_append(o, lines.data, lines.len);
        floe_buf_append_str(o, "]}");
        floe_tmaint_compact_result_clear(&r);
    } else if (req->op == FLOE_TMAINT_EXPIRE) {
        floe_tmaint_expire_result_t r;
        int64_t older = req->older_than_ms >= 0 ? floe_wall_ms() - req->older_than_ms : 0;
        rq->rc = do_expire(m, h, rq->ns, rq->name, older, req->keep, &r, &rq->err);
        floe_buf_printf(o,
                        ",\"snapshots_removed\":%zu,\"files_deleted\":%zu,\"bytes_deleted\":%lld,"
                        "\"delete_failures\":%zu,\"waited_for_redrive\":%s}",
                        r.snapshots_removed, r.files_deleted, (long long)r.bytes_deleted,
                        r.delete_failures, r.waited ? "true" : "false");
    } else {
        int64_t age = req->older_than_ms >= 0 ? req->older_than_ms : s.orphan_age;
        if (h) age = safe_orphan_age(&s, age); /* the engine's files awaiting their commit */
        floe_ice_orphan_result_t r;
        rq->rc = do_orphans(m, h, rq->ns, rq->name, age, req->dry_run, &r, &rq->err);
        floe_buf_printf(o,
                        ",\"older_than_ms\":%lld,\"dry_run\":%s,\"files_listed\":%zu,"
                        "\"files_reachable\":%zu,\"orphans\":%zu,\"files_deleted\":%zu,"
                        "\"bytes_deleted\":%lld,\"too_young\":%zu,\"in_doubt_kept\":%zu,"
                        "\"failed\":%zu,\"paths\":[",
                        (long long)age, req->dry_run ? "true" : "false", r.files_listed,
                        r.files_reachable, r.orphans, r.files_deleted, (long long)r.bytes_deleted,
                        r.too_young, r.in_doubt_kept, r.failed);
        for (size_t i = 0; i < r.npaths; i++) {
            if (i) floe_buf_append_u8(o, ',');
            floe_json_cstr(o, r.paths[i]);
        }
        floe_buf_append_str(o, "]}");
        floe_ice_orphan_result_clear(&r);
    }
    floe_buf_free(&lines);
    if (h) refresh_stats(m, h);
}

int floe_tmaint_run(floe_tmaint_t *m, const char *name, const floe_tmaint_req_t *req,
                    floe_buf_t *out, floe_err_t *err)
{
    opreq_t rq;
    memset(&rq, 0, sizeof rq);
    rq.req = req;
    rq.out = out;
    pthread_mutex_lock(&m->mu);
    if (resolve(m, name, &rq, err) < 0) {
        pthread_mutex_unlock(&m->mu);
        return -1;
    }
    if (m->running) {
        if (m->stop) {
            pthread_mutex_unlock(&m->mu);
            return floe_err_set(err, FLOE_ECLOSED, "the table engine is stopping");
        }
        rq.queued_ms = floe_mono_ms();
        if (m->tail) m->tail->next = &rq;
        else
            m->head = &rq;
        m->tail = &rq;
        pthread_cond_broadcast(&m->cv);
        while (!rq.done) pthread_cond_wait(&m->cv, &m->mu);
        pthread_mutex_unlock(&m->mu);
    } else {
        /* one inline operation at a time (they share the scratch); the
         * table may go meanwhile (then it runs on the name alone) */
        while (m->inline_busy) pthread_cond_wait(&m->cv, &m->mu);
        m->inline_busy = true;
        rq.h = NULL;
        opreq_t again;
        memset(&again, 0, sizeof again);
        if (resolve(m, name, &again, err) == 0) rq.h = again.h;
        if (rq.h) {
            while (rq.h->busy) pthread_cond_wait(&m->cv, &m->mu);
            begin(rq.h, op_name(req->op));
        }
        pthread_mutex_unlock(&m->mu);
        run_request(m, &rq, m->workers[0].scratch);
        pthread_mutex_lock(&m->mu);
        if (rq.h) end(rq.h);
        m->inline_busy = false;
        pthread_cond_broadcast(&m->cv);
        pthread_mutex_unlock(&m->mu);
    }
    if (rq.rc < 0) *err = rq.err;
    return rq.rc;
}

/* ---- the thread -------------------------------------------------------------------------- */

/* Low priority for this thread only: nice 10 (Linux applies it per
 * thread), and the lowest best-effort I/O priority. */
static void lower_priority(void)
{
    pid_t tid = (pid_t)syscall(SYS_gettid);
    if (setpriority(PRIO_PROCESS, (id_t)tid, 10) < 0)
        FLOE_DEBUG("maintenance: cannot lower the thread's CPU priority");
#ifdef SYS_ioprio_set
    /* IOPRIO_WHO_PROCESS = 1, class best-effort (2) << 13 | level 7 */
    syscall(SYS_ioprio_set, 1, (int)tid, (2 << 13) | 7);
#endif
}

/* The next piece of work for w (lock held): a request, a widening step or
 * something due; the catch-up worker only takes what is late.  *wake: when
 * to look again when there is nothing. */
typedef struct pick {
    opreq_t *rq;
    floe_tmaint_table_t *h;
    due_t what;
    bool widen;
} pick_t;

static bool pick_work(floe_tmaint_t *m, const worker_t *w, int64_t now, pick_t *p, int64_t *wake)
{
    memset(p, 0, sizeof *p);
    *wake = now + 1000;
    if (m->head && (!w->catchup || now - m->head->queued_ms >= 5000)) {
        p->rq = m->head;
        m->head = p->rq->next;
        if (!m->head) m->tail = NULL;
        return true;
    }
    for (size_t i = 0; i < m->ntables; i++) {
        floe_tmaint_table_t *h = m->tables[i];
        if (widen_ready(h, now) && (!w->catchup || now - h->widen_last >= 5000)) {
            p->h = h;
            p->widen = true;
            return true;
        }
    }
    for (size_t i = 0; i < m->ntables; i++) {
        floe_tmaint_table_t *h = m->tables[i];
        due_t d = due_of(h, now);
        int64_t lag;
        if (d != DUE_NONE && (!w->catchup || now - due_at(h, d, &lag) >= lag)) {
            p->h = h;
            p->what = d;
            return true;
        }
        if (!w->catchup && d == DUE_NONE && !h->busy && !h->detaching && !widening(h) &&
            next_due(h) < *wake)
            *wake = next_due(h);
    }
    return false;
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    floe_tmaint_t *m = w->m;
    if (!w->catchup) lower_priority();
    pthread_mutex_lock(&m->mu);
    while (!m->stop) {
        int64_t now = floe_mono_ms(), wake;
        pick_t p;
        if (!pick_work(m, w, now, &p, &wake)) {
            if (wake > now) {
                struct timespec ts = floe_deadline_ms(wake - now);
                pthread_cond_timedwait(&m->cv, &m->mu, &ts);
            }
            continue;
        }
        if (p.rq) {
            opreq_t *rq = p.rq;
            if (rq->h && (rq->h->detaching || rq->h->busy)) {
                if (rq->h->busy && !rq->h->detaching) { /* the other worker has it: later */
                    rq->next = m->head;
                    m->head = rq;
                    if (!m->tail) m->tail = rq;
                    pthread_cond_wait(&m->cv, &m->mu);
                    continue;
                }
                rq->h = NULL; /* gone meanwhile */
            }
            if (rq->h) begin(rq->h, op_name(rq->req->op));
            pthread_mutex_unlock(&m->mu);
            run_request(m, rq, w->scratch);
            pthread_mutex_lock(&m->mu);
            if (rq->h) end(rq->h);
            rq->done = true;
            pthread_cond_broadcast(&m->cv);
            continue;
        }
        begin(p.h, p.widen                 ? "widen"
                   : p.what == DUE_COMPACT ? "compact"
                   : p.what == DUE_EXPIRE  ? "expire"
                   : p.what == DUE_ORPHANS ? "remove-orphans"
                                           : "stats");
        bool say = w->catchup && now - p.h->late_said >= 60000;
        if (w->catchup) p.h->late_runs++;
        if (say) p.h->late_said = now;
        pthread_mutex_unlock(&m->mu);
        if (say)
            FLOE_INFO("table %s.%s: maintenance is late (its low-priority thread gets too little "
                      "CPU): %s and what else is late run at normal priority",
                      p.h->ns, p.h->name, p.h->running);
        if (p.widen) widen_run(m, p.h, false);
        else
            run_due(m, p.h, p.what, w->scratch);
        pthread_mutex_lock(&m->mu);
        end(p.h);
    }
    /* requests still queued are refused */
    for (opreq_t *rq = m->head; rq; rq = rq->next) {
        rq->rc = floe_err_set(&rq->err, FLOE_ECLOSED, "the table engine is stopping");
        rq->done = true;
    }
    m->head = m->tail = NULL;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

int floe_tmaint_start(floe_tmaint_t *m, floe_err_t *err)
{
    if (m->running) return 0;
    m->stop = false;
    for (int i = 0; i < 2; i++) {
        int rc = pthread_create(&m->workers[i].thread, NULL, worker_main, &m->workers[i]);
        if (rc) {
            if (i) { /* the first one runs: stop it */
                pthread_mutex_lock(&m->mu);
                m->stop = true;
                pthread_cond_broadcast(&m->cv);
                pthread_mutex_unlock(&m->mu);
                pthread_join(m->workers[0].thread, NULL);
            }
            return floe_err_errno(err, rc, "starting the table maintenance threads");
        }
    }
    pthread_mutex_lock(&m->mu);
    m->running = true;
    pthread_mutex_unlock(&m->mu);
    return 0;
}

void floe_tmaint_stop(floe_tmaint_t *m)
{
    if (!m || !m->running) return;
    pthread_mutex_lock(&m->mu);
    m->stop = true;
    for (size_t i = 0; i < m->ntables; i++) atomic_store(&m->tables[i]->cancel, true);
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    for (int i = 0; i < 2; i++) pthread_join(m->workers[i].thread, NULL);
    pthread_mutex_lock(&m->mu);
    m->running = false;
    for (size_t i = 0; i < m->ntables; i++) atomic_store(&m->tables[i]->cancel, false);
    pthread_mutex_unlock(&m->mu);
}

/* ---- status ------------------------------------------------------------------------------- */

static const char *wstate_name(floe_tmaint_widen_state_t s)
{
    switch (s) {
    case FLOE_TMW_RUNNING: return "rewriting";
    case FLOE_TMW_FENCE: return "fence asked";
    case FLOE_TMW_FENCED: return "committing";
    case FLOE_TMW_SWITCHED: return "committed";
    case FLOE_TMW_FAILED: return "failed";
    default: return "none";
    }
}

/* The object of h (lock held). */
static int table_json(const floe_tmaint_table_t *h, floe_buf_t *js)
{
    const floe_tmaint_stats_t *s = &h->st;
    int64_t avg =
        h->has_st && s->data_files > 0 && s->data_bytes >= 0 ? s->data_bytes / s->data_files : -1;
    floe_buf_printf(js,
                    "{\"data_files\":%lld,\"data_bytes\":%lld,\"avg_file_bytes\":%lld,"
                    "\"snapshots\":%lld,\"manifests\":%lld,\"metadata_json_bytes\":%lld,"
                    "\"metadata_bytes\":%lld,\"metadata_files\":%lld,",
                    (long long)(h->has_st ? s->data_files : -1),
                    (long long)(h->has_st ? s->data_bytes : -1), (long long)avg,
                    (long long)(h->has_st ? s->snapshots : -1),
                    (long long)(h->has_st ? s->manifests : -1),
                    (long long)(h->has_st ? s->metadata_json_bytes : -1),
                    (long long)(h->has_st ? s->metadata_bytes : -1),
                    (long long)(h->has_st ? s->metadata_files : -1));
    floe_buf_printf(
        js,
        "\"compactions\":%llu,\"compaction_failures\":%llu,"
        "\"compacted_files_in\":%llu,\"compacted_files_out\":%llu,"
        "\"compacted_bytes_in\":%llu,\"compacted_bytes_out\":%llu,"
        "\"compaction_ms\":%llu,\"expiries\":%llu,\"expired_snapshots\":%llu,"
        "\"expired_files\":%llu,\"orphan_runs\":%llu,\"orphans_deleted\":%llu,"
        "\"widenings\":%llu,\"widened_files\":%llu,\"widening\":\"%s\",\"late_runs\":%llu,"
        "\"fences\":%llu,\"running\":",
        (unsigned long long)h->compactions, (unsigned long long)h->compact_failures,
        (unsigned long long)h->compact_files_in, (unsigned long long)h->compact_files_out,
        (unsigned long long)h->compact_bytes_in, (unsigned long long)h->compact_bytes_out,
        (unsigned long long)h->compact_ms, (unsigned long long)h->expiries,
        (unsigned long long)h->expired_snapshots, (unsigned long long)h->expired_files,
        (unsigned long long)h->orphan_runs, (unsigned long long)h->orphans_deleted,
        (unsigned long long)h->widenings, (unsigned long long)h->widen_files,
        wstate_name(wstate_seen(h)), (unsigned long long)h->late_runs,
        (unsigned long long)h->fences);
    if (h->running[0]) floe_json_cstr(js, h->running);
    else
        floe_buf_append_str(js, "null");
    floe_buf_append_str(js, ",\"progress\":");
    floe_json_cstr(js, h->progress);
    floe_buf_append_str(js, ",\"last_error\":");
    floe_json_cstr(js, h->last_error);
    return floe_buf_append_u8(js, '}');
}

int floe_tmaint_status_json(floe_tmaint_table_t *h, const char *key, floe_buf_t *js)
{
    if (!h) return 0;
    pthread_mutex_lock(&h->m->mu);
    floe_buf_printf(js, ",\"%s\":", key);
    int rc = table_json(h, js);
    pthread_mutex_unlock(&h->m->mu);
    return rc;
}

int floe_tmaint_table_json(floe_tmaint_t *m, const char *name, floe_buf_t *out, floe_err_t *err)
{
    opreq_t rq;
    memset(&rq, 0, sizeof rq);
    pthread_mutex_lock(&m->mu);
    int rc = resolve(m, name, &rq, err);
    if (rc == 0 && !rq.h)
        rc = floe_err_set(err, FLOE_ENOENT, "no table topic writes a table '%s'", name);
    if (rc == 0) {
        char full[450];
        snprintf(full, sizeof full, "%s.%s", rq.ns, rq.name);
        floe_buf_append_str(out, "{\"table\":");
        floe_json_cstr(out, full);
        floe_buf_append_str(out, ",\"maintenance\":");
        table_json(rq.h, out);
        rc = floe_buf_append_u8(out, '}');
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

enum {
    MM_FILES,
    MM_AVG,
    MM_META,
    MM_META_JSON,
    MM_SNAPS,
    MM_MANIFESTS,
    MM_COMPACTIONS,
    MM_COMPACT_BYTES,
    MM_COMPACT_SECONDS,
    MM_EXPIRED,
    MM_ORPHANS,
    MM_N
};

static const struct {
    const char *name, *type, *help;
} mfam[MM_N] = {
    {"floe_table_data_files", "gauge", "Live data files of the table's current snapshot."},
    {"floe_table_avg_file_bytes", "gauge", "Average size of the live data files."},
    {"floe_table_metadata_bytes", "gauge", "Bytes of every file in the table's metadata folder."},
    {"floe_table_metadata_json_bytes", "gauge", "Size of the current vN.metadata.json."},
    {"floe_table_snapshots", "gauge", "Snapshots kept in the table's metadata."},
    {"floe_table_manifests", "gauge", "Manifests in the current snapshot's manifest list."},
    {"floe_table_compactions_total", "counter", "Compaction runs committed."},
    {"floe_table_compaction_bytes_total", "counter", "Input bytes rewritten by compaction."},
    {"floe_table_compaction_seconds_total", "counter", "Time spent compacting."},
    {"floe_table_expired_snapshots_total", "counter", "Snapshots removed by expiry."},
    {"floe_table_orphan_files_deleted_total", "counter", "Orphan files deleted."},
};

int floe_tmaint_metrics(floe_tmaint_t *m, floe_buf_t *out)
{
    pthread_mutex_lock(&m->mu);
    for (int f = 0; f < MM_N; f++) {
        floe_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", mfam[f].name, mfam[f].help,
                        mfam[f].name, mfam[f].type);
        for (size_t i = 0; i < m->ntables; i++) {
            const floe_tmaint_table_t *h = m->tables[i];
            const floe_tmaint_stats_t *s = &h->st;
            if (f <= MM_MANIFESTS && !h->has_st) continue;
            double v = 0;
            switch (f) {
            case MM_FILES: v = (double)s->data_files; break;
            case MM_AVG: v = s->data_files > 0 ? (double)s->data_bytes / s->data_files : 0; break;
            case MM_META: v = (double)s->metadata_bytes; break;
            case MM_META_JSON: v = (double)s->metadata_json_bytes; break;
            case MM_SNAPS: v = (double)s->snapshots; break;
            case MM_MANIFESTS: v = (double)s->manifests; break;
            case MM_COMPACTIONS: v = (double)h->compactions; break;
            case MM_COMPACT_BYTES: v = (double)h->compact_bytes_in; break;
            case MM_COMPACT_SECONDS: v = (double)h->compact_ms / 1000.0; break;
            case MM_EXPIRED: v = (double)h->expired_snapshots; break;
            default: v = (double)h->orphans_deleted; break;
            }
            floe_buf_printf(out, "%s{table=\"%s.%s\"} %.17g\n", mfam[f].name, h->ns, h->name, v);
        }
    }
    pthread_mutex_unlock(&m->mu);
    return 0;
}
