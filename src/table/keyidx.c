/* The key index of a position-delete upsert table (keyidx.h). */
#include "table/keyidx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/crc32c.h"
#include "util/fs.h"
#include "util/mem.h"
#include "util/murmur3.h"
#include "util/varint.h"

#define MAGIC "FLKIDX1\n"
#define MAGIC_LEN 8
#define FILE_MAX ((size_t)1 << 34) /* a saved index read back at most */

enum { SLOT_EMPTY = 0, SLOT_USED, SLOT_GONE };

typedef struct slot {
    uint64_t koff; /* key bytes at keys.data + koff */
    uint32_t klen, path, hash, state;
    int64_t pos;
} slot_t;

struct floe_tkeyidx {
    slot_t *slots;
    size_t cap, used, live; /* used counts gone slots too */
    floe_buf_t keys;        /* key bytes, appended; dropped keys stay until a reset */
    char **paths;
    size_t npaths, cappaths;
    size_t last_path; /* the path put last: most puts repeat it */
    char uuid[64];
    int64_t snapshot;
};

floe_tkeyidx_t *floe_tkeyidx_new(void)
{
    floe_tkeyidx_t *x = calloc(1, sizeof *x);
    if (x) x->snapshot = -1;
    return x;
}

void floe_tkeyidx_reset(floe_tkeyidx_t *x)
{
    free(x->slots);
    floe_buf_free(&x->keys);
    for (size_t i = 0; i < x->npaths; i++) free(x->paths[i]);
    free(x->paths);
    memset(x, 0, sizeof *x);
    x->snapshot = -1;
}

void floe_tkeyidx_free(floe_tkeyidx_t *x)
{
    if (!x) return;
    floe_tkeyidx_reset(x);
    free(x);
}

int floe_tkeyidx_set_state(floe_tkeyidx_t *x, const char *uuid, int64_t snapshot_id)
{
    snprintf(x->uuid, sizeof x->uuid, "%s", uuid ? uuid : "");
    x->snapshot = snapshot_id;
    return 0;
}

int64_t floe_tkeyidx_snapshot(const floe_tkeyidx_t *x)
{
    return x->snapshot;
}

const char *floe_tkeyidx_uuid(const floe_tkeyidx_t *x)
{
    return x->uuid;
}

size_t floe_tkeyidx_count(const floe_tkeyidx_t *x)
{
    return x->live;
}

size_t floe_tkeyidx_mem(const floe_tkeyidx_t *x)
{
    size_t b = sizeof *x + x->cap * sizeof(slot_t) + x->keys.cap + x->cappaths * sizeof(char *);
    for (size_t i = 0; i < x->npaths; i++) b += strlen(x->paths[i]) + 1;
    return b;
}

/* The slot of key (hash h): its own, or where it would go (the first gone
 * slot on the way, else the empty one ending the probe). */
static size_t probe(const floe_tkeyidx_t *x, const void *key, size_t len, uint32_t h, bool *found)
{
    size_t i = h & (x->cap - 1), gone = SIZE_MAX;
    for (;; i = (i + 1) & (x->cap - 1)) {
        const slot_t *s = &x->slots[i];
        if (s->state == SLOT_EMPTY) break;
        if (s->state == SLOT_GONE) {
            if (gone == SIZE_MAX) gone = i;
        } else if (s->hash == h && s->klen == len &&
                   (!len || !memcmp(x->keys.data + s->koff, key, len))) {
            *found = true;
            return i;
        }
    }
    *found = false;
    return gone != SIZE_MAX ? gone : i;
}

static int rehash(floe_tkeyidx_t *x, size_t cap)
{
    slot_t *old = x->slots;
    size_t oldcap = x->cap;
    if (!(x->slots = calloc(cap, sizeof *x->slots))) {
        x->slots = old;
        return -1;
    }
    x->cap = cap;
    x->used = x->live;
    for (size_t i = 0; i < oldcap; i++) {
        if (old[i].state != SLOT_USED) continue;
        size_t j = old[i].hash & (cap - 1);
        while (x->slots[j].state != SLOT_EMPTY) j = (j + 1) & (cap - 1);
        x->slots[j] = old[i];
    }
    free(old);
    return 0;
}

