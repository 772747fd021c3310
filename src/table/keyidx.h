/* The key index of an upsert table in position delete mode: for every live
 * key, the data file and row position of its row, as of one snapshot of
 * the table.  A commit looks up the keys it replaces or deletes (their
 * positions become a position delete file) and records where their new
 * rows went.
 *
 * Memory is bounded (floe_tkeyidx_set_bound): below the bound every key
 * is in a hash table in memory (a 32-byte slot per key, 3/8 to 3/4 full,
 * plus the key's bytes; 84 bytes per key for long ids); past it the keys
 * move to a file of 4 KiB hash-bucket pages read through a page cache of
 * what the bound leaves (about 16 bytes of disk per long id; keys longer
 * than 1 KiB and each data file's path stay in memory).  Without a bound
 * nothing is bounded.
 *
 * Saved after each commit, checksummed (CRC32C), naming the table's uuid
 * and the snapshot it reflects.  In memory: one file written atomically,
 * magic "FLKIDX1\n", the data file paths, then (key, path number,
 * position) per key, in varints.  Paged: the page file itself, every page
 * with its own checksum, its header saying clean only once a save made
 * every page durable and dirty before any page changes after that.  A file
 * that is missing, damaged, dirty or of another snapshot is not used: the
 * index is rebuilt from the table.
 *
 * Not thread-safe: the engine thread owns it. */
#ifndef FLOE_TABLE_KEYIDX_H
#define FLOE_TABLE_KEYIDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

typedef struct floe_tkeyidx floe_tkeyidx_t;

/* Where a key's row is: path borrowed from the index (valid until it is
 * reset or freed). */
typedef struct floe_tkeyidx_loc {
    const char *path;
    int64_t pos;
} floe_tkeyidx_loc_t;

/* An empty index.  Caller frees with floe_tkeyidx_free.  NULL on ENOMEM. */
floe_tkeyidx_t *floe_tkeyidx_new(void);
void floe_tkeyidx_free(floe_tkeyidx_t *x);
/* Forget every key and path. */
void floe_tkeyidx_reset(floe_tkeyidx_t *x);

/* Hold at most mem_bytes of memory (0: no bound): beyond it the keys go
 * to a new file at path (copied; replaced if there), which
 * floe_tkeyidx_save to the same path then saves in place.  A paged index
 * (or one loaded from a paged file) only resizes its cache.  0, or -1
 * with *err (FLOE_EIO, FLOE_ENOMEM) when the move to disk failed. */
int floe_tkeyidx_set_bound(floe_tkeyidx_t *x, size_t mem_bytes, const char *path, floe_err_t *err);

/* The table (uuid, copied) and snapshot the index reflects (-1: none). */
int floe_tkeyidx_set_state(floe_tkeyidx_t *x, const char *uuid, int64_t snapshot_id);
int64_t floe_tkeyidx_snapshot(const floe_tkeyidx_t *x);
const char *floe_tkeyidx_uuid(const floe_tkeyidx_t *x);

/* Key key[0..len) (copied) now lives at (path, pos) (path copied once).
 * With old non-NULL, *old gets where it was.  1 when the key was there,
 * 0 when new, -1 on ENOMEM. */
int floe_tkeyidx_put(floe_tkeyidx_t *x, const void *key, size_t len, const char *path, int64_t pos,
                     floe_tkeyidx_loc_t *old);
/* Where key is: 1 with *loc, 0 when absent; -1 (put, get, del) also on
 * an I/O error or a damaged page of a paged index, which the caller then
 * drops. */
int floe_tkeyidx_get(const floe_tkeyidx_t *x, const void *key, size_t len, floe_tkeyidx_loc_t *loc);
/* Remove key: 1 with *old (may be NULL) when it was there, 0 when not. */
int floe_tkeyidx_del(floe_tkeyidx_t *x, const void *key, size_t len, floe_tkeyidx_loc_t *old);
/* Where key sits in x: changes of many keys taken in this order (a stable
 * sort) touch each page of a paged index once, not at random.  0 for
 * every key of an index in memory. */
uint64_t floe_tkeyidx_order(const floe_tkeyidx_t *x, const void *key, size_t len);
/* Live keys; bytes of memory held; bytes of its page file (0 in memory). */
size_t floe_tkeyidx_count(const floe_tkeyidx_t *x);
size_t floe_tkeyidx_mem(const floe_tkeyidx_t *x);
size_t floe_tkeyidx_disk(const floe_tkeyidx_t *x);

/* The in-memory file's bytes of every key, appended to out.  0 or -1
 * (ENOMEM, or a paged index's I/O error). */
int floe_tkeyidx_encode(const floe_tkeyidx_t *x, floe_buf_t *out);
/* An index from a file's bytes p[0..n) (untrusted).  NULL with *err:
 * FLOE_ECORRUPT when damaged, FLOE_ENOMEM. */
floe_tkeyidx_t *floe_tkeyidx_decode(const uint8_t *p, size_t n, floe_err_t *err);

/* Save to path durably: atomically as the in-memory file, or, for a paged
 * index and its own path, in place.  Load from path, either kind (NULL
 * with *err: FLOE_ENOENT when absent, FLOE_ECORRUPT when damaged or
 * dirty); a paged one is used in place, its cache as for a 64 MiB bound
 * until floe_tkeyidx_set_bound. */
int floe_tkeyidx_save(const floe_tkeyidx_t *x, const char *path, floe_err_t *err);
floe_tkeyidx_t *floe_tkeyidx_load(const char *path, floe_err_t *err);

#endif
