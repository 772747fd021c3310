/* The table-engine source over registered partition logs
 * (source_logs.h). */
#include "table/source_logs.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "table/source_batches.h"
#include "util/mem.h"

/* Per partition: the engine fetched from it (its appends are news), and
 * it is listed in the news now. */
enum { LP_WATCHED = 1 << 0, LP_NEWS = 1 << 1 };

typedef struct ltopic {
    char *name;
    int32_t nparts;
    floe_log_t **logs;
    int64_t *cursor;
    uint8_t *flags; /* LP_* per partition */
    size_t nconfigs;
    char **keys, **values;
} ltopic_t;

/* A partition with news for the engine. */
typedef struct lnews {
    ltopic_t *t;
    int32_t part;
} lnews_t;

struct floe_tsource_logs {
    floe_tsource_t base;
    pthread_mutex_t mu; /* guards everything below but the fetch's own */
    pthread_cond_t idle;
    floe_log_t *reading; /* the log a fetch reads outside mu, or NULL */
    ltopic_t **t;        /* sorted by name; each stays where it is while registered */
    size_t n, cap;
    uint64_t version; /* of the topic set */
    lnews_t *news;
    size_t nnews, capnews;
    bool news_lost; /* out of memory listing news: every watched partition has some */
    floe_tsource_wake_fn wake;
    void *wake_arg;
    bool woke; /* woken, and the engine has not taken the news yet */
    /* the engine's fetch: the batches read and their decoder */
    floe_buf_t buf;
    floe_tbatches_t dec;
};

static void ltopic_free(ltopic_t *t)
{
    if (!t) return;
    free(t->name);
    free(t->logs);
    free(t->cursor);
    free(t->flags);
    for (size_t i = 0; i < t->nconfigs; i++) {
        free(t->keys[i]);
        free(t->values[i]);
    }
    free(t->keys);
    free(t->values);
    free(t);
}

static int cmp_name(const void *name, const void *elem)
{
    return strcmp(name, (*(ltopic_t *const *)elem)->name);
}

/* Index of the first topic whose name is not below name.  Under s->mu. */
static size_t lower_bound(const floe_tsource_logs_t *s, const char *name)
{
    return floe_lower_bound(name, s->t, s->n, sizeof *s->t, cmp_name);
}

static ltopic_t *find(floe_tsource_logs_t *s, const char *name)
{
    size_t i = lower_bound(s, name);
    return i < s->n && !strcmp(s->t[i]->name, name) ? s->t[i] : NULL;
}

/* Topic name once no fetch reads one of its logs (they may be closed
 * after it is replaced or removed), or NULL.  Under s->mu. */
static ltopic_t *find_unread(floe_tsource_logs_t *s, const char *name)
{
    for (;;) {
        ltopic_t *t = find(s, name);
        bool busy = false;
        for (int32_t i = 0; t && s->reading && i < t->nparts; i++) busy |= t->logs[i] == s->reading;
        if (!busy) return t;
        pthread_cond_wait(&s->idle, &s->mu);
    }
}

/* Tell the engine there is news, once until it takes them.  Under s->mu
 * (so no wake runs after watch(NULL) returns). */
static void wake(floe_tsource_logs_t *s)
{
    if (s->woke || !s->wake) return;
    s->woke = true;
    s->wake(s->wake_arg);
}

/* The topic set changed.  Under s->mu. */
static void topics_changed(floe_tsource_logs_t *s)
{
    s->version++;
    wake(s);
}

/* Drop the news of topic t from partition `from` on.  Under s->mu. */
static void forget_news(floe_tsource_logs_t *s, const ltopic_t *t, int32_t from)
{
    size_t k = 0;
    for (size_t i = 0; i < s->nnews; i++)
        if (s->news[i].t != t || s->news[i].part < from) s->news[k++] = s->news[i];
    s->nnews = k;
}

static int topics(floe_tsource_t *src, floe_tsource_topic_t **out, size_t *n, floe_err_t *err)
{
    floe_tsource_logs_t *s = (floe_tsource_logs_t *)src;
    pthread_mutex_lock(&s->mu);
    floe_tsource_topic_t *v = calloc(s->n ? s->n : 1, sizeof *v);
    size_t k = 0;
    if (!v) goto oom;
    for (; k < s->n; k++) {
        ltopic_t *t = s->t[k];
        v[k].partitions = t->nparts;
        v[k].nconfigs = t->nconfigs;
        if (!(v[k].name = strdup(t->name)) ||
            !(v[k].keys = calloc(t->nconfigs ? t->nconfigs : 1, sizeof(char *))) ||
            !(v[k].values = calloc(t->nconfigs ? t->nconfigs : 1, sizeof(char *))))
            goto oom_k;
        for (size_t c = 0; c < t->nconfigs; c++)
            if (!(v[k].keys[c] = strdup(t->keys[c])) || !(v[k].values[c] = strdup(t->values[c])))
                goto oom_k;
    }
    pthread_mutex_unlock(&s->mu);
    *out = v;
    *n = k;
    return 0;
oom_k:
    k++;
oom:
    pthread_mutex_unlock(&s->mu);
    floe_tsource_topics_free(v, k);
    return floe_err_set(err, FLOE_ENOMEM, "out of memory listing topics");
}

