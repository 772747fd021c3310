/* Segment files: the .log of whole batches, its sparse offset index and
 * its time index; recovery of a torn tail; index lookups.  The indexes
 * live in memory (loaded or rebuilt at open) and are appended to their
 * files as entries are made, so a restart can trust them. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/log_int.h"
#include "util/diag.h"
#include "util/fs.h"
#include "util/mem.h"

#define IDX_ENTRY 8
#define TIDX_ENTRY 12
#define WINDOW (1u << 20) /* read-ahead when scanning a segment */

static void unmap_indexes(floe_segment_t *s);

/* A stored batch holds records, except the empty header that compaction
 * keeps as a producer's last batch (cleaner.c). */
static bool records_ok(const floe_batch_hdr_t *h)
{
    return h->record_count > 0 || (h->record_count == 0 && h->producer_id >= 0);
}
static int recover_fd(floe_segment_t *s, int fd, uint32_t index_interval, bool check_crc,
                      floe_segment_batch_cb cb, void *arg, uint64_t *truncated, floe_err_t *err);

int floe_segment_path(char *out, size_t cap, const char *dir, int64_t base, const char *ext,
                      floe_err_t *err)
{
    return floe_path_fmt(out, cap, err, "%s/%020" PRId64 ".%s", dir, base, ext);
}

int floe_segment_truncate_indexes(floe_segment_t *s, floe_err_t *err);

/* Path of one of the segment's index files: its .log path with another
 * extension. */
static int index_path(const floe_segment_t *s, const char *ext, char *out, size_t cap,
                      floe_err_t *err)
{
    size_t n = strlen(s->log.path);
    return floe_path_fmt(out, cap, err, "%.*s%s", (int)(n - 3), s->log.path, ext);
}

/* Open one index file for a moment: flags as for open(2).  -1 with *err
 * (errno kept, so a caller can tell ENOENT). */
static int open_index(const floe_segment_t *s, const char *ext, int flags, floe_err_t *err)
{
    char path[PATH_MAX];
    if (index_path(s, ext, path, sizeof path, err) != 0) return -1;
    int fd = open(path, flags | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        floe_err_errno(err, e, path);
        errno = e;
    }
    return fd;
}

