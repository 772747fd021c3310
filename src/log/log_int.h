/* Internals of src/log shared by log.c, segment.c and producer_state.c.
 * Not for other modules. */
#ifndef FLOE_LOG_LOG_INT_H
#define FLOE_LOG_LOG_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log/batch.h"
#include "log/log.h"
#include "util/buf.h"
#include "util/err.h"

/* ---- idempotent producer state ---- */

#define FLOE_PSTATE_BATCHES 5 /* batches remembered per producer, as Kafka */

typedef struct floe_pbatch {
    int32_t first_seq, last_seq;
    int64_t first_off, last_off;
} floe_pbatch_t;

typedef struct floe_pentry {
    int64_t pid;
    int16_t epoch;
    int64_t last_ms; /* time of its newest batch (for expiry) */
    uint8_t n;       /* batches held (<= FLOE_PSTATE_BATCHES) */
    uint8_t head;    /* index of the oldest */
    floe_pbatch_t b[FLOE_PSTATE_BATCHES];
    struct floe_pentry *next; /* hash chain */
} floe_pentry_t;

typedef struct floe_pstate {
    floe_pentry_t **buckets;
    size_t nbuckets;
    size_t count;
} floe_pstate_t;

void floe_pstate_init(floe_pstate_t *ps);
void floe_pstate_free(floe_pstate_t *ps);
void floe_pstate_clear(floe_pstate_t *ps);
floe_pentry_t *floe_pstate_find(const floe_pstate_t *ps, int64_t pid);

/* Check an incoming idempotent batch (h->producer_id >= 0).  Returns 0
 * when it may be appended, 1 when it duplicates a remembered batch (*dup
 * filled with its original offsets), -1 when rejected (*kerr = 45 or 47,
 * err says why). */
int floe_pstate_check(const floe_pstate_t *ps, const floe_batch_hdr_t *h, floe_pbatch_t *dup,
                      int16_t *kerr, floe_err_t *err);
/* Remember a batch that is now in the log (h carries its real offsets),
 * appended at now_ms (wall clock; the batch's max timestamp when rebuilt
 * from the log).  Batches without a producer id or sequence are ignored.
 * -1 on OOM. */
int floe_pstate_update(floe_pstate_t *ps, const floe_batch_hdr_t *h, int64_t now_ms);
/* Forget producers whose newest batch is older than before_ms (Kafka's
 * producer.id.expiration.ms); returns how many. */
size_t floe_pstate_expire(floe_pstate_t *ps, int64_t before_ms);

/* Snapshot: the state as of log offset `upto` (every batch below it is
 * included), written atomically (floe_fs_write_atomic when durable, else
 * floe_fs_write_nosync: the snapshot has a CRC and is rebuilt from the
 * log when damaged).
 * Load returns -1 when the file is missing or corrupt (state cleared). */
int floe_pstate_save(const floe_pstate_t *ps, const char *path, int64_t upto, bool durable,
                     floe_err_t *err);
int floe_pstate_load(floe_pstate_t *ps, const char *path, int64_t *upto, floe_err_t *err);

/* ---- open descriptors (fdcache.c) ---- */

/* A file kept open through the process-wide descriptor cache: closed when
 * it is the least recently used beyond floe_log_max_open_files() and
 * nobody holds it, opened again (O_RDWR) on its next use.  Every use of
 * the fd sits between floe_fdc_get and floe_fdc_put, so a closed
 * descriptor is never used.  The fields are the cache's (under its lock). */
typedef struct floe_fdc {
    struct floe_fdc *prev, *next; /* LRU list, while open */
    char *path;                   /* owned */
    int fd;                       /* -1 while closed */
    int pins;                     /* users between get and put */
} floe_fdc_t;

/* Closed entry for path (copied).  0, or -1 when out of memory. */
int floe_fdc_init(floe_fdc_t *c, const char *path, floe_err_t *err);
/* Hand a freshly opened fd of c's file to the cache (c closed before). */
void floe_fdc_adopt(floe_fdc_t *c, int fd);
/* The fd of c's file, opened when it is not, held until floe_fdc_put.
 * -1 with *err (the path and errno) when it cannot be opened. */