/* The registry lock is not held while the log reads from disk: the log
 * pointer is marked as being read instead, and replacing or removing its
 * topic waits for the read (find_unread), so the broker's changes to other
 * topics never wait for the engine's disk I/O.  From its first fetch on,
 * a partition's appends are news for the engine. */
static int fetch(floe_tsource_t *src, const char *topic, int32_t partition, int64_t offset,
                 size_t max_bytes, int64_t *start, int64_t *end, floe_err_t *err)
{
    floe_tsource_logs_t *s = (floe_tsource_logs_t *)src;
    floe_buf_reset(&s->buf);
    floe_tbatches_start(&s->dec, NULL, 0, offset);
    pthread_mutex_lock(&s->mu);
    ltopic_t *t = find(s, topic);
    if (!t || partition < 0 || partition >= t->nparts) {
        pthread_mutex_unlock(&s->mu);
        return floe_err_set(err, FLOE_ENOENT, "no partition %s-%d", topic, (int)partition);
    }
    floe_log_t *l = t->logs[partition];
    t->flags[partition] |= LP_WATCHED;
    s->reading = l;
    pthread_mutex_unlock(&s->mu);
    *start = floe_log_start_offset(l);
    *end = floe_log_end_offset(l);
    int rc = 0;
    if (offset < *start) {
        rc = floe_err_set(err, FLOE_ERANGE, "offset %lld is below the log start %lld",
                          (long long)offset, (long long)*start);
    } else if (offset < *end) {
        floe_log_read_info_t info;
        rc = floe_log_read(l, offset, max_bytes, &s->buf, &info, err);
        if (rc == 0) {
            *start = info.log_start_offset;
            *end = info.end_offset;
        }
    }
    pthread_mutex_lock(&s->mu);
    s->reading = NULL;
    pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->mu);
    if (rc == 0) floe_tbatches_start(&s->dec, s->buf.data, s->buf.len, offset);
    return rc;
}

static int next(floe_tsource_t *src, floe_tmsg_t *m, floe_err_t *err)
{
    floe_tsource_logs_t *s = (floe_tsource_logs_t *)src;
    return floe_tbatches_next(&s->dec, m, err);
}

static void committed(floe_tsource_t *src, const char *topic, int32_t partition, int64_t next)
{
    floe_tsource_logs_t *s = (floe_tsource_logs_t *)src;
    pthread_mutex_lock(&s->mu);
    ltopic_t *t = find(s, topic);
    if (t && partition >= 0 && partition < t->nparts) t->cursor[partition] = next;
    pthread_mutex_unlock(&s->mu);
}

static void watch(floe_tsource_t *src, floe_tsource_wake_fn fn, void *arg)
{
    floe_tsource_logs_t *s = (floe_tsource_logs_t *)src;
    pthread_mutex_lock(&s->mu);
    s->wake = fn;
    s->wake_arg = arg;
    s->woke = false;
    pthread_mutex_unlock(&s->mu);
}

static void changed(floe_tsource_t *src, floe_tsource_news_fn fn, void *arg)
{
    floe_tsource_logs_t *s = (floe_tsource_logs_t *)src;
    pthread_mutex_lock(&s->mu);
    s->woke = false;
    for (size_t i = 0; i < s->nnews; i++) {
        ltopic_t *t = s->news[i].t;
        t->flags[s->news[i].part] &= (uint8_t)~LP_NEWS;
        fn(arg, t->name, s->news[i].part);
    }
    s->nnews = 0;
    if (s->news_lost)
        for (size_t i = 0; i < s->n; i++)
            for (int32_t p = 0; p < s->t[i]->nparts; p++)
                if (s->t[i]->flags[p] & LP_WATCHED) fn(arg, s->t[i]->name, p);
    s->news_lost = false;
    pthread_mutex_unlock(&s->mu);
}

static uint64_t topics_version(floe_tsource_t *src)
{
    floe_tsource_logs_t *s = (floe_tsource_logs_t *)src;
    pthread_mutex_lock(&s->mu);
    uint64_t v = s->version;
    pthread_mutex_unlock(&s->mu);
    return v;
}

static uint64_t retention_held(floe_tsource_t *src, const char *topic, int32_t partition)
{
    floe_tsource_logs_t *s = (floe_tsource_logs_t *)src;
    pthread_mutex_lock(&s->mu);
    ltopic_t *t = find(s, topic);
    uint64_t v = t && partition >= 0 && partition < t->nparts
                     ? floe_log_retention_held(t->logs[partition])
                     : 0;
    pthread_mutex_unlock(&s->mu);
    return v;
}

static int64_t log_end(floe_tsource_t *src, const char *topic, int32_t partition)
{
    floe_tsource_logs_t *s = (floe_tsource_logs_t *)src;
    pthread_mutex_lock(&s->mu);
    ltopic_t *t = find(s, topic);
    int64_t v =
        t && partition >= 0 && partition < t->nparts ? floe_log_end_offset(t->logs[partition]) : -1;
    pthread_mutex_unlock(&s->mu);
    return v;
}