int floe_segment_open(const char *dir, int64_t base, bool create, floe_segment_t **out,
                      floe_err_t *err)
{
    char path[PATH_MAX];
    if (floe_segment_path(path, sizeof path, dir, base, "log", err) != 0) return -1;
    floe_segment_t *s = calloc(1, sizeof *s);
    if (!s) return floe_err_set(err, FLOE_ENOMEM, "out of memory opening a segment");
    s->base = s->next = base;
    s->max_ts = -1;
    s->max_ts_off = base;
    s->roll_base_ms = -1;
    if (floe_fdc_init(&s->log, path, err) != 0) {
        free(s);
        return -1;
    }
    int fd = open(path, O_RDWR | O_CLOEXEC);
    bool created = false;
    if (fd < 0 && errno == ENOENT && create) {
        fd = open(path, O_RDWR | O_CLOEXEC | O_CREAT, 0644);
        created = true;
    }
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        floe_err_errno(err, errno, path);
        if (fd >= 0) close(fd);
        floe_segment_free(s);
        return -1;
    }
    s->size = (uint64_t)st.st_size;
    floe_fdc_adopt(&s->log, fd);
    /* a new segment has (empty) index files from the start: a sealed one
     * without them is rebuilt at open */
    if (created && floe_segment_truncate_indexes(s, err) != 0) {
        floe_segment_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

void floe_segment_free(floe_segment_t *s)
{
    if (!s) return;
    floe_fdc_close(&s->log);
    unmap_indexes(s);
    free(s->idx);
    free(s->tidx);
    free(s);
}

void floe_segment_unlink(const char *dir, const floe_segment_t *s)
{
    static const char *exts[] = {"log", "index", "timeindex"};
    char path[PATH_MAX];
    for (size_t i = 0; i < 3; i++) {
        floe_err_t e;
        if (floe_segment_path(path, sizeof path, dir, s->base, exts[i], &e) != 0)
            FLOE_WARN("log: cannot delete a segment file: %s", e.msg);
        else if (unlink(path) != 0 && errno != ENOENT)
            FLOE_WARN("log: cannot delete %s: %s", path, strerror(errno));
    }
}

static int pread_full(int fd, void *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (uint8_t *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    return got == n ? 0 : 1;
}

static int pwrite_full(int fd, const void *buf, size_t n, uint64_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = pwrite(fd, (const uint8_t *)buf + done, n - done, (off_t)(off + done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        done += (size_t)w;
    }
    return 0;
}

/* Read a whole small index file of s into a malloc'd buffer; NULL when
 * it is missing or unreadable. */
static uint8_t *slurp(const floe_segment_t *s, const char *ext, size_t *n)
{
    int fd = open_index(s, ext, O_RDONLY, NULL);
    if (fd < 0) return NULL;
    struct stat st;
    uint8_t *p = NULL;
    if (fstat(fd, &st) == 0 && st.st_size >= 0 && st.st_size <= (1 << 30)) {
        *n = (size_t)st.st_size;
        p = malloc(*n ? *n : 1);
        if (p && *n && pread_full(fd, p, *n, 0) != 0) {
            free(p);
            p = NULL;
        }
    }
    close(fd);
    return p;
}

static int push_idx(floe_segment_t *s, uint32_t rel, uint32_t pos)
{
    if (floe_grow(&s->idx, &s->capidx, s->nidx + 1, sizeof *s->idx) != 0) return -1;
    s->idx[s->nidx++] = (floe_idx_entry_t){rel, pos};
    return 0;
}

static int push_tidx(floe_segment_t *s, int64_t ts, uint32_t rel)
{
    if (floe_grow(&s->tidx, &s->captidx, s->ntidx + 1, sizeof *s->tidx) != 0) return -1;
    s->tidx[s->ntidx++] = (floe_tidx_entry_t){ts, rel};
    return 0;
}

/* Entry accessors: a sealed segment's indexes are the mapped files
 * (big-endian entries, paged in on use and evictable, so idle memory does
 * not grow with the data); the active one's are arrays in memory. */
static inline uint32_t idx_rel(const floe_segment_t *s, size_t i)
{
    return s->map_idx ? floe_rd_be32(s->map_idx + i * IDX_ENTRY) : s->idx[i].rel;
}
static inline uint32_t idx_pos(const floe_segment_t *s, size_t i)
{
    return s->map_idx ? floe_rd_be32(s->map_idx + i * IDX_ENTRY + 4) : s->idx[i].pos;
}
static inline int64_t tidx_ts(const floe_segment_t *s, size_t i)
{
    return s->map_tidx ? (int64_t)floe_rd_be64(s->map_tidx + i * TIDX_ENTRY) : s->tidx[i].ts;
}
static inline uint32_t tidx_rel(const floe_segment_t *s, size_t i)
{
    return s->map_tidx ? floe_rd_be32(s->map_tidx + i * TIDX_ENTRY + 8) : s->tidx[i].rel;
}

static void unmap_indexes(floe_segment_t *s)
{
    if (s->map_idx) munmap(s->map_idx, s->nidx * IDX_ENTRY);
    if (s->map_tidx) munmap(s->map_tidx, s->ntidx * TIDX_ENTRY);
    s->map_idx = s->map_tidx = NULL;
}

void floe_segment_map_indexes(floe_segment_t *s)
{
    if (s->map_idx || s->map_tidx || s->idx_written != s->nidx || s->tidx_written != s->ntidx)
        return;
    /* a mapping outlives its descriptor: the files are open only here */
    uint8_t *mi = NULL, *mt = NULL;
    if (s->nidx) {
        int fd = open_index(s, "index", O_RDONLY, NULL);
        if (fd < 0) return;
        mi = mmap(NULL, s->nidx * IDX_ENTRY, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (mi == MAP_FAILED) return;
    }
    if (s->ntidx) {
        int fd = open_index(s, "timeindex", O_RDONLY, NULL);
        mt = fd < 0 ? MAP_FAILED : mmap(NULL, s->ntidx * TIDX_ENTRY, PROT_READ, MAP_SHARED, fd, 0);
        if (fd >= 0) close(fd);
        if (mt == MAP_FAILED) {
            if (mi) munmap(mi, s->nidx * IDX_ENTRY);
            return;
        }
    }
    s->map_idx = mi;
    s->map_tidx = mt;
    /* the arrays go; nidx/ntidx now count the mapped entries */
    free(s->idx);
    free(s->tidx);
    s->idx = NULL;
    s->tidx = NULL;
    s->capidx = s->captidx = 0;
}

int floe_segment_load_indexes(floe_segment_t *s, int64_t next_base)
{
    size_t n, tn;
    uint8_t *p = slurp(s, "index", &n);
    if (!p) return -1;
    uint8_t *tp = slurp(s, "timeindex", &tn);
    if (!tp) {
        free(p);
        return -1;
    }
    int rc = -1;
    int fd = floe_fdc_get(&s->log, NULL);
    if (fd < 0) {
        free(p);
        free(tp);
        return -1;
    }
    unmap_indexes(s);
    s->nidx = s->ntidx = 0;
    if (n % IDX_ENTRY || tn % TIDX_ENTRY) goto out;
    if (next_base < s->base || (uint64_t)(next_base - s->base) > UINT32_MAX + 1ull) goto out;
    /* a non-empty segment always gets a time-index entry when sealed,
     * unless none of its records carries a timestamp */
    for (size_t i = 0; i < n; i += IDX_ENTRY) {
        uint32_t rel = floe_rd_be32(p + i), pos = floe_rd_be32(p + i + 4);
        if (pos >= s->size || (int64_t)rel >= next_base - s->base) goto out;
        if (s->nidx && (rel <= idx_rel(s, s->nidx - 1) || pos <= idx_pos(s, s->nidx - 1))) goto out;
        if (push_idx(s, rel, pos) != 0) goto out;
    }
    for (size_t i = 0; i < tn; i += TIDX_ENTRY) {
        int64_t ts = (int64_t)floe_rd_be64(tp + i);
        uint32_t rel = floe_rd_be32(tp + i + 8);
        if ((int64_t)rel >= next_base - s->base) goto out;
        if (s->ntidx && (ts <= tidx_ts(s, s->ntidx - 1) || rel < tidx_rel(s, s->ntidx - 1)))
            goto out;
        if (push_tidx(s, ts, rel) != 0) goto out;
    }
    /* a non-empty sealed segment has a time-index entry (sealing adds
     * one), unless none of its records has a timestamp: rebuilding then is
     * merely slower.  An empty offset index is fine (a segment smaller
     * than the index interval has none); the walk below then covers the
     * whole segment. */
    if (s->size > 0 && s->ntidx == 0) goto out;
    if (s->nidx) {
        /* the last entry must name a real batch at its position */
        uint32_t erel = s->idx[s->nidx - 1].rel, epos = s->idx[s->nidx - 1].pos;
        uint8_t hb[FLOE_BATCH_HDR_SIZE];
        floe_batch_hdr_t h;
        if (pread_full(fd, hb, sizeof hb, epos) != 0) goto out;
        if (floe_batch_decode_hdr(hb, sizeof hb, &h, NULL) != 0) goto out;
        if (h.base_offset != s->base + erel || epos + floe_batch_size(&h) > s->size) goto out;
    }
    if (s->size > 0) {
        /* the batches after the last entry (at most about one index
         * interval) chain exactly to the end of the file, with rising
         * offsets below the next segment's base: a cheap check that the
         * sealed file was not cut or overwritten at its tail */
        uint64_t pos = s->nidx ? s->idx[s->nidx - 1].pos : 0;
        int64_t prev_last = s->base - 1;
        uint8_t hb[FLOE_BATCH_HDR_SIZE];
        floe_batch_hdr_t h;
        while (pos < s->size) {
            if (pread_full(fd, hb, sizeof hb, pos) != 0) goto out;
            if (floe_batch_decode_hdr(hb, sizeof hb, &h, NULL) != 0) goto out;
            if (h.base_offset <= prev_last || !records_ok(&h) || h.last_offset_delta < 0 ||
                floe_batch_last_offset(&h) < h.base_offset ||
                floe_batch_last_offset(&h) >= next_base || floe_batch_size(&h) > s->size - pos)
                goto out;
            prev_last = floe_batch_last_offset(&h);
            pos += floe_batch_size(&h);
        }
    }
    s->next = next_base;
    s->idx_written = s->nidx;
    s->tidx_written = s->ntidx;
    if (s->ntidx) {
        s->max_ts = s->tidx[s->ntidx - 1].ts;
        s->max_ts_off = s->base + s->tidx[s->ntidx - 1].rel;
    } else {
        s->max_ts = -1;
        s->max_ts_off = s->base;
    }
    rc = 0;
out:
    floe_fdc_put(&s->log);
    if (rc != 0) s->nidx = s->ntidx = 0;
    free(p);
    free(tp);
    return rc;
}

/* In-memory part of indexing one batch at pos.  Returns bit 1 when an
 * offset-index entry was added, bit 2 for a time-index entry, -1 on OOM. */
static int index_mem(floe_segment_t *s, const floe_batch_hdr_t *h, uint64_t pos, uint32_t interval)
{
    int added = 0;
    int64_t newmax = h->max_timestamp > s->max_ts ? h->max_timestamp : s->max_ts;
    uint32_t rel = (uint32_t)(h->base_offset - s->base);
    bool oom = false;
    if (s->since_index >= interval && pos > 0) {
        if (push_idx(s, rel, (uint32_t)pos) == 0) added |= 1;
        else
            oom = true;
        if (!oom && newmax >= 0 && (s->ntidx == 0 || newmax > s->tidx[s->ntidx - 1].ts)) {
            if (push_tidx(s, newmax, rel) == 0) added |= 2;
            else
                oom = true;
        }
        s->since_index = 0;
    }
    /* the segment's own bookkeeping is kept even when an entry could not
     * be added (a missing entry only lengthens a scan) */
    s->since_index += floe_batch_size(h);
    if (h->max_timestamp > s->max_ts) {
        s->max_ts = h->max_timestamp;
        s->max_ts_off = h->base_offset;
    }
    s->next = floe_batch_last_offset(h) + 1;
    return oom ? -1 : added;
}

/* Write index entries [from, n) of one index to its file in one call. */
static int write_entries(floe_segment_t *s, bool time, size_t from)
{
    size_t n = time ? s->ntidx : s->nidx, esz = time ? TIDX_ENTRY : IDX_ENTRY;
    if (from >= n) return 0;
    uint8_t *b = malloc((n - from) * esz);
    if (!b) {
        errno = ENOMEM;
        return -1;
    }
    for (size_t i = from; i < n; i++) {
        uint8_t *e = b + (i - from) * esz;
        if (time) {
            floe_wr_be64(e, (uint64_t)s->tidx[i].ts);
            floe_wr_be32(e + 8, s->tidx[i].rel);
        } else {
            floe_wr_be32(e, s->idx[i].rel);
            floe_wr_be32(e + 4, s->idx[i].pos);
        }
    }
    int fd = open_index(s, time ? "timeindex" : "index", O_WRONLY | O_CREAT, NULL);
    int rc = fd < 0 ? -1 : pwrite_full(fd, b, (n - from) * esz, (uint64_t)from * esz);
    if (fd >= 0 && close(fd) != 0 && rc == 0) rc = -1;
    free(b);
    return rc;
}

int floe_segment_write_indexes(floe_segment_t *s, floe_err_t *err)
{
    if (s->idx_written < s->nidx) {
        if (write_entries(s, false, s->idx_written) != 0)
            return floe_err_errno(err, errno, "write offset index");
        s->idx_written = s->nidx;
        s->idx_dirty = true;
    }
    if (s->tidx_written < s->ntidx) {
        if (write_entries(s, true, s->tidx_written) != 0)
            return floe_err_errno(err, errno, "write time index");
        s->tidx_written = s->ntidx;
        s->idx_dirty = true;
    }
    return 0;
}

int floe_segment_truncate_indexes(floe_segment_t *s, floe_err_t *err)
{
    static const char *const exts[] = {"index", "timeindex"};
    for (int i = 0; i < 2; i++) {
        int fd = open_index(s, exts[i], O_WRONLY | O_CREAT | O_TRUNC, err);
        if (fd < 0) return -1;
        close(fd);
    }
    return 0;
}

int floe_segment_sync(floe_segment_t *s, bool data, bool idx, floe_err_t *err)
{
    if (data) {
        int fd = floe_fdc_get(&s->log, err);
        if (fd < 0) return -1;
        int rc = fdatasync(fd) != 0 ? floe_err_errno(err, errno, s->log.path) : 0;
        floe_fdc_put(&s->log);
        if (rc) return -1;
    }
    static const char *const exts[] = {"index", "timeindex"};
    for (int i = 0; idx && i < 2; i++) {
        int fd = open_index(s, exts[i], O_RDONLY, err);
        if (fd < 0) return -1;
        int rc = fdatasync(fd) != 0 ? floe_err_errno(err, errno, "fsync index") : 0;
        close(fd);
        if (rc) return -1;
    }
    return 0;
}

int floe_segment_index_batch(floe_segment_t *s, const floe_batch_hdr_t *h, uint64_t pos,
                             uint32_t index_interval, floe_err_t *err)
{
    if (index_mem(s, h, pos, index_interval) < 0)
        return floe_err_set(err, FLOE_ENOMEM, "out of memory indexing a segment");
    return 0;
}

int floe_segment_seal_timeindex(floe_segment_t *s, floe_err_t *err)
{
    if (s->max_ts < 0) return 0;
    if (s->ntidx && s->tidx[s->ntidx - 1].ts >= s->max_ts) return 0;
    if (push_tidx(s, s->max_ts, (uint32_t)(s->max_ts_off - s->base)) != 0)
        return floe_err_set(err, FLOE_ENOMEM, "out of memory indexing a segment");
    return 0;
}

/* A read-ahead window over the .log for sequential scans. */
typedef struct window {
    int fd;
    uint64_t fsize;
    floe_buf_t buf;
    uint64_t start; /* file offset of buf.data[0] */
} window_t;

/* Make [pos, pos+need) readable; returns a pointer to it, or NULL at EOF
 * (fewer bytes in the file) or on I/O error (*ioerr set). */
static const uint8_t *win_get(window_t *w, uint64_t pos, size_t need, bool *ioerr)
{
    if (pos + need > w->fsize) return NULL;
    if (pos >= w->start && pos + need <= w->start + w->buf.len)
        return w->buf.data + (pos - w->start);
    size_t want = need > WINDOW ? need : WINDOW;
    if (want > w->fsize - pos) want = (size_t)(w->fsize - pos);
    floe_buf_reset(&w->buf);
    if (floe_buf_reserve(&w->buf, want) != 0) {
        *ioerr = true;
        return NULL;
    }
    int r = pread_full(w->fd, w->buf.data, want, pos);
    if (r != 0) {
        *ioerr = r < 0;
        w->buf.len = 0;
        return NULL;
    }
    w->buf.len = want;
    w->start = pos;
    return w->buf.data;
}

/* Do the index files hold exactly the in-memory entries? */
static bool index_files_match(floe_segment_t *s)
{
    size_t n, tn;
    uint8_t *p = slurp(s, "index", &n);
    uint8_t *tp = p ? slurp(s, "timeindex", &tn) : NULL;
    bool same = p && tp && n == s->nidx * IDX_ENTRY && tn == s->ntidx * TIDX_ENTRY;
    for (size_t i = 0; same && i < s->nidx; i++)
        same = floe_rd_be32(p + i * IDX_ENTRY) == s->idx[i].rel &&
               floe_rd_be32(p + i * IDX_ENTRY + 4) == s->idx[i].pos;
    for (size_t i = 0; same && i < s->ntidx; i++)
        same = (int64_t)floe_rd_be64(tp + i * TIDX_ENTRY) == s->tidx[i].ts &&
               floe_rd_be32(tp + i * TIDX_ENTRY + 8) == s->tidx[i].rel;
    free(p);
    free(tp);
    return same;
}

int floe_segment_recover(floe_segment_t *s, uint32_t index_interval, bool check_crc,
                         floe_segment_batch_cb cb, void *arg, uint64_t *truncated, floe_err_t *err)
{
    int fd = floe_fdc_get(&s->log, err);
    if (fd < 0) return -1;
    int rc = recover_fd(s, fd, index_interval, check_crc, cb, arg, truncated, err);
    floe_fdc_put(&s->log);
    return rc;
}

static int recover_fd(floe_segment_t *s, int fd, uint32_t index_interval, bool check_crc,
                      floe_segment_batch_cb cb, void *arg, uint64_t *truncated, floe_err_t *err)
{
    window_t w = {fd, s->size, FLOE_BUF_INIT, 0};
    unmap_indexes(s);
    s->nidx = s->ntidx = 0;
    s->max_ts = -1;
    s->max_ts_off = s->base;
    s->next = s->base;
    s->since_index = 0;
    s->roll_base_ms = -1;
    uint64_t pos = 0;
    const char *why = NULL;
    bool ioerr = false;
    floe_err_t e; /* outlives the loop: why may point into it */
    while (pos < s->size) {
        const uint8_t *p = win_get(&w, pos, FLOE_BATCH_HDR_SIZE, &ioerr);
        if (!p) {
            why = "partial batch header";
            break;
        }
        floe_batch_hdr_t h;
        if (floe_batch_decode_hdr(p, FLOE_BATCH_HDR_SIZE, &h, &e) != 0) {
            why = e.msg;
            break;
        }
        size_t bsize = floe_batch_size(&h);
        if (pos + bsize > s->size) {
            why = "partial batch";
            break;
        }
        if (check_crc) {
            p = win_get(&w, pos, bsize, &ioerr);
            if (!p) {
                why = "unreadable batch";
                break;
            }
            if (floe_batch_parse_hdr(p, bsize, &h, &e) != 0) {
                why = e.msg;
                break;
            }
        }
        if (h.base_offset < s->next || !records_ok(&h) || h.last_offset_delta < 0 ||
            floe_batch_last_offset(&h) < h.base_offset ||
            (uint64_t)floe_batch_last_offset(&h) - (uint64_t)s->base > UINT32_MAX ||
            pos + bsize > UINT32_MAX) {
            why = "batch offsets out of order";
            break;
        }
        if (index_mem(s, &h, pos, index_interval) < 0) {
            floe_buf_free(&w.buf);
            return floe_err_set(err, FLOE_ENOMEM, "out of memory recovering a segment");
        }
        if (cb && cb(arg, &h) != 0) {
            floe_buf_free(&w.buf);
            return floe_err_set(err, FLOE_ENOMEM, "out of memory recovering a segment");
        }
        pos += bsize;
    }
    floe_buf_free(&w.buf);
    if (ioerr) return floe_err_errno(err, errno ? errno : EIO, "read segment");
    *truncated = s->size - pos;
    if (pos < s->size) {
        FLOE_WARN("log: segment %020" PRId64 ": truncating %" PRIu64 " bytes at position %" PRIu64
                  " (%s)",
                  s->base, s->size - pos, pos, why ? why : "?");
        if (ftruncate(fd, (off_t)pos) != 0) return floe_err_errno(err, errno, "truncate segment");
        s->size = pos;
        s->dirty = true;
    }
    /* rewrite the index files from memory unless they already match */
    if (!index_files_match(s)) {
        if (floe_segment_truncate_indexes(s, err) != 0) return -1;
        s->idx_written = s->tidx_written = 0;
        if (floe_segment_write_indexes(s, err) != 0) return -1;
    }
    s->idx_written = s->nidx;
    s->tidx_written = s->ntidx;
    return 0;
}

int floe_segment_walk(floe_segment_t *s, uint64_t from_pos, uint64_t limit,
                      floe_segment_batch_cb cb, void *arg, floe_err_t *err)
{
    int fd = floe_fdc_get(&s->log, err);
    if (fd < 0) return -1;
    window_t w = {fd, limit, FLOE_BUF_INIT, 0};
    uint64_t pos = from_pos;
    int rc = 0;
    bool ioerr = false;
    while (pos < limit) {
        const uint8_t *p = win_get(&w, pos, FLOE_BATCH_HDR_SIZE, &ioerr);
        floe_batch_hdr_t h;
        if (!p || floe_batch_decode_hdr(p, FLOE_BATCH_HDR_SIZE, &h, err) != 0) {
            rc = ioerr
                     ? floe_err_errno(err, errno ? errno : EIO, "read segment")
                     : floe_err_set(err, FLOE_ECORRUPT,
                                    "segment %020" PRId64 ": bad batch at %" PRIu64, s->base, pos);
            break;
        }
        if (cb(arg, &h) != 0) {
            rc = floe_err_set(err, FLOE_ENOMEM, "out of memory walking a segment");
            break;
        }
        pos += floe_batch_size(&h);
    }
    floe_buf_free(&w.buf);
    floe_fdc_put(&s->log);
    return rc;
}

uint64_t floe_segment_lookup_pos(const floe_segment_t *s, int64_t offset)
{
    if (offset <= s->base || s->nidx == 0) return 0;
    uint64_t rel = (uint64_t)(offset - s->base);
    size_t lo = 0, hi = s->nidx; /* first entry with rel > target */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (idx_rel(s, mid) <= rel) lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? idx_pos(s, lo - 1) : 0;
}

int64_t floe_segment_lookup_time(const floe_segment_t *s, int64_t ts)
{
    size_t lo = 0, hi = s->ntidx; /* first entry with ts >= target */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (tidx_ts(s, mid) < ts) lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? s->base + tidx_rel(s, lo - 1) : s->base;
}

int floe_segment_find(int fd, uint64_t start, int64_t offset, uint64_t limit, uint64_t *pos,
                      floe_batch_hdr_t *h, floe_err_t *err)
{
    uint64_t p = start;
    uint8_t hb[FLOE_BATCH_HDR_SIZE];
    while (p + FLOE_BATCH_HDR_SIZE <= limit) {
        int r = pread_full(fd, hb, sizeof hb, p);
        if (r < 0) return floe_err_errno(err, errno, "read segment");
        if (r > 0) return 1;
        if (floe_batch_decode_hdr(hb, sizeof hb, h, err) != 0) return -1;
        if (floe_batch_last_offset(h) >= offset) {
            *pos = p;
            return 0;
        }
        p += floe_batch_size(h);
    }
    return 1;
}
