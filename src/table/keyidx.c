/* The key index of a position-delete upsert table (keyidx.h). */
#include "table/keyidx.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/crc32c.h"
#include "util/fs.h"
#include "util/mem.h"
#include "util/murmur3.h"
#include "util/varint.h"

#define MAGIC "FLKIDX1\n"
#define MAGIC_LEN 8
#define FILE_MAX ((size_t)1 << 34) /* a saved index read back at most */
#define KEY_INLINE 1024            /* longer keys stay in memory when the rest is paged */

enum { SLOT_EMPTY = 0, SLOT_USED, SLOT_GONE };

typedef struct slot {
    uint64_t koff; /* key bytes at keys.data + koff */
    uint32_t klen, path, hash, state;
    int64_t pos;
} slot_t;

typedef struct pstore pstore_t; /* the keys on disk, beyond the bound */

struct floe_tkeyidx {
    slot_t *slots;
    size_t cap, used, live; /* used counts gone slots too */
    floe_buf_t keys;        /* key bytes, appended; dropped keys stay until a reset */
    char **paths;
    size_t npaths, cappaths;
    size_t last_path; /* the path put last: most puts repeat it */
    char uuid[64];
    int64_t snapshot;
    size_t bound; /* bytes of memory at most (0: unbounded) */
    char *bpath;  /* the file the keys go to beyond it */
    pstore_t *ps; /* NULL: every key in memory; else keys of KEY_INLINE bytes at most live there */
};

static void ps_close(pstore_t *ps);
static size_t ps_mem(const pstore_t *ps);
static int ps_put(floe_tkeyidx_t *x, const void *key, size_t len, uint32_t pid, int64_t pos,
                  floe_tkeyidx_loc_t *old);
static int ps_find(floe_tkeyidx_t *x, const void *key, size_t len, bool del,
                   floe_tkeyidx_loc_t *loc);
static int to_paged(floe_tkeyidx_t *x, floe_err_t *err);
static size_t frames_allowed(const floe_tkeyidx_t *x);
static int cache_trim(floe_tkeyidx_t *x, size_t allowed);

floe_tkeyidx_t *floe_tkeyidx_new(void)
{
    floe_tkeyidx_t *x = calloc(1, sizeof *x);
    if (x) x->snapshot = -1;
    return x;
}

/* Forget the keys in memory (the paged store, bound and path stay). */
static void mem_reset(floe_tkeyidx_t *x)
{
    free(x->slots);
    floe_buf_free(&x->keys);
    for (size_t i = 0; i < x->npaths; i++) free(x->paths[i]);
    free(x->paths);
    x->slots = NULL;
    x->keys = (floe_buf_t)FLOE_BUF_INIT;
    x->paths = NULL;
    x->cap = x->used = x->live = x->npaths = x->cappaths = x->last_path = 0;
}

void floe_tkeyidx_reset(floe_tkeyidx_t *x)
{
    mem_reset(x);
    ps_close(x->ps);
    x->ps = NULL;
    x->uuid[0] = 0;
    x->snapshot = -1;
}