static int intern(floe_tkeyidx_t *x, const char *path, uint32_t *out)
{
    if (x->last_path < x->npaths && !strcmp(x->paths[x->last_path], path)) {
        *out = (uint32_t)x->last_path;
        return 0;
    }
    for (size_t i = x->npaths; i-- > 0;)
        if (!strcmp(x->paths[i], path)) {
            *out = (uint32_t)(x->last_path = i);
            return 0;
        }
    if (x->npaths >= UINT32_MAX ||
        floe_grow(&x->paths, &x->cappaths, x->npaths + 1, sizeof(char *)))
        return -1;
    if (!(x->paths[x->npaths] = strdup(path))) return -1;
    *out = (uint32_t)(x->last_path = x->npaths++);
    return 0;
}

static void loc_of(const floe_tkeyidx_t *x, const slot_t *s, floe_tkeyidx_loc_t *loc)
{
    if (!loc) return;
    loc->path = x->paths[s->path];
    loc->pos = s->pos;
}

int floe_tkeyidx_put(floe_tkeyidx_t *x, const void *key, size_t len, const char *path, int64_t pos,
                     floe_tkeyidx_loc_t *old)
{
    if (len > UINT32_MAX) return -1;
    /* at most 3/4 full (gone slots count); grow when live keys fill half */
    if ((x->used + 1) * 4 > x->cap * 3 && rehash(x, !x->cap                ? 64
                                                    : x->live * 2 > x->cap ? x->cap * 2
                                                                           : x->cap) < 0)
        return -1;
    uint32_t pid;
    if (intern(x, path, &pid) < 0) return -1;
    uint32_t h = floe_murmur3_32(key, len, 0x1dc5);
    bool found;
    slot_t *s = &x->slots[probe(x, key, len, h, &found)];
    if (found) {
        loc_of(x, s, old);
        s->path = pid;
        s->pos = pos;
        return 1;
    }
    uint64_t koff = x->keys.len;
    if (floe_buf_append(&x->keys, key, len) < 0) return -1;
    if (s->state == SLOT_EMPTY) x->used++;
    *s = (slot_t){.koff = koff,
                  .klen = (uint32_t)len,
                  .path = pid,
                  .hash = h,
                  .state = SLOT_USED,
                  .pos = pos};
    x->live++;
    return 0;
}

int floe_tkeyidx_get(const floe_tkeyidx_t *x, const void *key, size_t len, floe_tkeyidx_loc_t *loc)
{
    if (!x->cap) return 0;
    bool found;
    const slot_t *s = &x->slots[probe(x, key, len, floe_murmur3_32(key, len, 0x1dc5), &found)];
    if (!found) return 0;
    loc_of(x, s, loc);
    return 1;
}

int floe_tkeyidx_del(floe_tkeyidx_t *x, const void *key, size_t len, floe_tkeyidx_loc_t *old)
{
    if (!x->cap) return 0;
    bool found;
    slot_t *s = &x->slots[probe(x, key, len, floe_murmur3_32(key, len, 0x1dc5), &found)];
    if (!found) return 0;
    loc_of(x, s, old);
    s->state = SLOT_GONE;
    x->live--;
    return 1;
}

/* ---- the file ------------------------------------------------------------- */

static int put_uv(floe_buf_t *b, uint64_t v)
{
    uint8_t t[10];
    return floe_buf_append(b, t, floe_uvarint_encode(t, v));
}

static int put_bytes(floe_buf_t *b, const void *p, size_t n)
{
    return put_uv(b, n) < 0 || floe_buf_append(b, p, n) < 0 ? -1 : 0;
}

int floe_tkeyidx_encode(const floe_tkeyidx_t *x, floe_buf_t *out)
{
    size_t start = out->len;
    if (floe_buf_append(out, MAGIC, MAGIC_LEN) < 0 ||
        floe_buf_append_le64(out, (uint64_t)x->snapshot) < 0 ||
        put_bytes(out, x->uuid, strlen(x->uuid)) < 0 || put_uv(out, x->npaths) < 0)
        return -1;
    for (size_t i = 0; i < x->npaths; i++)
        if (put_bytes(out, x->paths[i], strlen(x->paths[i])) < 0) return -1;
    if (put_uv(out, x->live) < 0) return -1;
    for (size_t i = 0; i < x->cap; i++) {
        const slot_t *s = &x->slots[i];
        if (s->state != SLOT_USED) continue;
        if (put_bytes(out, x->keys.data + s->koff, s->klen) < 0 || put_uv(out, s->path) < 0 ||
            put_uv(out, (uint64_t)s->pos) < 0)
            return -1;
    }
    return floe_buf_append_le32(out, floe_crc32c(0, out->data + start, out->len - start));
}

typedef struct rd {
    const uint8_t *p;
    size_t n;
} rd_t;