int floe_fdc_get(floe_fdc_t *c, floe_err_t *err);
void floe_fdc_put(floe_fdc_t *c);
/* Close the fd if open and free the path; nobody may hold it. */
void floe_fdc_close(floe_fdc_t *c);

/* ---- segments ---- */

typedef struct floe_idx_entry {
    uint32_t rel; /* batch base offset - segment base */
    uint32_t pos; /* byte position of the batch in the .log */
} floe_idx_entry_t;

typedef struct floe_tidx_entry {
    int64_t ts;   /* largest timestamp up to and including this batch */
    uint32_t rel; /* base offset of that batch - segment base */
} floe_tidx_entry_t;

typedef struct floe_segment {
    int64_t base;          /* base offset (file name) */
    int64_t next;          /* offset after the last batch (base if empty) */
    uint64_t size;         /* bytes of whole batches in the .log */
    floe_fdc_t log;        /* the .log; the index files are opened when read or
                       written, and a sealed segment's are mapped */
    int64_t max_ts;        /* newest timestamp in the segment, -1 if none */
    int64_t max_ts_off;    /* base offset of the batch holding max_ts */
    int64_t roll_base_ms;  /* age origin for segment.ms, -1 if empty */
    uint64_t since_index;  /* bytes appended since the last index entry */
    floe_idx_entry_t *idx; /* in memory (active segment), or NULL when */
    size_t nidx, capidx;   /* the file is mapped (sealed segment) */
    floe_tidx_entry_t *tidx;
    size_t ntidx, captidx;
    uint8_t *map_idx, *map_tidx;      /* mapped index files of a sealed segment */
    int refs;                         /* readers / flushers holding it */
    bool deleted;                     /* unlinked; freed when refs drops to 0 */
    bool held;                        /* deleted while in use: the .log stays
                                         open (floe_fdc_get) until then */
    size_t idx_written, tidx_written; /* entries already in the files */
    bool dirty;                       /* .log written since the last fsync */
    bool idx_dirty;                   /* index files written since the last fsync */
} floe_segment_t;

/* Open (create when create) the .log of the segment with base offset
 * `base` in dir and learn its size; the descriptor goes to the cache.
 * Index files are neither opened nor loaded.  *out is the caller's
 * (floe_segment_free). */
int floe_segment_open(const char *dir, int64_t base, bool create, floe_segment_t **out,
                      floe_err_t *err);
/* Close the .log if cached, unmap, free (does not unlink).  Nobody may be
 * using it (refs 0). */
void floe_segment_free(floe_segment_t *s);
/* Unlink the segment's files. */
void floe_segment_unlink(const char *dir, const floe_segment_t *s);
/* Path of one of the segment's files ("log", "index", "timeindex") into
 * out; FLOE_ERANGE when it does not fit (floe_path_fmt). */
int floe_segment_path(char *out, size_t cap, const char *dir, int64_t base, const char *ext,
                      floe_err_t *err);

/* Load .index/.timeindex and check them against the .log (size, order,
 * ranges, the last entry naming a real batch).  next_base: base of the
 * following segment (its end).  Returns 0 when usable; -1 when missing,
 * unreadable or inconsistent (the caller rebuilds). */
int floe_segment_load_indexes(floe_segment_t *s, int64_t next_base);

/* Scan the .log from the start: every batch header (and its CRC when
 * check_crc), rebuild the in-memory indexes and max timestamp, call cb
 * for each batch, and truncate the file after the last good batch (a torn
 * or corrupt tail).  Rewrites both index files.  Returns 0, or -1 on I/O
 * errors (err). *truncated receives the bytes cut off. */
typedef int (*floe_segment_batch_cb)(void *arg, const floe_batch_hdr_t *h);
int floe_segment_recover(floe_segment_t *s, uint32_t index_interval, bool check_crc,
                         floe_segment_batch_cb cb, void *arg, uint64_t *truncated, floe_err_t *err);

/* Walk the batch headers of [from_pos, limit) calling cb (no CRC). */
int floe_segment_walk(floe_segment_t *s, uint64_t from_pos, uint64_t limit,
                      floe_segment_batch_cb cb, void *arg, floe_err_t *err);

