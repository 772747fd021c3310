/* A table-engine source over a Kafka consumer group (source_kafka.h). */
#include "table/source_kafka.h"

#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/diag.h"
#include "util/mem.h"

/* One partition: the messages the consumer delivered and the engine has
 * not taken, in offset order.  Every message delivered at or above `from`
 * and below `pos` is in q (read_committed leaves gaps: no message there). */
typedef struct kpart {
    rd_kafka_message_t **q;
    size_t head, n, cap; /* q[head .. head+n) */
    size_t bytes;
    int64_t from, pos;
    bool assigned; /* by the group */
    bool ready;    /* assigned at the table's offset: the engine may read it */
    bool paused;   /* in librdkafka, its buffer full */
    bool news;     /* got messages since the engine last asked (changed) */
    bool commit_due;
    int64_t table_next;      /* the engine's committed cursor (-1: none) */
    int64_t group_committed; /* the group offset committed last */
} kpart_t;

typedef struct ktopic {
    char *name;
    int32_t nparts;
    kpart_t *parts;
    size_t table; /* index into s->tables */
    bool seen;    /* in the last metadata */
} ktopic_t;

typedef struct ktable {
    char *topic, *regex;
    regex_t re;
    size_t nconfigs;
    char **keys, **values;
} ktable_t;

struct floe_ksource {
    floe_tsource_t base;
    rd_kafka_t *rk;
    ktable_t *tables;
    size_t ntables;
    size_t buffer_bytes;
    int64_t metadata_ms, connect_ms;
    floe_ksource_resync_fn resync;
    void *resync_arg;
    pthread_t thread;
    bool running, closed;
    pthread_mutex_t mu; /* guards what follows */
    bool stop, closing;
    ktopic_t *topics;
    size_t ntopics;
    uint64_t version;
    floe_tsource_wake_fn wake;
    void *wake_arg;
    uint64_t records, bytes, rebalances;
    /* the engine's fetch (its thread only): messages taken from q */
    rd_kafka_message_t **taken;
    size_t ntaken, captaken, itaken;
    char *taken_topic;
    int32_t taken_part;
    floe_record_header_t *hdrs;
    size_t caphdrs;
};

/* ---- topics and partitions (s->mu held) --------------------------------- */

static ktopic_t *topic_find(floe_ksource_t *s, const char *name)
{
    for (size_t i = 0; i < s->ntopics; i++)
        if (!strcmp(s->topics[i].name, name)) return &s->topics[i];
    return NULL;
}

static kpart_t *part_find(floe_ksource_t *s, const char *topic, int32_t p)
{
    ktopic_t *t = topic_find(s, topic);
    return t && p >= 0 && p < t->nparts ? &t->parts[p] : NULL;
}

/* Give t n partitions (more only).  -1 when out of memory. */
static int topic_grow(ktopic_t *t, int32_t n)
{
    if (n <= t->nparts) return 0;
    kpart_t *v = realloc(t->parts, (size_t)n * sizeof *v);
    if (!v) return -1;
    for (int32_t i = t->nparts; i < n; i++)
        v[i] = (kpart_t){.table_next = -1, .group_committed = -1};
    t->parts = v;
    t->nparts = n;
    return 0;
}

static void part_clear(kpart_t *kp)
{
    for (size_t i = 0; i < kp->n; i++) rd_kafka_message_destroy(kp->q[kp->head + i]);
    kp->head = kp->n = 0;
    kp->bytes = 0;
}

static void topic_free(ktopic_t *t)
{
    for (int32_t i = 0; i < t->nparts; i++) {
        part_clear(&t->parts[i]);
        free(t->parts[i].q);
    }
    free(t->parts);
    free(t->name);
}

/* The table whose topic or regex takes topic name, or -1. */
static long table_for(const floe_ksource_t *s, const char *name)
{
    for (size_t i = 0; i < s->ntables; i++)
        if (s->tables[i].topic && !strcmp(s->tables[i].topic, name)) return (long)i;
    for (size_t i = 0; i < s->ntables; i++)
        if (s->tables[i].regex && regexec(&s->tables[i].re, name, 0, NULL, 0) == 0) return (long)i;
    return -1;
}

/* The cluster's topics now (caller frees with rd_kafka_metadata_destroy).
 * Poll thread or start, without s->mu. */
