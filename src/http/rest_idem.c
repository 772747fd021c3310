/* The REST catalog's Idempotency-Key memory (rest_int.h): the final
 * answer of each keyed mutation, replayed to a retry with the same key
 * for the advertised lifetime.  Keys live in one list, oldest first (the
 * lifetime is the same for all, so they also expire in that order), with
 * a hash index.  A 5xx is not final: the key is freed for the retry. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/rest_int.h"
#include "util/clock.h"
#include "util/murmur3.h"

#define NBUCKETS 4096
#define MAX_KEY 128

struct floe_rest_idem_slot {
    struct floe_rest_idem_slot *older, *newer; /* the list */
    struct floe_rest_idem_slot *chain;         /* the bucket */
    char key[MAX_KEY + 1];
    uint64_t fp;
    int64_t expires_ms;
    bool done;
    int status;
    const char *content_type; /* static */
    char etag[128];
    uint8_t *body;
    size_t len;
};

struct floe_rest_idem {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a running request finished */
    int64_t lifetime_ms;
    size_t max_bytes, bytes;
    floe_rest_idem_slot_t *oldest, *newest, *buckets[NBUCKETS];
    uint64_t replays;
};

floe_rest_idem_t *floe_rest_idem_new(int64_t lifetime_ms, size_t max_bytes)
{
    floe_rest_idem_t *i = calloc(1, sizeof *i);
    if (!i) return NULL;
    pthread_mutex_init(&i->mu, NULL);
    pthread_cond_init(&i->cv, NULL);
    i->lifetime_ms = lifetime_ms;
    i->max_bytes = max_bytes;
    return i;
}

static size_t bucket(const char *key)
{
    return floe_murmur3_32(key, strlen(key), 0x1de) % NBUCKETS;
}

static void unlink_slot(floe_rest_idem_t *i, floe_rest_idem_slot_t *s)
{
    if (s->older) s->older->newer = s->newer;
    else
        i->oldest = s->newer;
    if (s->newer) s->newer->older = s->older;
    else
        i->newest = s->older;
    floe_rest_idem_slot_t **p = &i->buckets[bucket(s->key)];
    while (*p && *p != s) p = &(*p)->chain;
    if (*p) *p = s->chain;
    i->bytes -= sizeof *s + s->len;
    free(s->body);
    free(s);
}

/* Drop expired answers, and the oldest finished ones beyond the budget
 * (a running request's slot stays: its thread holds it). */
static void prune(floe_rest_idem_t *i, int64_t now)
{
    for (floe_rest_idem_slot_t *s = i->oldest, *next; s; s = next) {
        next = s->newer;
        if (!s->done) continue;
        if (s->expires_ms > now && i->bytes <= i->max_bytes) break;
        unlink_slot(i, s);
    }
}

int floe_rest_idem_begin(floe_rest_idem_t *i, const char *key, uint64_t fp, floe_http_resp_t *rs,
                         floe_rest_idem_slot_t **slot)
{
    *slot = NULL;
    pthread_mutex_lock(&i->mu);
    int64_t now = floe_mono_ms();
    prune(i, now);
    floe_rest_idem_slot_t *s;
    for (;;) {
        s = i->buckets[bucket(key)];
        while (s && strcmp(s->key, key)) s = s->chain;
        if (!s || s->done) break;
        pthread_cond_wait(&i->cv, &i->mu); /* the first try still runs */
    }
    int rc = 0;
    if (s && s->fp != fp) {
        rc = -1;
    } else if (s) {
        rs->status = s->status;
        rs->content_type = s->content_type;
        memcpy(rs->etag, s->etag, sizeof rs->etag);
        floe_buf_reset(&rs->body);
        rc = s->len && floe_buf_append(&rs->body, s->body, s->len) ? -2 : 1;
        if (rc == 1) i->replays++;
    } else if (!(s = calloc(1, sizeof *s))) {
        rc = -2;
    } else {
        snprintf(s->key, sizeof s->key, "%s", key);
        s->fp = fp;
        s->expires_ms = now + i->lifetime_ms;
        size_t b = bucket(s->key);
        s->chain = i->buckets[b];
        i->buckets[b] = s;
        s->older = i->newest;
        if (i->newest) i->newest->newer = s;
        else
            i->oldest = s;
        i->newest = s;
        i->bytes += sizeof *s;
        *slot = s;
    }
    pthread_mutex_unlock(&i->mu);
    if (rc == -1) {
        rs->status = 422;
        rs->content_type = "application/json";
        floe_buf_reset(&rs->body);
        if (floe_buf_append_str(
                &rs->body, "{\"error\":{\"message\":\"this Idempotency-Key came with another "
                           "request\",\"type\":\"UnprocessableEntityException\",\"code\":422}}"))
            rc = -2;
    }
    return rc;
}

void floe_rest_idem_end(floe_rest_idem_t *i, floe_rest_idem_slot_t *s, const floe_http_resp_t *rs)
{
    if (!s) return;
    pthread_mutex_lock(&i->mu);
    bool keep = rs->status < 500;
    if (keep && rs->body.len && !(s->body = malloc(rs->body.len))) keep = false;
    if (keep) {
        s->done = true;
        s->status = rs->status;
        s->content_type = rs->content_type;
        memcpy(s->etag, rs->etag, sizeof s->etag);
        if (rs->body.len) memcpy(s->body, rs->body.data, rs->body.len);
        s->len = rs->body.len;
        i->bytes += s->len;
        /* the lifetime counts from the first submission */
    } else {
        unlink_slot(i, s);
    }
    pthread_cond_broadcast(&i->cv);
    pthread_mutex_unlock(&i->mu);
}

uint64_t floe_rest_idem_replays(floe_rest_idem_t *i)
{
    pthread_mutex_lock(&i->mu);
    uint64_t n = i->replays;
    pthread_mutex_unlock(&i->mu);
    return n;
}

void floe_rest_idem_free(floe_rest_idem_t *i)
{
    if (!i) return;
    while (i->oldest) unlink_slot(i, i->oldest);
    pthread_cond_destroy(&i->cv);
    pthread_mutex_destroy(&i->mu);
    free(i);
}
