/* The delete files of an upsert table's commit (table.write.mode=upsert):
 * from the keys the pending files touched (floe_tout_t.uplog), either an
 * equality delete file of those keys on the id columns, global (of an
 * unpartitioned spec: it applies to every partition, wherever a key's old
 * row lives), or (position mode) position delete files naming the rows
 * those keys had, found in the table's key index (keyidx.h), one per
 * partition of the data files holding them (the spec scopes position
 * deletes by partition); the index then learns the new rows.
 *
 * The key index reflects one snapshot of the table.  Before a position
 * commit it is loaded from its file under the state dir, or rebuilt by
 * reading the table, when it does not reflect the table's current
 * snapshot; the commit then requires that the table is still at that
 * snapshot (a commit of another writer in between fails it: the table
 * resets, rebuilds the index and reads the records again). */
#ifndef FLOE_TABLE_UPSERT_WRITE_H
#define FLOE_TABLE_UPSERT_WRITE_H

#include "table/ttable.h"

/* Write o's delete files for its uplog and add them to o's pending files;
 * *require_snapshot gets the snapshot id the commit must build on (-2:
 * any; -1: a table without a snapshot).  0 with nothing to do (no uplog);
 * 0, or -1 with *err (then the index is dropped, to be rebuilt). */
int floe_tupsert_prepare(floe_ttable_t *t, floe_tout_t *o, int64_t *require_snapshot,
                         floe_err_t *err);
/* The commit landed as snapshot snap of the table with uuid (borrowed):
 * the index reflects it now; it is saved (a failure to save is logged:
 * the index is rebuilt at the next start).  snap < 0: the snapshot id is
 * not known, the index is dropped. */
void floe_tupsert_committed(floe_ttable_t *t, const char *uuid, int64_t snap);
/* The commit failed: the index (already updated for it) is dropped. */
void floe_tupsert_failed(floe_ttable_t *t);

/* Where t's key index lives: <state_dir>/<ns>.<name>.keyidx, into buf.
 * 0, or -1 (no state dir, or too long). */
int floe_tupsert_index_path(const floe_ttable_t *t, char *buf, size_t size);

#endif