static int metadata(floe_ksource_t *s, int timeout_ms, const rd_kafka_metadata_t **md,
                    floe_err_t *err)
{
    rd_kafka_resp_err_t e = rd_kafka_metadata(s->rk, 1, NULL, md, timeout_ms);
    if (e)
        return floe_err_set(err, e == RD_KAFKA_RESP_ERR__TIMED_OUT ? FLOE_ETIMEOUT : FLOE_EIO,
                            "Kafka metadata: %s", rd_kafka_err2str(e));
    return 0;
}

/* Take md's topics that a table wants: new ones listed, partitions added,
 * gone ones dropped; the version moves when anything changed. */
static void topics_update(floe_ksource_t *s, const rd_kafka_metadata_t *md)
{
    pthread_mutex_lock(&s->mu);
    bool changed = false;
    for (size_t i = 0; i < s->ntopics; i++) s->topics[i].seen = false;
    for (int i = 0; i < md->topic_cnt; i++) {
        const rd_kafka_metadata_topic_t *mt = &md->topics[i];
        if (mt->err || !strncmp(mt->topic, "__", 2) || mt->partition_cnt <= 0) continue;
        long tb = table_for(s, mt->topic);
        if (tb < 0) continue;
        ktopic_t *t = topic_find(s, mt->topic);
        if (!t) {
            ktopic_t *v = realloc(s->topics, (s->ntopics + 1) * sizeof *v);
            char *name = strdup(mt->topic);
            if (!v || !name) {
                if (v) s->topics = v;
                free(name);
                FLOE_WARN("floe sink: out of memory listing topic %s", mt->topic);
                continue;
            }
            s->topics = v;
            t = &s->topics[s->ntopics++];
            *t = (ktopic_t){.name = name, .table = (size_t)tb};
            changed = true;
        }
        t->seen = true;
        if (mt->partition_cnt > t->nparts) {
            if (topic_grow(t, mt->partition_cnt) < 0)
                FLOE_WARN("floe sink: out of memory adding partitions of %s", t->name);
            else
                changed = true;
        }
    }
    for (size_t i = s->ntopics; i-- > 0;) {
        ktopic_t *t = &s->topics[i];
        bool held = false;
        for (int32_t k = 0; k < t->nparts; k++) held |= t->parts[k].assigned;
        if (t->seen || held) continue;
        topic_free(t);
        s->topics[i] = s->topics[--s->ntopics];
        changed = true;
    }
    if (changed) s->version++;
    floe_tsource_wake_fn wake = changed ? s->wake : NULL;
    void *arg = s->wake_arg;
    pthread_mutex_unlock(&s->mu);
    if (wake) wake(arg);
}

static void refresh_topics(floe_ksource_t *s)
{
    const rd_kafka_metadata_t *md;
    floe_err_t err;
    if (metadata(s, 5000, &md, &err) < 0) {
        FLOE_WARN("floe sink: cannot list topics: %s", err.msg);
        return;
    }
    topics_update(s, md);
    rd_kafka_metadata_destroy(md);
}

/* ---- the poll thread ----------------------------------------------------- */

/* Commit the group offsets of partitions whose tables committed since. */
static void commit_group_offsets(floe_ksource_t *s, bool sync)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(8);
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->ntopics; i++)
        for (int32_t k = 0; k < s->topics[i].nparts; k++) {
            kpart_t *kp = &s->topics[i].parts[k];
            if (!kp->commit_due) continue;
            kp->commit_due = false;
            kp->group_committed = kp->table_next;
            rd_kafka_topic_partition_list_add(l, s->topics[i].name, k)->offset = kp->table_next;
        }
    pthread_mutex_unlock(&s->mu);
    if (l->cnt) {
        rd_kafka_resp_err_t e = rd_kafka_commit(s->rk, l, sync ? 0 : 1);
        if (e && sync)
            FLOE_WARN("floe sink: committing group offsets (for lag tools): %s",
                      rd_kafka_err2str(e));
    }
    rd_kafka_topic_partition_list_destroy(l);
}