static int get_uv(rd_t *r, uint64_t *v)
{
    int k = floe_uvarint64_decode(r->p, r->n, v);
    if (k <= 0) return -1;
    r->p += k;
    r->n -= (size_t)k;
    return 0;
}

static int get_bytes(rd_t *r, const uint8_t **p, size_t *len)
{
    uint64_t n;
    if (get_uv(r, &n) < 0 || n > r->n) return -1;
    *p = r->p;
    *len = (size_t)n;
    r->p += n;
    r->n -= (size_t)n;
    return 0;
}

floe_tkeyidx_t *floe_tkeyidx_decode(const uint8_t *p, size_t n, floe_err_t *err)
{
    if (n < MAGIC_LEN + 8 + 4 || memcmp(p, MAGIC, MAGIC_LEN)) {
        floe_err_set(err, FLOE_ECORRUPT, "key index: not an index file");
        return NULL;
    }
    if (floe_crc32c(0, p, n - 4) != floe_rd_le32(p + n - 4)) {
        floe_err_set(err, FLOE_ECORRUPT, "key index: checksum mismatch");
        return NULL;
    }
    floe_tkeyidx_t *x = floe_tkeyidx_new();
    if (!x) {
        floe_err_oom(err);
        return NULL;
    }
    rd_t r = {p + MAGIC_LEN + 8, n - MAGIC_LEN - 8 - 4};
    x->snapshot = (int64_t)floe_rd_le64(p + MAGIC_LEN);
    const uint8_t *b;
    size_t len;
    uint64_t np, nk;
    if (get_bytes(&r, &b, &len) < 0 || len >= sizeof x->uuid) goto bad;
    memcpy(x->uuid, b, len);
    x->uuid[len] = 0;
    if (get_uv(&r, &np) < 0 || np > r.n) goto bad; /* each path takes a byte at least */
    char path[4096];
    for (uint64_t i = 0; i < np; i++) {
        if (get_bytes(&r, &b, &len) < 0 || len >= sizeof path || memchr(b, 0, len)) goto bad;
        memcpy(path, b, len);
        path[len] = 0;
        /* every path once: interning a repeat would renumber the rest */
        if (floe_grow(&x->paths, &x->cappaths, x->npaths + 1, sizeof(char *)) ||
            !(x->paths[x->npaths] = strdup(path)))
            goto oom;
        x->npaths++;
    }
    if (get_uv(&r, &nk) < 0 || nk > r.n / 3) goto bad; /* each key takes 3 bytes at least */
    for (uint64_t i = 0; i < nk; i++) {
        uint64_t pid, pos;
        if (get_bytes(&r, &b, &len) < 0 || !len || get_uv(&r, &pid) < 0 || get_uv(&r, &pos) < 0 ||
            pid >= x->npaths || pos > INT64_MAX)
            goto bad;
        x->last_path = (size_t)pid;
        int rc = floe_tkeyidx_put(x, b, len, x->paths[pid], (int64_t)pos, NULL);
        if (rc < 0) goto oom;
        if (rc == 1) goto bad; /* a key twice */
    }
    if (r.n) goto bad;
    return x;
bad:
    floe_err_set(err, FLOE_ECORRUPT, "key index: malformed");
    floe_tkeyidx_free(x);
    return NULL;
oom:
    floe_err_oom(err);
    floe_tkeyidx_free(x);
    return NULL;
}

int floe_tkeyidx_save(const floe_tkeyidx_t *x, const char *path, floe_err_t *err)
{
    floe_buf_t b = FLOE_BUF_INIT;
    int rc = floe_tkeyidx_encode(x, &b) < 0 ? floe_err_oom(err)
                                            : floe_fs_write_atomic(path, b.data, b.len, err);
    floe_buf_free(&b);
    return rc;
}

floe_tkeyidx_t *floe_tkeyidx_load(const char *path, floe_err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        floe_err_set(err, errno == ENOENT ? FLOE_ENOENT : FLOE_EIO, "key index %s: %s", path,
                     strerror(errno));
        return NULL;
    }
    floe_buf_t b = FLOE_BUF_INIT;
    uint8_t chunk[65536];
    size_t k;
    bool ok = true;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (b.len + k > FILE_MAX || floe_buf_append(&b, chunk, k) < 0) {
            ok = false;
            break;
        }
    fclose(f);
    floe_tkeyidx_t *x = ok ? floe_tkeyidx_decode(b.data, b.len, err) : NULL;
    if (!ok) floe_err_set(err, FLOE_ECORRUPT, "key index %s: too large", path);
    floe_buf_free(&b);
    return x;
}