/* Record a batch just appended at position pos in the in-memory indexes
 * per the index interval.  The files get the entries from
 * floe_segment_write_indexes, called when the segment is sealed (roll) and
 * at close: the active segment's indexes are rebuilt by recovery anyway,
 * so appends cost one write() and no index I/O. */
int floe_segment_index_batch(floe_segment_t *s, const floe_batch_hdr_t *h, uint64_t pos,
                             uint32_t index_interval, floe_err_t *err);
/* Add a final time-index entry for max_ts when the last one is older
 * (at roll and close, so a closed segment's max is in its file). */
int floe_segment_seal_timeindex(floe_segment_t *s, floe_err_t *err);
/* Write the index entries not yet in the files (marks idx_dirty). */
int floe_segment_write_indexes(floe_segment_t *s, floe_err_t *err);
/* Empty both index files (creating them), as for a new segment. */
int floe_segment_truncate_indexes(floe_segment_t *s, floe_err_t *err);
/* fdatasync the .log (data) and/or both index files (idx). */
int floe_segment_sync(floe_segment_t *s, bool data, bool idx, floe_err_t *err);
/* A sealed segment whose index files hold all its entries: map the files
 * and free the arrays (no-op otherwise, or when mmap fails). */
void floe_segment_map_indexes(floe_segment_t *s);

/* Position of the index entry at or below offset (0 when none). */
uint64_t floe_segment_lookup_pos(const floe_segment_t *s, int64_t offset);
/* Offset to start a timestamp search from: the batch after which no
 * earlier batch can hold a timestamp >= ts. */
int64_t floe_segment_lookup_time(const floe_segment_t *s, int64_t ts);

/* Find the position of the batch that contains offset in a segment's
 * .log (fd, from floe_fdc_get(&s->log)), walking headers from position
 * start (from floe_segment_lookup_pos, taken under the log lock: the index
 * arrays grow under appends) up to limit.  Returns 0 and fills pos and h,
 * 1 when no batch below limit contains it, -1 on I/O error or a bad
 * header. */
int floe_segment_find(int fd, uint64_t start, int64_t offset, uint64_t limit, uint64_t *pos,
                      floe_batch_hdr_t *h, floe_err_t *err);

/* ---- the log ---- */

struct floe_log {
    pthread_mutex_t mu;
    pthread_mutex_t flush_mu; /* serializes floe_log_flush; taken before mu */
    char *dir;
    floe_log_config_t cfg;
    floe_segment_t **segs; /* ascending base; last is active */
    size_t nsegs, capsegs;
    int64_t log_start;
    int64_t durable; /* next offset known on disk */
    int64_t unflushed_msgs;
    int64_t last_flush_ms;
    bool dir_dirty; /* a file was created or removed */
    floe_pstate_t ps;
    floe_buf_t scratch;      /* decompression on the append path */
    int64_t (*now_ms)(void); /* wall clock, replaceable for tests */
    size_t rebuilt;          /* sealed segments rebuilt at open (tests) */
    uint64_t held_bytes;     /* kept for a floor at the last retention run */
    int64_t clean_upto;      /* compaction: offsets below it are clean */
    int64_t clean_horizon;   /* earliest delete horizon of a kept tombstone,
                                -1 none (cleaner.c) */
};

/* ---- compaction (cleaner.c) ---- */

/* At open, before the segments are listed: remove a half-written
 * "<base>.log.cleaned" and finish a swap that a crash interrupted (a
 * "<base>.log.<end>.swap" replaces the segments with base in [base, end)).
 * 0, or -1 with *err. */
int floe_cleaner_recover(const char *dir, floe_err_t *err);
/* Read l->clean_upto and l->clean_horizon from the cleaner checkpoint
 * (0 and -1 when there is none). */
void floe_cleaner_load_checkpoint(floe_log_t *l);

/* Drop a pin (refs) taken on a segment; frees it when it was deleted
 * meanwhile.  Caller holds l->mu. */
void floe_log_unpin(floe_log_t *l, floe_segment_t *s);

/* Tests: replace the wall clock used for time-based roll and flush. */
void floe_log_set_clock(floe_log_t *l, int64_t (*now_ms)(void));

#endif