/* Buffer message m (taking it), pausing its partition when full. */
static void take_message(floe_ksource_t *s, rd_kafka_message_t *m, bool *woke)
{
    const char *topic = rd_kafka_topic_name(m->rkt);
    pthread_mutex_lock(&s->mu);
    kpart_t *kp = part_find(s, topic, m->partition);
    if (!kp || !kp->ready || m->offset < kp->pos) { /* revoked meanwhile, or before a seek */
        pthread_mutex_unlock(&s->mu);
        rd_kafka_message_destroy(m);
        return;
    }
    if (kp->head + kp->n == kp->cap) {
        if (kp->head > 0) {
            memmove(kp->q, kp->q + kp->head, kp->n * sizeof *kp->q);
            kp->head = 0;
        } else if (floe_grow(&kp->q, &kp->cap, kp->n + 1, sizeof *kp->q) < 0) {
            pthread_mutex_unlock(&s->mu);
            rd_kafka_message_destroy(m); /* read again after a seek: fetch sees the gap */
            FLOE_WARN("floe sink: out of memory buffering %s/%d", topic, (int)m->partition);
            return;
        }
    }
    kp->q[kp->head + kp->n++] = m;
    kp->bytes += m->len + m->key_len;
    kp->pos = m->offset + 1;
    s->records++;
    s->bytes += m->len + m->key_len;
    bool pause = !kp->paused && kp->bytes >= s->buffer_bytes;
    if (pause) kp->paused = true;
    if (!kp->news) {
        kp->news = true;
        *woke = true;
    }
    pthread_mutex_unlock(&s->mu);
    if (pause) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, topic, m->partition);
        rd_kafka_pause_partitions(s->rk, l);
        rd_kafka_topic_partition_list_destroy(l);
    }
}

static void wake_engine(floe_ksource_t *s)
{
    pthread_mutex_lock(&s->mu);
    floe_tsource_wake_fn wake = s->wake;
    void *arg = s->wake_arg;
    pthread_mutex_unlock(&s->mu);
    if (wake) wake(arg);
}

static void *poll_main(void *arg)
{
    floe_ksource_t *s = arg;
    int64_t next_md = floe_mono_ms() + s->metadata_ms;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        bool stop = s->stop;
        pthread_mutex_unlock(&s->mu);
        if (stop) break;
        if (floe_mono_ms() >= next_md) {
            refresh_topics(s);
            next_md = floe_mono_ms() + s->metadata_ms;
        }
        commit_group_offsets(s, false);
        bool woke = false;
        /* up to 10000 messages a round; the next is polled only when it
         * will be taken, never polled and left behind */
        rd_kafka_message_t *m = rd_kafka_consumer_poll(s->rk, 100);
        for (int i = 0; m; i++) {
            if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                rd_kafka_message_destroy(m);
            } else if (m->err) {
                FLOE_WARN("floe sink: consumer: %s%s%s", rd_kafka_message_errstr(m),
                          m->rkt ? ", topic " : "", m->rkt ? rd_kafka_topic_name(m->rkt) : "");
                rd_kafka_message_destroy(m);
            } else {
                take_message(s, m, &woke);
            }
            m = i + 1 < 10000 ? rd_kafka_consumer_poll(s->rk, 0) : NULL;
        }
        if (woke) wake_engine(s);
    }
    return NULL;
}

/* ---- rebalances ----------------------------------------------------------- */

static void resync(floe_ksource_t *s, const char *why)
{
    floe_err_t err;
    if (s->resync && s->resync(s->resync_arg, &err) < 0)
        FLOE_WARN("floe sink: %s: the engine did not resync: %s", why, err.msg);
}

/* The group gave us parts: the engine reloads the tables, then each
 * partition is assigned at its table's offset (the start when none). */
static void assign_parts(floe_ksource_t *s, rd_kafka_topic_partition_list_t *parts, bool coop)
{
    refresh_topics(s); /* a topic the group knows before our last listing */
    pthread_mutex_lock(&s->mu);
    bool closing = s->closing;
    for (int i = 0; i < parts->cnt && !closing; i++) {
        rd_kafka_topic_partition_t *tp = &parts->elems[i];
        ktopic_t *t = topic_find(s, tp->topic);
        if (t && topic_grow(t, tp->partition + 1) == 0) t->parts[tp->partition].assigned = true;
    }
    pthread_mutex_unlock(&s->mu);
    if (closing) {
        if (!coop) rd_kafka_assign(s->rk, NULL);
        return;
    }
    resync(s, "partitions assigned");
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < parts->cnt; i++) {
        rd_kafka_topic_partition_t *tp = &parts->elems[i];
        kpart_t *kp = part_find(s, tp->topic, tp->partition);
        if (!kp) continue;
        part_clear(kp);
        kp->paused = false;
        kp->from = kp->pos = kp->table_next >= 0 ? kp->table_next : 0;
        tp->offset = kp->table_next >= 0 ? kp->table_next : RD_KAFKA_OFFSET_BEGINNING;
        kp->ready = true;
        kp->news = true;
        kp->group_committed = -1;
    }
    s->rebalances++;
    pthread_mutex_unlock(&s->mu);
    rd_kafka_error_t *ce = NULL;
    rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR_NO_ERROR;
    if (coop) ce = rd_kafka_incremental_assign(s->rk, parts);
    else
        e = rd_kafka_assign(s->rk, parts);
    if (ce || e) {
        FLOE_ERROR("floe sink: cannot take the partitions assigned: %s",
                   ce ? rd_kafka_error_string(ce) : rd_kafka_err2str(e));
        if (ce) rd_kafka_error_destroy(ce);
    }
    FLOE_INFO("floe sink: %d partitions assigned", parts->cnt);
    wake_engine(s);
}

