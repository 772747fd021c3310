/* The table-engine source over registered partition logs
 * (source_logs.h). */
#include "table/source_logs.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "table/source_batches.h"

typedef struct ltopic {
    char *name;
    int32_t nparts;
    floe_log_t **logs;
    int64_t *cursor;
    size_t nconfigs;
    char **keys, **values;
} ltopic_t;

struct floe_tsource_logs {
    floe_tsource_t base;
    pthread_mutex_t mu; /* guards the registry (t, n, cap) and reading */
    pthread_cond_t idle;
    floe_log_t *reading; /* the log a fetch reads outside mu, or NULL */
    ltopic_t *t;
    size_t n, cap;
    /* the engine's fetch: the batches read and their decoder */
    floe_buf_t buf;
    floe_tbatches_t dec;
};

static void ltopic_clear(ltopic_t *t)
{
    free(t->name);
    free(t->logs);
    free(t->cursor);
    for (size_t i = 0; i < t->nconfigs; i++) {
        free(t->keys[i]);
        free(t->values[i]);
    }
    free(t->keys);
    free(t->values);
    memset(t, 0, sizeof *t);
}

/* Index of the first topic whose name is >= name (s->t is sorted by
 * name: every fetch and every status line looks a topic up). */
static size_t lower_bound(const floe_tsource_logs_t *s, const char *name)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(s->t[mid].name, name) < 0) lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static ltopic_t *find(floe_tsource_logs_t *s, const char *name)
{
    size_t i = lower_bound(s, name);
    return i < s->n && !strcmp(s->t[i].name, name) ? &s->t[i] : NULL;
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

static int topics(floe_tsource_t *src, floe_tsource_topic_t **out, size_t *n, floe_err_t *err)
{
    floe_tsource_logs_t *s = (floe_tsource_logs_t *)src;
    pthread_mutex_lock(&s->mu);
    floe_tsource_topic_t *v = calloc(s->n ? s->n : 1, sizeof *v);
    size_t k = 0;
    if (!v) goto oom;
    for (; k < s->n; k++) {
        ltopic_t *t = &s->t[k];
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
 * topics never wait for the engine's disk I/O. */
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

static const floe_tsource_ops_t ops = {topics, fetch, next, committed, retention_held};

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
    for (size_t i = 0; i < s->n; i++) ltopic_clear(&s->t[i]);
    free(s->t);
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
    ltopic_t nt = {0};
    if (nparts < 0) return floe_err_set(err, FLOE_EINVAL, "negative partition count");
    nt.nparts = nparts;
    nt.nconfigs = nconfigs;
    if (!(nt.name = strdup(name)) || !(nt.logs = calloc((size_t)nparts + 1, sizeof *nt.logs)) ||
        !(nt.cursor = calloc((size_t)nparts + 1, sizeof *nt.cursor)) ||
        !(nt.keys = calloc(nconfigs + 1, sizeof *nt.keys)) ||
        !(nt.values = calloc(nconfigs + 1, sizeof *nt.values)))
        goto oom;
    for (int32_t i = 0; i < nparts; i++) {
        nt.logs[i] = logs[i];
        nt.cursor[i] = -1;
    }
    for (size_t i = 0; i < nconfigs; i++)
        if (!(nt.keys[i] = strdup(keys[i])) || !(nt.values[i] = strdup(values[i]))) goto oom;
    pthread_mutex_lock(&s->mu);
    ltopic_t *old = find_unread(s, name);
    if (old) {
        for (int32_t i = 0; i < nparts && i < old->nparts; i++) nt.cursor[i] = old->cursor[i];
        ltopic_clear(old);
        *old = nt;
    } else {
        if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 8;
            ltopic_t *v = realloc(s->t, cap * sizeof *v);
            if (!v) {
                pthread_mutex_unlock(&s->mu);
                goto oom;
            }
            s->t = v;
            s->cap = cap;
        }
        size_t at = lower_bound(s, name);
        memmove(&s->t[at + 1], &s->t[at], (s->n - at) * sizeof *s->t);
        s->t[at] = nt;
        s->n++;
    }
    pthread_mutex_unlock(&s->mu);
    return 0;
oom:
    ltopic_clear(&nt);
    return floe_err_oom(err);
}

void floe_tsource_logs_remove(floe_tsource_logs_t *s, const char *name)
{
    pthread_mutex_lock(&s->mu);
    ltopic_t *t = find_unread(s, name);
    if (t) {
        ltopic_clear(t);
        size_t at = (size_t)(t - s->t);
        memmove(&s->t[at], &s->t[at + 1], (s->n - at - 1) * sizeof *s->t);
        s->n--;
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
