/* The `floe.offsets` snapshot summary property: the next offset to read of
 * every source partition a table covers, as a JSON object {"0":1234,...}.
 * It is the truth on restart (design.md, invariant 2). */
#ifndef FLOE_TABLE_OFFSETS_H
#define FLOE_TABLE_OFFSETS_H

#include <stddef.h>
#include <stdint.h>

#include "iceberg/metadata.h"
#include "util/buf.h"
#include "util/err.h"

#define FLOE_OFFSETS_KEY "floe.offsets"
#define FLOE_COMMIT_ID_KEY "floe.commit-id"

/* offsets[p] for p in [0, n); -1 means "nothing committed" and is left out.
 * Appends the JSON text to out.  0 or -1 (ENOMEM). */
int floe_offsets_encode(const int64_t *offsets, size_t n, floe_buf_t *out);

/* Parse text into offsets[0..cap), filling -1 where a partition is absent;
 * *n gets 1 + the highest partition present (0 if none).  Partitions at or
 * past cap, negative offsets and malformed text are refused. */
int floe_offsets_decode(const char *text, int64_t *offsets, size_t cap, size_t *n, floe_err_t *err);

/* The latest snapshot of md's current chain that carries floe.offsets
 * (borrowed from md), or NULL when none does: snapshots of other writers
 * that lack it (a compaction's) are walked past. */
const floe_ice_snapshot_t *floe_offsets_snapshot(const floe_ice_metadata_t *md);

/* The offsets md (borrowed) has committed for a topic of nparts
 * partitions, any number of them: out[p] for p in [0, nparts), -1 where
 * nothing is committed (all -1 when no snapshot carries floe.offsets).
 * Entries of partitions at or past nparts (a topic recreated with fewer
 * partitions) are checked and left out.  0, or -1 with *err
 * (FLOE_ECORRUPT: a malformed property). */
int floe_offsets_read(const floe_ice_metadata_t *md, int64_t *out, size_t nparts, floe_err_t *err);

#endif