/* The group takes parts away: the engine stops reading them and commits
 * what it read, and the group offsets follow, before the group moves on. */
static void revoke_parts(floe_ksource_t *s, rd_kafka_topic_partition_list_t *parts, bool coop)
{
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < parts->cnt; i++) {
        kpart_t *kp = part_find(s, parts->elems[i].topic, parts->elems[i].partition);
        if (!kp) continue;
        kp->assigned = kp->ready = kp->paused = false;
        part_clear(kp);
    }
    pthread_mutex_unlock(&s->mu);
    resync(s, "partitions revoked");
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < parts->cnt; i++) {
        kpart_t *kp = part_find(s, parts->elems[i].topic, parts->elems[i].partition);
        if (kp && kp->table_next >= 0 && kp->table_next != kp->group_committed) {
            parts->elems[i].offset = kp->table_next;
            kp->group_committed = kp->table_next;
        } else {
            parts->elems[i].offset = RD_KAFKA_OFFSET_INVALID; /* nothing to commit */
        }
        if (kp) kp->commit_due = false;
    }
    pthread_mutex_unlock(&s->mu);
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(parts->cnt);
    for (int i = 0; i < parts->cnt; i++)
        if (parts->elems[i].offset >= 0)
            rd_kafka_topic_partition_list_add(l, parts->elems[i].topic, parts->elems[i].partition)
                ->offset = parts->elems[i].offset;
    if (l->cnt) rd_kafka_commit(s->rk, l, 0); /* for lag tools: errors do not matter */
    rd_kafka_topic_partition_list_destroy(l);
    if (coop) {
        rd_kafka_error_t *ce = rd_kafka_incremental_unassign(s->rk, parts);
        if (ce) rd_kafka_error_destroy(ce);
    } else {
        rd_kafka_assign(s->rk, NULL);
    }
    FLOE_INFO("floe sink: %d partitions revoked", parts->cnt);
}

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    floe_ksource_t *s = opaque;
    bool coop = !strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE");
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) assign_parts(s, parts, coop);
    else if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS)
        revoke_parts(s, parts, coop);
    else {
        FLOE_WARN("floe sink: rebalance failed: %s", rd_kafka_err2str(err));
        rd_kafka_assign(rk, NULL);
    }
}

/* ---- the engine's side ------------------------------------------------------ */

/* Hand the messages of the last fetch it did not take back to their
 * partition's queue, in front (a step that stopped early reads them
 * again), or destroy them when the partition went. */
static void untake(floe_ksource_t *s)
{
    if (!s->ntaken) return;
    kpart_t *kp = s->taken_topic ? part_find(s, s->taken_topic, s->taken_part) : NULL;
    size_t n = s->ntaken;
    if (kp && kp->ready && floe_grow(&kp->q, &kp->cap, kp->n + n, sizeof *kp->q) == 0) {
        if (kp->head < n) {
            memmove(kp->q + n, kp->q + kp->head, kp->n * sizeof *kp->q);
            kp->head = n;
        }
        kp->head -= n;
        memcpy(kp->q + kp->head, s->taken, n * sizeof *kp->q);
        kp->n += n;
        for (size_t i = 0; i < n; i++) kp->bytes += s->taken[i]->len + s->taken[i]->key_len;
        kp->from = s->taken[0]->offset < kp->from ? s->taken[0]->offset : kp->from;
    } else {
        for (size_t i = 0; i < n; i++) rd_kafka_message_destroy(s->taken[i]);
    }
    s->ntaken = s->itaken = 0;
}