void floe_tkeyidx_free(floe_tkeyidx_t *x)
{
    if (!x) return;
    floe_tkeyidx_reset(x);
    free(x->bpath);
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

/* Bytes held by everything but the paged store. */
static size_t mem_part(const floe_tkeyidx_t *x)
{
    size_t b = sizeof *x + x->cap * sizeof(slot_t) + x->keys.cap + x->cappaths * sizeof(char *);
    for (size_t i = 0; i < x->npaths; i++) b += strlen(x->paths[i]) + 1;
    return b + (x->bpath ? strlen(x->bpath) + 1 : 0);
}

size_t floe_tkeyidx_mem(const floe_tkeyidx_t *x)
{
    return mem_part(x) + ps_mem(x->ps);
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

/* Would the memory part grow past the bound by extra bytes? */
static bool over_bound(const floe_tkeyidx_t *x, size_t extra)
{
    return x->bound && x->bpath && !x->ps && mem_part(x) + extra > x->bound;
}

static int mem_put(floe_tkeyidx_t *x, const void *key, size_t len, const char *path, int64_t pos,
                   floe_tkeyidx_loc_t *old);

int floe_tkeyidx_put(floe_tkeyidx_t *x, const void *key, size_t len, const char *path, int64_t pos,
                     floe_tkeyidx_loc_t *old)
{
    if (len > UINT32_MAX) return -1;
    /* a growth of the table or of the key bytes that would cross the bound
     * (old and new arrays both held while it runs) moves the keys to disk first */
    size_t grow = 0;
    if ((x->used + 1) * 4 > x->cap * 3) grow += (x->cap ? x->cap * 2 : 64) * sizeof(slot_t);
    if (x->keys.len + len > x->keys.cap) grow += 2 * x->keys.cap + len;
    if (!x->ps && over_bound(x, grow) && to_paged(x, NULL) < 0) return -1;
    if (x->ps && len <= KEY_INLINE) {
        uint32_t pid;
        if (intern(x, path, &pid) < 0) return -1;
        return ps_put(x, key, len, pid, pos, old);
    }
    int rc = mem_put(x, key, len, path, pos, old);
    if (rc >= 0 && over_bound(x, 0) && to_paged(x, NULL) < 0) return -1;
    if (rc >= 0 && x->ps && cache_trim(x, frames_allowed(x)) < 0) return -1;
    return rc;
}

static int mem_put(floe_tkeyidx_t *x, const void *key, size_t len, const char *path, int64_t pos,
                   floe_tkeyidx_loc_t *old)
{
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
    /* the store's page cache changes on a lookup: the index is not const there */
    if (x->ps && len <= KEY_INLINE) return ps_find((floe_tkeyidx_t *)x, key, len, false, loc);
    if (!x->cap) return 0;
    bool found;
    const slot_t *s = &x->slots[probe(x, key, len, floe_murmur3_32(key, len, 0x1dc5), &found)];
    if (!found) return 0;
    loc_of(x, s, loc);
    return 1;
}

int floe_tkeyidx_del(floe_tkeyidx_t *x, const void *key, size_t len, floe_tkeyidx_loc_t *old)
{
    if (x->ps && len <= KEY_INLINE) return ps_find(x, key, len, true, old);
    if (!x->cap) return 0;
    bool found;
    slot_t *s = &x->slots[probe(x, key, len, floe_murmur3_32(key, len, 0x1dc5), &found)];
    if (!found) return 0;
    loc_of(x, s, old);
    s->state = SLOT_GONE;
    x->live--;
    return 1;
}

/* ---- the paged store ------------------------------------------------------
 *
 * Beyond the bound the keys go to a file of 4 KiB pages: page 0 the header,
 * pages 1..nb the hash buckets (bucket h & (nb - 1) of a key's murmur3 h),
 * further pages the overflow of full buckets, each chained from the page
 * before it (a higher page number).  A page: CRC32C of bytes 4..4096, the
 * next page of its chain (0: none), the bytes of entries it holds, 2 zero
 * bytes, then entries (uvarint key length, key, uvarint path number,
 * uvarint position).  After the pages, the trailer: the rest of the index
 * (uuid, snapshot, paths, keys longer than KEY_INLINE) as the in-memory
 * file (FLKIDX1).  The header: magic, page size, state (clean or dirty),
 * bucket count, page count, keys, entry bytes, trailer length, CRC32C.
 *
 * Pages are read and written through a cache of at most what the bound
 * leaves (clock eviction).  The header says clean only after a save wrote
 * every page and the trailer and made them durable; before the first page
 * written after that, it says dirty (durably).  So after a crash the file
 * is either the last save, whole, or dirty and rebuilt from the table. */

#define PAGE 4096
#define PHDR 12
#define PAYLOAD (PAGE - PHDR)
#define MAGIC2 "FLKIDX2\n"
#define HDR_LEN 48
#define MIN_FRAMES 8
#define DEFAULT_BOUND ((size_t)64 << 20)

enum { ST_CLEAN = 1, ST_DIRTY = 2 };

typedef struct frame {
    uint8_t *data;
    uint32_t pno; /* UINT32_MAX: none */
    bool dirty, ref;
} frame_t;

struct pstore {
    int fd;
    char *path;
    uint32_t nb;     /* buckets, a power of two: bucket b is page 1 + b */
    uint32_t npages; /* pages of the file, the header's included */
    uint64_t live;   /* keys in the pages */
    uint64_t bytes;  /* entry bytes in the pages */
    bool clean;      /* the header on disk says clean */
    bool synced_dir; /* the file's name is durable */
    frame_t *frames;
    size_t nframes, capframes, hand;
    uint32_t *frame_of; /* page -> frame + 1, 0: not cached */
    size_t cap_of;
    uint8_t *wbuf; /* two pages for writing chains outside the cache */
};

static size_t ps_mem(const pstore_t *ps)
{
    if (!ps) return 0;
    return sizeof *ps + strlen(ps->path) + 1 + ps->nframes * PAGE +
           ps->capframes * sizeof(frame_t) + ps->cap_of * sizeof(uint32_t) + 2 * PAGE;
}

static void ps_close(pstore_t *ps)
{
    if (!ps) return;
    if (ps->fd >= 0) close(ps->fd);
    for (size_t i = 0; i < ps->nframes; i++) free(ps->frames[i].data);
    free(ps->frames);
    free(ps->frame_of);
    free(ps->wbuf);
    free(ps->path);
    free(ps);
}

size_t floe_tkeyidx_count(const floe_tkeyidx_t *x)
{
    return x->live + (x->ps ? (size_t)x->ps->live : 0);
}

size_t floe_tkeyidx_disk(const floe_tkeyidx_t *x)
{
    return x->ps ? (size_t)x->ps->npages * PAGE : 0;
}

static int pio(int fd, void *buf, size_t n, uint64_t off, bool wr)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t k = wr ? pwrite(fd, p, n, (off_t)off) : pread(fd, p, n, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

static void hdr_fill(const pstore_t *ps, uint8_t *h, uint32_t state, uint64_t tlen)
{
    memset(h, 0, HDR_LEN + 4);
    memcpy(h, MAGIC2, MAGIC_LEN);
    floe_wr_be32(h + 8, PAGE);
    floe_wr_be32(h + 12, state);
    floe_wr_be32(h + 16, ps->nb);
    floe_wr_be32(h + 20, ps->npages);
    floe_wr_be64(h + 24, ps->live);
    floe_wr_be64(h + 32, ps->bytes);
    floe_wr_be64(h + 40, tlen);
    floe_wr_be32(h + HDR_LEN, floe_crc32c(0, h, HDR_LEN));
}

static int hdr_write(pstore_t *ps, int fd, uint32_t state, uint64_t tlen)
{
    uint8_t h[HDR_LEN + 4];
    hdr_fill(ps, h, state, tlen);
    return pio(fd, h, sizeof h, 0, true);
}

/* The file says dirty (durably) before its first page changes. */
static int mark_dirty(pstore_t *ps)
{
    if (!ps->clean) return 0;
    if (hdr_write(ps, ps->fd, ST_DIRTY, 0) < 0 || fdatasync(ps->fd) < 0) return -1;
    ps->clean = false;
    return 0;
}

static void page_seal(uint8_t *pg)
{
    floe_wr_be32(pg, floe_crc32c(0, pg + 4, PAGE - 4));
}

static int write_back(pstore_t *ps, frame_t *f)
{
    if (!f->dirty) return 0;
    if (mark_dirty(ps) < 0) return -1;
    page_seal(f->data);
    if (pio(ps->fd, f->data, PAGE, (uint64_t)f->pno * PAGE, true) < 0) return -1;
    f->dirty = false;
    return 0;
}

static int grow_of(pstore_t *ps, uint32_t npages)
{
    size_t old = ps->cap_of;
    if (floe_grow(&ps->frame_of, &ps->cap_of, npages, sizeof(uint32_t))) return -1;
    memset(ps->frame_of + old, 0, (ps->cap_of - old) * sizeof(uint32_t));
    return 0;
}

/* Frames the bound leaves room for. */
static size_t frames_allowed(const floe_tkeyidx_t *x)
{
    size_t fixed =
        mem_part(x) + ps_mem(x->ps) - x->ps->nframes * PAGE - x->ps->capframes * sizeof(frame_t);
    size_t bound = x->bound ? x->bound : DEFAULT_BOUND;
    size_t n = bound > fixed ? (bound - fixed) / (PAGE + sizeof(frame_t)) : 0;
    return n < MIN_FRAMES ? MIN_FRAMES : n;
}

/* Fewer frames when the rest of the index grew: at most allowed. */
static int cache_trim(floe_tkeyidx_t *x, size_t allowed)
{
    pstore_t *ps = x->ps;
    while (ps->nframes > allowed) {
        frame_t *f = &ps->frames[ps->nframes - 1];
        if (f->pno != UINT32_MAX) {
            if (write_back(ps, f) < 0) return -1;
            ps->frame_of[f->pno] = 0;
        }
        free(f->data);
        ps->nframes--;
        ps->hand = 0;
    }
    return 0;
}

/* Page pno in the cache (read from the file, or zeroed when fresh); valid
 * until the next call.  NULL on an I/O error or a damaged page. */
static uint8_t *page_at(floe_tkeyidx_t *x, uint32_t pno, bool write, bool fresh)
{
    pstore_t *ps = x->ps;
    frame_t *f;
    if (pno < ps->cap_of && ps->frame_of[pno]) {
        f = &ps->frames[ps->frame_of[pno] - 1];
    } else {
        if (grow_of(ps, pno + 1) < 0) return NULL;
        size_t allowed = frames_allowed(x);
        if (cache_trim(x, allowed) < 0) return NULL;
        if (ps->nframes < allowed) {
            if (ps->nframes == ps->capframes) { /* room for what the bound allows, no more */
                frame_t *fr = realloc(ps->frames, allowed * sizeof *fr);
                if (!fr) return NULL;
                ps->frames = fr;
                ps->capframes = allowed;
            }
            f = &ps->frames[ps->nframes];
            if (!(f->data = malloc(PAGE))) return NULL;
            ps->nframes++;
        } else {
            for (;; ps->hand = (ps->hand + 1) % ps->nframes) {
                f = &ps->frames[ps->hand];
                if (f->pno == UINT32_MAX || !f->ref) break;
                f->ref = false;
            }
            ps->hand = (ps->hand + 1) % ps->nframes;
            if (f->pno != UINT32_MAX) {
                if (write_back(ps, f) < 0) return NULL;
                ps->frame_of[f->pno] = 0;
            }
        }
        f->pno = UINT32_MAX;
        f->dirty = false;
        if (fresh) {
            memset(f->data, 0, PAGE);
            f->dirty = true;
        } else if (pio(ps->fd, f->data, PAGE, (uint64_t)pno * PAGE, false) < 0 ||
                   floe_rd_be32(f->data) != floe_crc32c(0, f->data + 4, PAGE - 4) ||
                   floe_rd_be32(f->data + 4) >= ps->npages ||
                   (floe_rd_be32(f->data + 4) && floe_rd_be32(f->data + 4) <= pno) ||
                   (size_t)((f->data[8] << 8) | f->data[9]) > PAYLOAD) {
            return NULL;
        }
        f->pno = pno;
        ps->frame_of[pno] = (uint32_t)(f - ps->frames) + 1;
    }
    f->ref = true;
    if (write) f->dirty = true;
    return f->data;
}

/* Write back every dirty page; drop all frames too when drop. */
static int cache_flush(pstore_t *ps, bool drop)
{
    for (size_t i = 0; i < ps->nframes; i++) {
        frame_t *f = &ps->frames[i];
        if (f->pno == UINT32_MAX) continue;
        if (write_back(ps, f) < 0) return -1;
        if (drop) {
            ps->frame_of[f->pno] = 0;
            f->pno = UINT32_MAX;
        }
    }
    return 0;
}

static size_t pg_used(const uint8_t *pg)
{
    return (size_t)((pg[8] << 8) | pg[9]);
}

static void pg_set_used(uint8_t *pg, size_t used)
{
    pg[8] = (uint8_t)(used >> 8);
    pg[9] = (uint8_t)used;
}

typedef struct ent {
    const uint8_t *key;
    size_t klen, len; /* len: the entry's bytes */
    uint64_t pid, pos;
    uint8_t tag;
} ent_t;

/* An entry: a tag (the key's hash >> 24), uvarint key length, the length
 * of the value (one byte), the key, the value (uvarint path number,
 * uvarint position).  A lookup skips an entry on its first bytes. */

/* The entry at p[off..n): 0, or -1 when malformed. */
static int ent_parse(const uint8_t *p, size_t n, size_t off, ent_t *e)
{
    uint64_t kl;
    size_t o = off + 1;
    int k;
    if (o >= n || (k = floe_uvarint64_decode(p + o, n - o, &kl)) <= 0) return -1;
    o += (size_t)k;
    if (o >= n || kl > n - o - 1) return -1;
    size_t vl = p[o++];
    e->tag = p[off];
    e->key = p + o;
    e->klen = (size_t)kl;
    o += e->klen;
    if (vl > n - o) return -1;
    const uint8_t *v = p + o;
    if ((k = floe_uvarint64_decode(v, vl, &e->pid)) <= 0) return -1;
    int k2 = floe_uvarint64_decode(v + k, vl - (size_t)k, &e->pos);
    if (k2 <= 0 || (size_t)(k + k2) != vl) return -1;
    e->len = o + vl - off;
    return 0;
}

static size_t ent_encode(uint8_t *out, const void *key, size_t len, uint32_t h, uint64_t pid,
                         uint64_t pos)
{
    out[0] = (uint8_t)(h >> 24);
    size_t o = 1 + floe_uvarint_encode(out + 1, len), vo = o + 1 + len;
    size_t vl = floe_uvarint_encode(out + vo, pid);
    vl += floe_uvarint_encode(out + vo + vl, pos);
    out[o] = (uint8_t)vl;
    memcpy(out + o + 1, key, len);
    return vo + vl;
}

static uint32_t bucket_of(uint32_t h, uint32_t nb)
{
    return 1 + (h & (nb - 1));
}

/* Where key is in the pages: 1 with its page and offset and *e (fields
 * but the key), 0 when absent, -1 on an I/O error or a malformed page. */
static int ps_lookup(floe_tkeyidx_t *x, const void *key, size_t len, uint32_t h, uint32_t *pno,
                     size_t *off, ent_t *e)
{
    uint8_t tag = (uint8_t)(h >> 24);
    for (uint32_t p = bucket_of(h, x->ps->nb); p;) {
        const uint8_t *pg = page_at(x, p, false, false);
        if (!pg) return -1;
        size_t end = PHDR + pg_used(pg);
        for (size_t o = PHDR; o < end;) {
            size_t kl = o + 1 < end ? pg[o + 1] : 0, ko = o + 3;
            if (kl >= 0x80 || ko > end) { /* a long key (or a bad page): the slow way */
                if (ent_parse(pg, end, o, e) < 0) return -1;
                if (e->tag == tag && e->klen == len && !memcmp(e->key, key, len)) goto found;
                o += e->len;
                continue;
            }
            size_t next = ko + kl + pg[o + 2];
            if (next > end) return -1;
            if (pg[o] == tag && kl == len && !memcmp(pg + ko, key, len)) {
                if (ent_parse(pg, end, o, e) < 0) return -1;
                goto found;
            }
            o = next;
            continue;
        found:
            *pno = p;
            *off = o;
            return 1;
        }
        p = floe_rd_be32(pg + 4);
    }
    return 0;
}

static int loc_set(const floe_tkeyidx_t *x, const ent_t *e, floe_tkeyidx_loc_t *loc)
{
    if (e->pid >= x->npaths || e->pos > INT64_MAX) return -1;
    if (loc) *loc = (floe_tkeyidx_loc_t){x->paths[e->pid], (int64_t)e->pos};
    return 0;
}

/* Remove the entry of len bytes at off of page pno. */
static int ps_remove(floe_tkeyidx_t *x, uint32_t pno, size_t off, size_t len)
{
    uint8_t *pg = page_at(x, pno, true, false);
    if (!pg) return -1;
    size_t used = pg_used(pg);
    memmove(pg + off, pg + off + len, PHDR + used - off - len);
    pg_set_used(pg, used - len);
    x->ps->bytes -= len;
    return 0;
}

static int ps_find(floe_tkeyidx_t *x, const void *key, size_t len, bool del,
                   floe_tkeyidx_loc_t *loc)
{
    uint32_t pno;
    size_t off;
    ent_t e;
    int r = ps_lookup(x, key, len, floe_murmur3_32(key, len, 0x1dc5), &pno, &off, &e);
    if (r != 1) return r;
    if (loc_set(x, &e, loc) < 0) return -1;
    if (!del) return 1;
    if (ps_remove(x, pno, off, e.len) < 0) return -1;
    x->ps->live--;
    return 1;
}

static int ps_double(floe_tkeyidx_t *x);

/* Append entry ent[0..n) to the chain of bucket page first: in the first
 * page with room, else in a new overflow page. */
static int ps_insert(floe_tkeyidx_t *x, uint32_t first, const uint8_t *ent, size_t n)
{
    pstore_t *ps = x->ps;
    for (uint32_t p = first;;) {
        uint8_t *pg = page_at(x, p, false, false);
        if (!pg) return -1;
        uint32_t next = floe_rd_be32(pg + 4);
        size_t used = pg_used(pg);
        if (PAYLOAD - used >= n || !next) {
            if (PAYLOAD - used < n) { /* a new page at the chain's end */
                if (ps->npages == UINT32_MAX) return -1;
                next = ps->npages++;
                if (!(pg = page_at(x, p, true, false))) return -1;
                floe_wr_be32(pg + 4, next);
                if (!(pg = page_at(x, next, true, true))) return -1;
                used = 0;
            } else if (!(pg = page_at(x, p, true, false))) {
                return -1;
            }
            memcpy(pg + PHDR + used, ent, n);
            pg_set_used(pg, used + n);
            ps->bytes += n;
            /* buckets fuller than 3/4 on average: twice as many */
            return ps->bytes > (uint64_t)ps->nb * PAYLOAD * 3 / 4 && ps->nb < (1u << 30)
                       ? ps_double(x)
                       : 0;
        }
        p = next;
    }
}

static int ps_put(floe_tkeyidx_t *x, const void *key, size_t len, uint32_t pid, int64_t pos,
                  floe_tkeyidx_loc_t *old)
{
    uint8_t ent[KEY_INLINE + 32];
    uint32_t h = floe_murmur3_32(key, len, 0x1dc5), pno;
    size_t n = ent_encode(ent, key, len, h, pid, (uint64_t)pos);
    size_t off;
    ent_t e;
    int r = ps_lookup(x, key, len, h, &pno, &off, &e);
    if (r < 0) return -1;
    if (r == 1) {
        if (loc_set(x, &e, old) < 0) return -1;
        if (e.len == n) { /* the same size: in place */
            uint8_t *pg = page_at(x, pno, true, false);
            if (!pg) return -1;
            memcpy(pg + off, ent, n);
            return 1;
        }
        if (ps_remove(x, pno, off, e.len) < 0) return -1;
    }
    if (ps_insert(x, bucket_of(h, x->ps->nb), ent, n) < 0) return -1;
    if (r == 0) x->ps->live++;
    return r;
}

uint64_t floe_tkeyidx_order(const floe_tkeyidx_t *x, const void *key, size_t len)
{
    if (!x->ps || len > KEY_INLINE) return 0;
    return bucket_of(floe_murmur3_32(key, len, 0x1dc5), x->ps->nb);
}

/* Writing chains straight to a file: page pno filled with entries, its
 * overflow pages taken from *npages. */
typedef struct pwriter {
    int fd;
    uint8_t *pg;
    uint32_t pno;
    uint32_t *npages;
} pwriter_t;

static void pw_start(pwriter_t *w, int fd, uint8_t *pg, uint32_t pno, uint32_t *npages)
{
    *w = (pwriter_t){fd, pg, pno, npages};
    memset(pg, 0, PAGE);
}

static int pw_end(pwriter_t *w)
{
    page_seal(w->pg);
    return pio(w->fd, w->pg, PAGE, (uint64_t)w->pno * PAGE, true);
}

static int pw_add(pwriter_t *w, const uint8_t *ent, size_t n)
{
    size_t used = pg_used(w->pg);
    if (PAYLOAD - used < n) {
        if (*w->npages == UINT32_MAX) return -1;
        uint32_t next = (*w->npages)++;
        floe_wr_be32(w->pg + 4, next);
        if (pw_end(w) < 0) return -1;
        memset(w->pg, 0, PAGE);
        w->pno = next;
        used = 0;
    }
    memcpy(w->pg + PHDR + used, ent, n);
    pg_set_used(w->pg, used + n);
    return 0;
}

static pstore_t *ps_new(const char *path)
{
    pstore_t *ps = calloc(1, sizeof *ps);
    if (!ps) return NULL;
    ps->fd = -1;
    if (!(ps->path = strdup(path)) || !(ps->wbuf = malloc(2 * PAGE))) {
        ps_close(ps);
        return NULL;
    }
    return ps;
}

static int sync_dir_of(const char *path)
{
    char dir[4400];
    floe_err_t e;
    return floe_fs_dirname(path, dir, sizeof dir, &e) < 0 || floe_fs_fsync_dir(dir, &e) < 0 ? -1
                                                                                            : 0;
}

/* Twice as many buckets: a new file written bucket by bucket (each old
 * chain splits into two), renamed over the old one. */
static int ps_double(floe_tkeyidx_t *x)
{
    pstore_t *ps = x->ps;
    char tmp[4400];
    if (snprintf(tmp, sizeof tmp, "%s.grow", ps->path) >= (int)sizeof tmp) return -1;
    int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    uint32_t nb = ps->nb, npages = 1 + 2 * nb;
    pwriter_t lo, hi;
    for (uint32_t b = 0; b < nb; b++) {
        pw_start(&lo, fd, ps->wbuf, 1 + b, &npages);
        pw_start(&hi, fd, ps->wbuf + PAGE, 1 + nb + b, &npages);
        for (uint32_t p = 1 + b; p;) {
            const uint8_t *pg = page_at(x, p, false, false);
            if (!pg) goto fail;
            size_t end = PHDR + pg_used(pg);
            ent_t e;
            for (size_t o = PHDR; o < end; o += e.len) {
                if (ent_parse(pg, end, o, &e) < 0) goto fail;
                pwriter_t *w = floe_murmur3_32(e.key, e.klen, 0x1dc5) & nb ? &hi : &lo;
                if (pw_add(w, pg + o, e.len) < 0) goto fail;
            }
            p = floe_rd_be32(pg + 4);
        }
        if (pw_end(&lo) < 0 || pw_end(&hi) < 0) goto fail;
    }
    uint32_t onb = ps->nb, onp = ps->npages;
    ps->nb = 2 * nb;
    ps->npages = npages;
    if (hdr_write(ps, fd, ST_DIRTY, 0) < 0 || rename(tmp, ps->path) < 0) {
        ps->nb = onb;
        ps->npages = onp;
        goto fail;
    }
    for (size_t i = 0; i < ps->nframes; i++) ps->frames[i].pno = UINT32_MAX;
    memset(ps->frame_of, 0, ps->cap_of * sizeof(uint32_t));
    close(ps->fd);
    ps->fd = fd;
    ps->clean = false;
    ps->synced_dir = false;
    return 0;
fail:
    close(fd);
    unlink(tmp);
    return -1;
}

/* Move the keys of KEY_INLINE bytes at most from memory to a new file at
 * x->bpath, in buckets sized for half full; the rest stays. */
static int to_paged(floe_tkeyidx_t *x, floe_err_t *err)
{
    uint64_t bytes = 0, n = 0;
    uint8_t ent[KEY_INLINE + 32];
    for (size_t i = 0; i < x->cap; i++) {
        const slot_t *s = &x->slots[i];
        if (s->state != SLOT_USED || s->klen > KEY_INLINE) continue;
        bytes +=
            ent_encode(ent, x->keys.data + s->koff, s->klen, s->hash, s->path, (uint64_t)s->pos);
        n++;
    }
    uint32_t nb = 1;
    while ((uint64_t)nb * PAYLOAD < bytes * 2 && nb < (1u << 30)) nb *= 2;
    pstore_t *ps = ps_new(x->bpath);
    uint32_t *cnt = calloc((size_t)nb + 1, sizeof *cnt);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    int fd = ps ? open(ps->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
    if (!ps || !cnt || !order || fd < 0) goto fail;
    ps->fd = fd;
    ps->nb = nb;
    ps->npages = 1 + nb;
    ps->live = n;
    ps->bytes = bytes;
    if (hdr_write(ps, fd, ST_DIRTY, 0) < 0) goto fail;
    /* the slots by bucket (a counting sort), then each bucket's chain */
    for (size_t i = 0; i < x->cap; i++)
        if (x->slots[i].state == SLOT_USED && x->slots[i].klen <= KEY_INLINE)
            cnt[bucket_of(x->slots[i].hash, nb)]++;
    for (uint32_t b = 1; b <= nb; b++) cnt[b] += cnt[b - 1];
    for (size_t i = x->cap; i-- > 0;)
        if (x->slots[i].state == SLOT_USED && x->slots[i].klen <= KEY_INLINE)
            order[--cnt[bucket_of(x->slots[i].hash, nb)]] = i;
    pwriter_t w;
    size_t k = 0;
    for (uint32_t b = 1; b <= nb; b++) {
        pw_start(&w, fd, ps->wbuf, b, &ps->npages);
        for (; k < n && bucket_of(x->slots[order[k]].hash, nb) == b; k++) {
            const slot_t *s = &x->slots[order[k]];
            size_t len = ent_encode(ent, x->keys.data + s->koff, s->klen, s->hash, s->path,
                                    (uint64_t)s->pos);
            if (pw_add(&w, ent, len) < 0) goto fail;
        }
        if (pw_end(&w) < 0) goto fail;
    }
    free(cnt);
    free(order);
    cnt = NULL;
    order = NULL;
    /* memory keeps the long keys only */
    floe_tkeyidx_t keep = *x;
    x->slots = NULL;
    x->keys = (floe_buf_t)FLOE_BUF_INIT;
    x->cap = x->used = x->live = 0;
    for (size_t i = 0; i < keep.cap; i++) {
        const slot_t *s = &keep.slots[i];
        if (s->state == SLOT_USED && s->klen > KEY_INLINE &&
            mem_put(x, keep.keys.data + s->koff, s->klen, x->paths[s->path], s->pos, NULL) < 0) {
            free(x->slots);
            floe_buf_free(&x->keys);
            x->slots = keep.slots;
            x->keys = keep.keys;
            x->cap = keep.cap;
            x->used = keep.used;
            x->live = keep.live;
            goto fail;
        }
    }
    free(keep.slots);
    floe_buf_free(&keep.keys);
    x->ps = ps;
    return 0;
fail:
    if (err) floe_err_set(err, FLOE_EIO, "key index %s: %s", x->bpath, strerror(errno));
    free(cnt);
    free(order);
    ps_close(ps);
    return -1;
}

int floe_tkeyidx_set_bound(floe_tkeyidx_t *x, size_t mem_bytes, const char *path, floe_err_t *err)
{
    char *p = path ? strdup(path) : NULL;
    if (path && !p) return floe_err_oom(err);
    free(x->bpath);
    x->bpath = p;
    x->bound = mem_bytes;
    if (x->ps) { /* a smaller cache: every frame written back and let go */
        pstore_t *ps = x->ps;
        if (ps->nframes > frames_allowed(x)) {
            if (cache_flush(ps, true) < 0)
                return floe_err_set(err, FLOE_EIO, "key index %s: %s", ps->path, strerror(errno));
            for (size_t i = 0; i < ps->nframes; i++) free(ps->frames[i].data);
            ps->nframes = ps->hand = 0;
        }
        return 0;
    }
    return over_bound(x, 0) ? to_paged(x, err) : 0;
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

/* The in-memory file of x's keys in memory, and of its paged ones too
 * when pages (the trailer of a paged file leaves them out). */
static int encode_part(floe_tkeyidx_t *x, floe_buf_t *out, bool pages)
{
    size_t start = out->len;
    if (floe_buf_append(out, MAGIC, MAGIC_LEN) < 0 ||
        floe_buf_append_le64(out, (uint64_t)x->snapshot) < 0 ||
        put_bytes(out, x->uuid, strlen(x->uuid)) < 0 || put_uv(out, x->npaths) < 0)
        return -1;
    for (size_t i = 0; i < x->npaths; i++)
        if (put_bytes(out, x->paths[i], strlen(x->paths[i])) < 0) return -1;
    if (put_uv(out, pages ? floe_tkeyidx_count(x) : x->live) < 0) return -1;
    for (size_t i = 0; i < x->cap; i++) {
        const slot_t *s = &x->slots[i];
        if (s->state != SLOT_USED) continue;
        if (put_bytes(out, x->keys.data + s->koff, s->klen) < 0 || put_uv(out, s->path) < 0 ||
            put_uv(out, (uint64_t)s->pos) < 0)
            return -1;
    }
    for (uint32_t p = 1; pages && x->ps && p < x->ps->npages; p++) {
        const uint8_t *pg = page_at(x, p, false, false);
        if (!pg) return -1;
        size_t end = PHDR + pg_used(pg);
        ent_t e;
        for (size_t o = PHDR; o < end; o += e.len)
            if (ent_parse(pg, end, o, &e) < 0 || put_bytes(out, e.key, e.klen) < 0 ||
                put_uv(out, e.pid) < 0 || put_uv(out, e.pos) < 0)
                return -1;
    }
    return floe_buf_append_le32(out, floe_crc32c(0, out->data + start, out->len - start));
}

int floe_tkeyidx_encode(const floe_tkeyidx_t *x, floe_buf_t *out)
{
    /* a paged index reads its pages through its cache: not const there */
    return encode_part((floe_tkeyidx_t *)x, out, true);
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

/* Save a paged index in place: every page and the trailer written and
 * durable, then the header says clean. */
static int ps_save(floe_tkeyidx_t *x, floe_err_t *err)
{
    pstore_t *ps = x->ps;
    floe_buf_t t = FLOE_BUF_INIT;
    if (encode_part(x, &t, false) < 0) {
        floe_buf_free(&t);
        return floe_err_oom(err);
    }
    uint64_t end = (uint64_t)ps->npages * PAGE;
    int rc = 0;
    if (mark_dirty(ps) < 0 || cache_flush(ps, false) < 0 ||
        pio(ps->fd, t.data, t.len, end, true) < 0 || ftruncate(ps->fd, (off_t)(end + t.len)) < 0 ||
        fdatasync(ps->fd) < 0 || hdr_write(ps, ps->fd, ST_CLEAN, t.len) < 0 ||
        fdatasync(ps->fd) < 0 || (!ps->synced_dir && sync_dir_of(ps->path) < 0))
        rc = floe_err_set(err, FLOE_EIO, "key index %s: %s", ps->path, strerror(errno));
    else
        ps->clean = ps->synced_dir = true;
    floe_buf_free(&t);
    return rc;
}

int floe_tkeyidx_save(const floe_tkeyidx_t *x, const char *path, floe_err_t *err)
{
    /* a paged index writes its own file: not const there */
    if (x->ps && !strcmp(path, x->ps->path)) return ps_save((floe_tkeyidx_t *)x, err);
    floe_buf_t b = FLOE_BUF_INIT;
    int rc = floe_tkeyidx_encode(x, &b) < 0 ? floe_err_oom(err)
                                            : floe_fs_write_atomic(path, b.data, b.len, err);
    floe_buf_free(&b);
    return rc;
}

typedef struct kref {
    const uint8_t *key;
    size_t len;
} kref_t;

static int kref_cmp(const void *a, const void *b)
{
    const kref_t *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return memcmp(x->key, y->key, x->len);
}

#define CHAIN_MAX 1024 /* pages of one bucket a saved file may have */

/* Check every page of a paged file (fd, header fields in ps) against x's
 * paths: checksums, entries, each key in its bucket and once, each
 * overflow page in one chain, the key count and bytes.  0 or -1. */
static int ps_verify(const pstore_t *ps, const floe_tkeyidx_t *x)
{
    uint8_t *chain = NULL, *seen = calloc(ps->npages / 8 + 1, 1);
    kref_t *keys = NULL;
    size_t capchain = 0, capkeys = 0;
    uint64_t live = 0, bytes = 0;
    int rc = seen ? 0 : -1;
    for (uint32_t b = 0; rc == 0 && b < ps->nb; b++) {
        size_t np = 0, nk = 0;
        for (uint32_t p = 1 + b; rc == 0 && p;) {
            if (np == CHAIN_MAX || (p > ps->nb && (seen[p / 8] >> (p % 8)) & 1) ||
                floe_grow(&chain, &capchain, (np + 1) * PAGE, 1)) {
                rc = -1;
                break;
            }
            seen[p / 8] |= (uint8_t)(1u << (p % 8));
            uint8_t *pg = chain + np++ * PAGE;
            uint32_t next;
            if (pio(ps->fd, pg, PAGE, (uint64_t)p * PAGE, false) < 0 ||
                floe_rd_be32(pg) != floe_crc32c(0, pg + 4, PAGE - 4) || pg_used(pg) > PAYLOAD ||
                pg[10] || pg[11] ||
                ((next = floe_rd_be32(pg + 4)) &&
                 (next <= p || next <= ps->nb || next >= ps->npages))) {
                rc = -1;
                break;
            }
            p = next;
        }
        for (size_t i = 0; rc == 0 && i < np; i++) {
            const uint8_t *pg = chain + i * PAGE;
            size_t end = PHDR + pg_used(pg);
            ent_t e;
            uint32_t h;
            for (size_t o = PHDR; rc == 0 && o < end; o += e.len) {
                if (ent_parse(pg, end, o, &e) < 0 || !e.klen || e.klen > KEY_INLINE ||
                    e.pid >= x->npaths || e.pos > INT64_MAX ||
                    (h = floe_murmur3_32(e.key, e.klen, 0x1dc5), bucket_of(h, ps->nb) != 1 + b) ||
                    e.tag != (uint8_t)(h >> 24) ||
                    floe_grow(&keys, &capkeys, nk + 1, sizeof *keys)) {
                    rc = -1;
                    break;
                }
                keys[nk++] = (kref_t){e.key, e.klen};
                live++;
                bytes += e.len;
            }
        }
        if (rc == 0 && nk > 1) {
            qsort(keys, nk, sizeof *keys, kref_cmp);
            for (size_t i = 1; rc == 0 && i < nk; i++)
                if (!kref_cmp(&keys[i - 1], &keys[i])) rc = -1; /* a key twice */
        }
    }
    for (uint32_t p = ps->nb + 1; rc == 0 && p < ps->npages; p++)
        if (!((seen[p / 8] >> (p % 8)) & 1)) rc = -1; /* a page of no chain */
    if (rc == 0 && (live != ps->live || bytes != ps->bytes)) rc = -1;
    free(chain);
    free(keys);
    free(seen);
    return rc;
}

/* A paged file at path, open as fd: checked whole, then used in place. */
static floe_tkeyidx_t *ps_load(const char *path, int fd, floe_err_t *err)
{
    uint8_t h[HDR_LEN + 4];
    struct stat st;
    pstore_t *ps = ps_new(path);
    floe_tkeyidx_t *x = NULL;
    uint8_t *t = NULL;
    if (!ps) {
        close(fd);
        floe_err_oom(err);
        return NULL;
    }
    ps->fd = fd;
    if (pio(fd, h, sizeof h, 0, false) < 0 || fstat(fd, &st) < 0 ||
        floe_rd_be32(h + HDR_LEN) != floe_crc32c(0, h, HDR_LEN))
        goto bad;
    ps->nb = floe_rd_be32(h + 16);
    ps->npages = floe_rd_be32(h + 20);
    ps->live = floe_rd_be64(h + 24);
    ps->bytes = floe_rd_be64(h + 32);
    uint64_t tlen = floe_rd_be64(h + 40);
    if (floe_rd_be32(h + 8) != PAGE || floe_rd_be32(h + 12) != ST_CLEAN || !ps->nb ||
        (ps->nb & (ps->nb - 1)) || ps->nb > (1u << 30) || ps->npages <= ps->nb || tlen > FILE_MAX ||
        !tlen || (uint64_t)st.st_size != (uint64_t)ps->npages * PAGE + tlen)
        goto bad;
    if (!(t = malloc(tlen))) {
        floe_err_oom(err);
        goto fail;
    }
    if (pio(fd, t, tlen, (uint64_t)ps->npages * PAGE, false) < 0) goto bad;
    if (!(x = floe_tkeyidx_decode(t, tlen, err))) goto fail;
    for (size_t i = 0; i < x->cap; i++)
        if (x->slots[i].state == SLOT_USED && x->slots[i].klen <= KEY_INLINE) goto bad;
    if (ps_verify(ps, x) < 0) goto bad;
    if (!(x->bpath = strdup(path))) {
        floe_err_oom(err);
        goto fail;
    }
    ps->clean = ps->synced_dir = true;
    x->ps = ps;
    free(t);
    return x;
bad:
    floe_err_set(err, FLOE_ECORRUPT, "key index %s: damaged", path);
fail:
    free(t);
    floe_tkeyidx_free(x);
    ps_close(ps);
    return NULL;
}

floe_tkeyidx_t *floe_tkeyidx_load(const char *path, floe_err_t *err)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        floe_err_set(err, errno == ENOENT ? FLOE_ENOENT : FLOE_EIO, "key index %s: %s", path,
                     strerror(errno));
        return NULL;
    }
    uint8_t m[MAGIC_LEN];
    if (pio(fd, m, MAGIC_LEN, 0, false) == 0 && !memcmp(m, MAGIC2, MAGIC_LEN))
        return ps_load(path, fd, err);
    floe_buf_t b = FLOE_BUF_INIT;
    uint8_t chunk[65536];
    ssize_t k;
    bool ok = true;
    while ((k = pread(fd, chunk, sizeof chunk, (off_t)b.len)) > 0)
        if (b.len + (size_t)k > FILE_MAX || floe_buf_append(&b, chunk, (size_t)k) < 0) {
            ok = false;
            break;
        }
    close(fd);
    floe_tkeyidx_t *x = ok ? floe_tkeyidx_decode(b.data, b.len, err) : NULL;
    if (!ok) floe_err_set(err, FLOE_ECORRUPT, "key index %s: too large", path);
    floe_buf_free(&b);
    return x;
}
