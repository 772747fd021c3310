/* The key index of an upsert table in position delete mode: for every live
 * key, the data file and row position of its row, as of one snapshot of
 * the table.  A commit looks up the keys it replaces or deletes (their
 * positions become a position delete file) and records where their new
 * rows went.
 *
 * Kept in memory and saved after each commit to a file under the data
 * dir, checksummed (CRC32C): magic "FLKIDX1\n", the table's uuid and the
 * snapshot id it reflects, the data file paths, then (key, path number,
 * position) per key, in varints.  A file that is missing, damaged or of
 * another snapshot is not used: the index is rebuilt from the table.
 *
 * Memory is not bounded: a 32-byte slot per key in a table 3/8 to 3/4
 * full, plus the key's bytes, plus each data file's path once; measured
 * 84 bytes per key for 1M long ids (tests/unit/test_table_upsert.c).
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

/* The table (uuid, copied) and snapshot the index reflects (-1: none). */
int floe_tkeyidx_set_state(floe_tkeyidx_t *x, const char *uuid, int64_t snapshot_id);
int64_t floe_tkeyidx_snapshot(const floe_tkeyidx_t *x);
const char *floe_tkeyidx_uuid(const floe_tkeyidx_t *x);

/* Key key[0..len) (copied) now lives at (path, pos) (path copied once).
 * With old non-NULL, *old gets where it was.  1 when the key was there,
 * 0 when new, -1 on ENOMEM. */
int floe_tkeyidx_put(floe_tkeyidx_t *x, const void *key, size_t len, const char *path, int64_t pos,
                     floe_tkeyidx_loc_t *old);
/* Where key is: 1 with *loc, 0 when absent. */
int floe_tkeyidx_get(const floe_tkeyidx_t *x, const void *key, size_t len, floe_tkeyidx_loc_t *loc);
/* Remove key: 1 with *old (may be NULL) when it was there, 0 when not. */
int floe_tkeyidx_del(floe_tkeyidx_t *x, const void *key, size_t len, floe_tkeyidx_loc_t *old);
/* Live keys; bytes of memory held. */
size_t floe_tkeyidx_count(const floe_tkeyidx_t *x);
size_t floe_tkeyidx_mem(const floe_tkeyidx_t *x);

/* The file's bytes, appended to out.  0 or -1 (ENOMEM). */
int floe_tkeyidx_encode(const floe_tkeyidx_t *x, floe_buf_t *out);
/* An index from a file's bytes p[0..n) (untrusted).  NULL with *err:
 * FLOE_ECORRUPT when damaged, FLOE_ENOMEM. */
floe_tkeyidx_t *floe_tkeyidx_decode(const uint8_t *p, size_t n, floe_err_t *err);

/* Save to path atomically (durable); load from path (NULL with *err:
 * FLOE_ENOENT when absent, FLOE_ECORRUPT when damaged). */
int floe_tkeyidx_save(const floe_tkeyidx_t *x, const char *path, floe_err_t *err);
floe_tkeyidx_t *floe_tkeyidx_load(const char *path, floe_err_t *err);

#endif