static int k_fetch(floe_tsource_t *src, const char *topic, int32_t partition, int64_t offset,
                   size_t max_bytes, int64_t *start, int64_t *end, floe_err_t *err)
{
    floe_ksource_t *s = (floe_ksource_t *)src;
    int64_t lo = -1, hi = -1;
    rd_kafka_get_watermark_offsets(s->rk, topic, partition, &lo, &hi);
    pthread_mutex_lock(&s->mu);
    untake(s);
    kpart_t *kp = part_find(s, topic, partition);
    if (!kp || !kp->ready || s->closing) {
        pthread_mutex_unlock(&s->mu);
        *start = *end = offset;
        return floe_err_set(err, FLOE_ENOENT, "%s/%d is not assigned to this worker", topic,
                            (int)partition);
    }
    *start = lo >= 0 ? lo : kp->from;
    *end = hi > kp->pos ? hi : kp->pos;
    if (lo > offset && (!kp->n || kp->q[kp->head]->offset > offset)) {
        pthread_mutex_unlock(&s->mu);
        return floe_err_set(err, FLOE_ERANGE, "%s/%d: offset %lld is gone (log start %lld)", topic,
                            (int)partition, (long long)offset, (long long)lo);
    }
    bool seek = offset < kp->from || offset > kp->pos;
    if (seek) {
        part_clear(kp);
        kp->from = kp->pos = offset;
    }
    while (kp->n && kp->q[kp->head]->offset < offset) {
        kp->bytes -= kp->q[kp->head]->len + kp->q[kp->head]->key_len;
        rd_kafka_message_destroy(kp->q[kp->head++]);
        kp->n--;
    }
    kp->from = offset;
    size_t got = 0;
    while (kp->n && (s->ntaken == 0 || got < max_bytes)) {
        rd_kafka_message_t *m = kp->q[kp->head];
        if (floe_grow(&s->taken, &s->captaken, s->ntaken + 1, sizeof *s->taken) < 0) break;
        s->taken[s->ntaken++] = m;
        kp->head++;
        kp->n--;
        got += m->len + m->key_len;
        kp->bytes -= m->len + m->key_len;
    }
    if (!kp->n) kp->head = 0;
    if (s->ntaken) kp->from = s->taken[s->ntaken - 1]->offset + 1;
    bool resume = kp->paused && kp->bytes < s->buffer_bytes / 2;
    if (resume) kp->paused = false;
    free(s->taken_topic);
    s->taken_topic = strdup(topic); /* NULL: the rest is dropped at the next fetch */
    s->taken_part = partition;
    pthread_mutex_unlock(&s->mu);
    if (seek || resume) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, topic, partition)->offset = offset;
        if (resume) rd_kafka_resume_partitions(s->rk, l);
        if (seek) {
            rd_kafka_error_t *se = rd_kafka_seek_partitions(s->rk, l, 2000);
            if (se) {
                FLOE_WARN("floe sink: seeking %s/%d to %lld: %s", topic, (int)partition,
                          (long long)offset, rd_kafka_error_string(se));
                rd_kafka_error_destroy(se);
            }
        }
        rd_kafka_topic_partition_list_destroy(l);
    }
    return 0;
}

static int k_next(floe_tsource_t *src, floe_tmsg_t *m, floe_err_t *err)
{
    floe_ksource_t *s = (floe_ksource_t *)src;
    if (s->itaken >= s->ntaken) return 0;
    rd_kafka_message_t *km = s->taken[s->itaken++];
    memset(m, 0, sizeof *m);
    m->kind = FLOE_TMSG_RECORD;
    m->offset = m->last = km->offset;
    rd_kafka_timestamp_type_t tt;
    m->timestamp = rd_kafka_message_timestamp(km, &tt);
    if (m->timestamp < 0) m->timestamp = 0;
    m->key = (floe_slice_t){km->key, km->key_len};
    m->key_null = km->key == NULL;
    m->value = (floe_slice_t){km->payload, km->len};
    m->value_null = km->payload == NULL;
    rd_kafka_headers_t *h = NULL;
    m->headers.list = s->hdrs;
    if (rd_kafka_message_headers(km, &h) == RD_KAFKA_RESP_ERR_NO_ERROR && h) {
        size_t n = rd_kafka_header_cnt(h);
        if (floe_grow(&s->hdrs, &s->caphdrs, n, sizeof *s->hdrs) < 0) return floe_err_oom(err);
        const char *name;
        const void *val;
        size_t size;
        for (size_t i = 0; rd_kafka_header_get_all(h, i, &name, &val, &size) == 0; i++) {
            s->hdrs[i] = (floe_record_header_t){
                .key = floe_slice_str(name), .value = {val, size}, .value_null = val == NULL};
            m->headers.count = i + 1;
        }
        m->headers.list = s->hdrs;
    }
    return 1;
}