static const floe_tsource_ops_t ops = {.topics = topics,
                                       .fetch = fetch,
                                       .next = next,
                                       .committed = committed,
                                       .retention_held = retention_held,
                                       .log_end = log_end,
                                       .watch = watch,
                                       .changed = changed,
                                       .topics_version = topics_version};

floe_tsource_logs_t *floe_tsource_logs_new(void)
{
    floe_tsource_logs_t *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->base.ops = &ops;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->idle, NULL);
    floe_tbatches_init(&s->dec);
    return s;
}

void floe_tsource_logs_free(floe_tsource_logs_t *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) ltopic_free(s->t[i]);
    free(s->t);
    free(s->news);
    floe_buf_free(&s->buf);
    floe_tbatches_free(&s->dec);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->idle);
    free(s);
}

floe_tsource_t *floe_tsource_logs_source(floe_tsource_logs_t *s)
{
    return &s->base;
}

int floe_tsource_logs_set(floe_tsource_logs_t *s, const char *name, int32_t nparts,
                          floe_log_t *const *logs, const char *const *keys,
                          const char *const *values, size_t nconfigs, floe_err_t *err)
{
    if (nparts < 0) return floe_err_set(err, FLOE_EINVAL, "negative partition count");
    ltopic_t *nt = calloc(1, sizeof *nt);
    if (!nt) return floe_err_oom(err);
    nt->nparts = nparts;
    nt->nconfigs = nconfigs;
    if (!(nt->name = strdup(name)) || !(nt->logs = calloc((size_t)nparts + 1, sizeof *nt->logs)) ||
        !(nt->cursor = calloc((size_t)nparts + 1, sizeof *nt->cursor)) ||
        !(nt->flags = calloc((size_t)nparts + 1, sizeof *nt->flags)) ||
        !(nt->keys = calloc(nconfigs + 1, sizeof *nt->keys)) ||
        !(nt->values = calloc(nconfigs + 1, sizeof *nt->values)))
        goto oom;
    for (int32_t i = 0; i < nparts; i++) {
        nt->logs[i] = logs[i];
        nt->cursor[i] = -1;
    }
    for (size_t i = 0; i < nconfigs; i++)
        if (!(nt->keys[i] = strdup(keys[i])) || !(nt->values[i] = strdup(values[i]))) goto oom;
    pthread_mutex_lock(&s->mu);
    ltopic_t *old = find_unread(s, name);
    if (old) {
        /* the same ltopic_t stays registered (the news point at it) */
        for (int32_t i = 0; i < nparts && i < old->nparts; i++) {
            nt->cursor[i] = old->cursor[i];
            nt->flags[i] = old->flags[i];
        }
        forget_news(s, old, nparts);
        ltopic_t tmp = *old;
        *old = *nt;
        *nt = tmp;
        ltopic_free(nt);
    } else {
        if (floe_grow(&s->t, &s->cap, s->n + 1, sizeof *s->t) < 0) {
            pthread_mutex_unlock(&s->mu);
            goto oom;
        }
        size_t at = lower_bound(s, name);
        memmove(&s->t[at + 1], &s->t[at], (s->n - at) * sizeof *s->t);
        s->t[at] = nt;
        s->n++;
    }
    topics_changed(s);
    pthread_mutex_unlock(&s->mu);
    return 0;
oom:
    ltopic_free(nt);
    return floe_err_oom(err);
}

void floe_tsource_logs_remove(floe_tsource_logs_t *s, const char *name)
{
    pthread_mutex_lock(&s->mu);
    ltopic_t *t = find_unread(s, name);
    if (t) {
        size_t at = lower_bound(s, name);
        forget_news(s, t, 0);
        ltopic_free(t);
        memmove(&s->t[at], &s->t[at + 1], (s->n - at - 1) * sizeof *s->t);
        s->n--;
        topics_changed(s);
    }
    pthread_mutex_unlock(&s->mu);
}

void floe_tsource_logs_appended(floe_tsource_logs_t *s, const char *name, int32_t partition)
{
    pthread_mutex_lock(&s->mu);
    ltopic_t *t = find(s, name);
    if (t && partition >= 0 && partition < t->nparts && (t->flags[partition] & LP_WATCHED) &&
        !(t->flags[partition] & LP_NEWS)) {
        if (floe_grow(&s->news, &s->capnews, s->nnews + 1, sizeof *s->news) == 0) {
            s->news[s->nnews++] = (lnews_t){t, partition};
            t->flags[partition] |= LP_NEWS;
        } else {
            s->news_lost = true;
        }
        wake(s);
    }
    pthread_mutex_unlock(&s->mu);
}

int64_t floe_tsource_logs_cursor(floe_tsource_logs_t *s, const char *name, int32_t partition)
{
    pthread_mutex_lock(&s->mu);
    ltopic_t *t = find(s, name);
    int64_t c = t && partition >= 0 && partition < t->nparts ? t->cursor[partition] : -1;
    pthread_mutex_unlock(&s->mu);
    return c;
}