static int k_topics(floe_tsource_t *src, floe_tsource_topic_t **out, size_t *n, floe_err_t *err)
{
    floe_ksource_t *s = (floe_ksource_t *)src;
    pthread_mutex_lock(&s->mu);
    floe_tsource_topic_t *v = calloc(s->ntopics ? s->ntopics : 1, sizeof *v);
    size_t k = 0;
    bool oom = !v;
    for (size_t i = 0; !oom && i < s->ntopics; i++, k++) {
        const ktopic_t *t = &s->topics[i];
        const ktable_t *tb = &s->tables[t->table];
        floe_tsource_topic_t *o = &v[k];
        o->partitions = t->nparts;
        o->name = strdup(t->name);
        o->keys = calloc(tb->nconfigs + 1, sizeof *o->keys);
        o->values = calloc(tb->nconfigs + 1, sizeof *o->values);
        if (!o->name || !o->keys || !o->values) {
            oom = true;
            break;
        }
        o->keys[0] = strdup("table.enable");
        o->values[0] = strdup("true");
        o->nconfigs = 1;
        for (size_t c = 0; c < tb->nconfigs; c++, o->nconfigs++) {
            o->keys[o->nconfigs] = strdup(tb->keys[c]);
            o->values[o->nconfigs] = strdup(tb->values[c]);
        }
        for (size_t c = 0; c < o->nconfigs; c++) oom |= !o->keys[c] || !o->values[c];
    }
    pthread_mutex_unlock(&s->mu);
    if (oom) {
        floe_tsource_topics_free(v, v ? k + 1 : 0);
        return floe_err_oom(err);
    }
    *out = v;
    *n = k;
    return 0;
}

static void k_committed(floe_tsource_t *src, const char *topic, int32_t partition,
                        int64_t next_offset)
{
    floe_ksource_t *s = (floe_ksource_t *)src;
    pthread_mutex_lock(&s->mu);
    kpart_t *kp = part_find(s, topic, partition);
    if (kp) {
        kp->table_next = next_offset;
        kp->commit_due = kp->assigned && next_offset >= 0 && next_offset != kp->group_committed;
    }
    pthread_mutex_unlock(&s->mu);
}

static void k_watch(floe_tsource_t *src, floe_tsource_wake_fn wake, void *arg)
{
    floe_ksource_t *s = (floe_ksource_t *)src;
    pthread_mutex_lock(&s->mu);
    s->wake = wake;
    s->wake_arg = arg;
    pthread_mutex_unlock(&s->mu);
}

static void k_changed(floe_tsource_t *src, floe_tsource_news_fn fn, void *arg)
{
    floe_ksource_t *s = (floe_ksource_t *)src;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->ntopics; i++)
        for (int32_t k = 0; k < s->topics[i].nparts; k++)
            if (s->topics[i].parts[k].news) {
                s->topics[i].parts[k].news = false;
                fn(arg, s->topics[i].name, k);
            }
    pthread_mutex_unlock(&s->mu);
}

static uint64_t k_topics_version(floe_tsource_t *src)
{
    floe_ksource_t *s = (floe_ksource_t *)src;
    pthread_mutex_lock(&s->mu);
    uint64_t v = s->version;
    pthread_mutex_unlock(&s->mu);
    return v;
}

static const floe_tsource_ops_t kafka_ops = {
    .topics = k_topics,
    .fetch = k_fetch,
    .next = k_next,
    .committed = k_committed,
    .retention_held = NULL, /* the cluster's retention is not floe's */
    .watch = k_watch,
    .changed = k_changed,
    .topics_version = k_topics_version,
};

/* ---- life ----------------------------------------------------------------- */

/* librdkafka's log lines through floe's (syslog levels: 0-4 warn, 5-6
 * info, 7 debug). */
static void log_line(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    floe_diag(level <= 4   ? FLOE_DIAG_WARN
              : level <= 6 ? FLOE_DIAG_INFO
                           : FLOE_DIAG_DEBUG,
              "kafka consumer: %s: %s", fac, buf);
}

static int set_prop(rd_kafka_conf_t *c, const char *k, const char *v, floe_err_t *err)
{
    char es[512];
    if (rd_kafka_conf_set(c, k, v, es, sizeof es) != RD_KAFKA_CONF_OK)
        return floe_err_set(err, FLOE_EINVAL, "kafka: %s: %s", k, es);
    return 0;
}

static int copy_table(ktable_t *d, const floe_ksource_table_t *t, floe_err_t *err)
{
    if (!t->topic == !t->regex)
        return floe_err_set(err, FLOE_EINVAL, "a table takes either a topic or a regex");
    if (t->regex) {
        size_t n = strlen(t->regex) + 8;
        char *anchored = malloc(n);
        if (!anchored) return floe_err_oom(err);
        snprintf(anchored, n, "^(%s)$", t->regex);
        int rc = regcomp(&d->re, anchored, REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char why[200];
            regerror(rc, &d->re, why, sizeof why);
            free(anchored);
            return floe_err_set(err, FLOE_EINVAL, "topics_regex '%s': %s", t->regex, why);
        }
        d->regex = anchored;
    } else if (!(d->topic = strdup(t->topic))) {
        return floe_err_oom(err);
    }
    d->keys = calloc(t->nconfigs + 1, sizeof *d->keys);
    d->values = calloc(t->nconfigs + 1, sizeof *d->values);
    if (!d->keys || !d->values) return floe_err_oom(err);
    for (size_t i = 0; i < t->nconfigs; i++, d->nconfigs++)
        if (!(d->keys[i] = strdup(t->keys[i])) || !(d->values[i] = strdup(t->values[i]))) {
            free(d->keys[i]);
            return floe_err_oom(err);
        }
    return 0;
}

floe_ksource_t *floe_ksource_new(const floe_ksource_config_t *cfg, floe_err_t *err)
{
    floe_ksource_t *s = calloc(1, sizeof *s);
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    if (!s || !c) {
        free(s);
        if (c) rd_kafka_conf_destroy(c);
        floe_err_oom(err);
        return NULL;
    }
    s->base.ops = &kafka_ops;
    s->buffer_bytes = cfg->buffer_bytes ? cfg->buffer_bytes : 8u << 20;
    s->metadata_ms = cfg->metadata_ms > 0 ? cfg->metadata_ms : 5000;
    s->connect_ms = cfg->connect_ms > 0 ? cfg->connect_ms : 15000;
    pthread_mutex_init(&s->mu, NULL);
    bool group = false;
    int rc = set_prop(c, "isolation.level", "read_committed", err);
    if (rc == 0) rc = set_prop(c, "auto.offset.reset", "earliest", err);
    for (size_t i = 0; rc == 0 && i < cfg->nprops; i++) {
        if (!strcmp(cfg->prop_keys[i], "enable.auto.commit") ||
            !strcmp(cfg->prop_keys[i], "enable.auto.offset.store"))
            continue; /* the tables hold the offsets */
        group |= !strcmp(cfg->prop_keys[i], "group.id") && *cfg->prop_values[i];
        rc = set_prop(c, cfg->prop_keys[i], cfg->prop_values[i], err);
    }
    if (rc == 0 && !group)
        rc = floe_err_set(err, FLOE_EINVAL,
                          "kafka: group.id is required (workers with the same id share the work)");
    if (rc == 0) rc = set_prop(c, "enable.auto.commit", "false", err);
    if (rc == 0) rc = set_prop(c, "enable.auto.offset.store", "false", err);
    if (rc == 0 && !(s->tables = calloc(cfg->ntables ? cfg->ntables : 1, sizeof *s->tables)))
        rc = floe_err_oom(err);
    for (size_t i = 0; rc == 0 && i < cfg->ntables; i++) {
        rc = copy_table(&s->tables[i], &cfg->tables[i], err);
        s->ntables = i + 1; /* freed with s, also half made */
    }
    if (rc < 0) {
        rd_kafka_conf_destroy(c);
        floe_ksource_free(s);
        return NULL;
    }
    rd_kafka_conf_set_opaque(c, s);
    rd_kafka_conf_set_rebalance_cb(c, rebalance_cb);
    rd_kafka_conf_set_log_cb(c, log_line);
    char es[512];
    if (!(s->rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, es, sizeof es))) {
        rd_kafka_conf_destroy(c);
        floe_err_set(err, FLOE_EINVAL, "kafka consumer: %s", es);
        floe_ksource_free(s);
        return NULL;
    }
    rd_kafka_poll_set_consumer(s->rk);
    return s;
}

void floe_ksource_set_resync(floe_ksource_t *s, floe_ksource_resync_fn fn, void *arg)
{
    s->resync = fn;
    s->resync_arg = arg;
}

int floe_ksource_start(floe_ksource_t *s, floe_err_t *err)
{
    const rd_kafka_metadata_t *md = NULL;
    int64_t until = floe_mono_ms() + s->connect_ms;
    int rc;
    floe_err_t me;
    /* the first request waits for a connection: the cluster is reachable
     * once any answer comes */
    while ((rc = metadata(s, 2000, &md, &me)) < 0 && floe_mono_ms() < until)
        usleep(100 * 1000); /* (a refused connection fails at once) */
    if (rc < 0) {
        char bs[512] = "";
        size_t n = sizeof bs;
        rd_kafka_conf_get(rd_kafka_conf(s->rk), "bootstrap.servers", bs, &n);
        return floe_err_set(err, FLOE_ETIMEOUT,
                            "cannot reach Kafka at %s within %lld ms (bootstrap.servers): %s", bs,
                            (long long)s->connect_ms, me.msg);
    }
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new((int)s->ntables);
    rc = 0;
    for (size_t i = 0; i < s->ntables && rc == 0; i++) {
        const ktable_t *t = &s->tables[i];
        if (t->regex) {
            rd_kafka_topic_partition_list_add(sub, t->regex, RD_KAFKA_PARTITION_UA);
            continue;
        }
        bool found = false;
        for (int k = 0; k < md->topic_cnt && !found; k++)
            found = !strcmp(md->topics[k].topic, t->topic) && !md->topics[k].err;
        if (!found)
            rc = floe_err_set(err, FLOE_ENOENT, "topic %s does not exist in the Kafka cluster",
                              t->topic);
        rd_kafka_topic_partition_list_add(sub, t->topic, RD_KAFKA_PARTITION_UA);
    }
    if (rc == 0) topics_update(s, md);
    rd_kafka_metadata_destroy(md);
    if (rc == 0) {
        rd_kafka_resp_err_t e = rd_kafka_subscribe(s->rk, sub);
        if (e) rc = floe_err_set(err, FLOE_EINVAL, "kafka subscribe: %s", rd_kafka_err2str(e));
    }
    rd_kafka_topic_partition_list_destroy(sub);
    if (rc < 0) return -1;
    int pe = pthread_create(&s->thread, NULL, poll_main, s);
    if (pe != 0) return floe_err_errno(err, pe, "starting the consumer thread");
    s->running = true;
    return 0;
}

void floe_ksource_close(floe_ksource_t *s)
{
    if (!s || s->closed) return;
    s->closed = true;
    pthread_mutex_lock(&s->mu);
    s->closing = true; /* fetch finds nothing more */
    s->stop = true;
    pthread_mutex_unlock(&s->mu);
    if (s->running) {
        pthread_join(s->thread, NULL);
        s->running = false;
    }
    if (s->rk) {
        commit_group_offsets(s, true);
        rd_kafka_resp_err_t e = rd_kafka_consumer_close(s->rk); /* revokes: a resync */
        if (e) FLOE_WARN("floe sink: leaving the group: %s", rd_kafka_err2str(e));
    }
}

void floe_ksource_free(floe_ksource_t *s)
{
    if (!s) return;
    floe_ksource_close(s);
    for (size_t i = 0; i < s->ntaken; i++) rd_kafka_message_destroy(s->taken[i]);
    free(s->taken);
    free(s->taken_topic);
    free(s->hdrs);
    for (size_t i = 0; i < s->ntopics; i++) topic_free(&s->topics[i]);
    free(s->topics);
    if (s->rk) rd_kafka_destroy(s->rk);
    for (size_t i = 0; i < s->ntables; i++) {
        ktable_t *t = &s->tables[i];
        if (t->regex) regfree(&t->re);
        free(t->regex);
        free(t->topic);
        for (size_t k = 0; k < t->nconfigs; k++) {
            free(t->keys[k]);
            free(t->values[k]);
        }
        free(t->keys);
        free(t->values);
    }
    free(s->tables);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

floe_tsource_t *floe_ksource_source(floe_ksource_t *s)
{
    return &s->base;
}

void floe_ksource_stats(floe_ksource_t *s, floe_ksource_stats_t *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&s->mu);
    out->records = s->records;
    out->bytes = s->bytes;
    out->rebalances = s->rebalances;
    for (size_t i = 0; i < s->ntopics; i++)
        for (int32_t k = 0; k < s->topics[i].nparts; k++) {
            const kpart_t *kp = &s->topics[i].parts[k];
            if (!kp->assigned) continue;
            out->assigned++;
            int64_t lo, hi;
            if (rd_kafka_get_watermark_offsets(s->rk, s->topics[i].name, k, &lo, &hi) == 0 &&
                hi > 0) {
                int64_t at = kp->table_next > 0 ? kp->table_next : lo > 0 ? lo : 0;
                if (hi > at) out->lag += hi - at;
            }
        }
    pthread_mutex_unlock(&s->mu);
}
